"""The `response` of an AdmissionReview: denials shaped as the API server's own errors, and warnings
kept within what the API server passes on.

Denials for invalid objects follow apimachinery's `errors.NewInvalid`: code 422, reason `Invalid`,
`details {group, kind, name, causes[{reason, message, field}]}` and the message
`<Kind>.<group> "<name>" is invalid: <field>: <detail>` (several errors: `[a, b]`, repeats once), so
kubectl prints `The <Kind> "<name>" is invalid:` with one `field: detail` line per cause.

Warnings (API server, `warning.go`): texts with control characters or invalid UTF-8 are dropped and
identical texts are sent once; while all of them total at most 4,096 characters nothing is cut, beyond
that each is cut to 256 characters and the rest dropped. So: texts are escaped onto one line, repeats
removed, and when more than `max_count` or more than `max_total` characters remain, each is cut to 256
characters and the list ends with "N more warnings not shown" within both limits.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from typing import Any

from webhook.model.names import go_quote
from webhook.model.text import one_line
from webhook.model.violation import Violation

# field.ErrorType prefixes of our messages (`Invalid value: ...`) -> metav1.CauseType
CAUSE_TYPES = (
    ("Required value", "FieldValueRequired"),
    ("Invalid value", "FieldValueInvalid"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Forbidden", "FieldValueForbidden"),
    ("Not found", "FieldValueNotFound"),
    ("Internal error", "InternalError"),
)
WARNING_CUT = 256  # characters of one warning once the total is over the limit
WARNING_TOTAL = 4096  # characters of all warnings the API server passes on uncut
MAX_CAUSES = 100  # causes listed in one denial (the message names how many were left out)


def cause_type(violation: Violation) -> str:
    """The metav1 CauseType of a violation, from its message's error-type prefix."""
    if violation.rule.startswith("internal."):
        return "InternalError"
    for prefix, cause in CAUSE_TYPES:
        if violation.message.startswith(prefix):
            return cause
    return "FieldValueInvalid"


def _field_error(v: Violation) -> str:
    """Go `field.Error.Error()`: `<field>: <body>` (just the body for an error without a field)."""
    return f"{v.field}: {v.message}" if v.field else v.message


def _aggregate(errors: Sequence[str]) -> str:
    """Go `utilerrors.Aggregate.Error()` of a field.ErrorList: repeats dropped, `[a, b]` for several."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def qualified_kind(group: str, kind: str) -> str:
    """schema.GroupKind.String(): `Kind.group`, just `Kind` for the core group."""
    return f"{kind}.{group}" if group else kind


def invalid_status(group: str, kind: str, name: str, violations: Sequence[Violation]) -> dict[str, Any]:
    """metav1.Status of apimachinery `NewInvalid(GroupKind{group, kind}, name, errs)`."""
    shown = list(violations[:MAX_CAUSES])
    causes = [
        {"reason": cause_type(v), "message": one_line(v.message), "field": one_line(v.field)} for v in shown
    ]
    for c in causes:
        if not c["field"]:
            del c["field"]
    errors = [one_line(_field_error(v)) for v in shown]
    left = len(violations) - len(shown)
    if left:
        errors.append(f"and {left} more errors not listed")
    details: dict[str, Any] = {"kind": kind, "causes": causes}
    if group:
        details["group"] = group
    if name:
        details["name"] = name
    message = f"{qualified_kind(group, kind)} {one_line(go_quote(name))} is invalid: {_aggregate(errors)}"
    return {
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }


def failure_status(code: int, reason: str, message: str) -> dict[str, Any]:
    """A plain metav1.Status failure (BadRequest 400, InternalError 500, ...)."""
    return {"metadata": {}, "status": "Failure", "message": one_line(message), "reason": reason, "code": code}


def cap_warnings(
    texts: Iterable[str], max_count: int = 20, max_total: int = WARNING_TOTAL, cut: int = WARNING_CUT
) -> list[str]:
    """Warnings the API server passes on unchanged (see the module docstring)."""
    unique = list(dict.fromkeys(one_line(t) for t in texts if t))
    if len(unique) <= max_count and sum(len(t) for t in unique) <= max_total:
        return unique
    out: list[str] = []
    total = 0
    reserve = 64  # room for the closing "N more" text
    for t in unique:
        short = t if len(t) <= cut else t[: cut - 3] + "..."
        if len(out) + 1 >= max_count or total + len(short) > max_total - reserve:
            break
        out.append(short)
        total += len(short)
    left = len(unique) - len(out)
    if left:
        out.append(f"{left} more warning{'s' if left > 1 else ''} not shown")
    return out


def json_patch(ops: Sequence[dict[str, Any]]) -> str:
    """The base64 text of a JSON Patch for `response.patch`."""
    return base64.b64encode(json.dumps(list(ops), separators=(",", ":")).encode()).decode()


def envelope(response: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview around a response."""
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
