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

Size: whatever the request, the answer but a patch stays under 64 KiB as the server encodes it. Rules
quote a long name or value clipped already (`text.clip`: `…[+N characters]`); here every text is
bounded once more, in bytes of its JSON encoding (`ensure_ascii`: a non-ASCII character takes 6 bytes,
one beyond the BMP 12), so the bound holds whatever a rule writes: the warnings together, each audit
annotation, a plain failure's message; a denial's name, each cause's message and field, and the causes
with the message that repeats them get what the rest of the answer leaves (at least one cause is listed,
the message counts the others). A patch is exempt: it is the object's own data, applied as it is.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from typing import Any

from webhook.admission.wire import (
    AdmissionResponse,
    AdmissionReviewResponse,
    Status,
    StatusCause,
    StatusDetails,
)
from webhook.model.names import go_quote
from webhook.model.text import clip, clip_marker, one_line
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
# Bytes of JSON (as the server encodes it) that a part of the answer may take.
RESPONSE_BYTES = (64 << 10) - 512  # the whole answer but a patch: a denial gets what the rest leaves
CAUSE_MESSAGE_BYTES = 8 << 10  # one cause's message (a CEL expression of 10 KiB may be in it)
CAUSE_FIELD_BYTES = 4 << 10  # one cause's field path (map keys in it are clipped to 256 characters)
MESSAGE_BYTES = 4 << 10  # the message of a plain failure (400, 500)
WARNINGS_BYTES = 12 << 10  # all warnings
ANNOTATION_BYTES = 1 << 10  # one value of `auditAnnotations`


def cause_type(violation: Violation) -> str:
    """The metav1 CauseType of a violation, from its message's error-type prefix."""
    if violation.rule.startswith("internal."):
        return "InternalError"
    for prefix, cause in CAUSE_TYPES:
        if violation.message.startswith(prefix):
            return cause
    return "FieldValueInvalid"


def _aggregate(errors: Sequence[str]) -> str:
    """Go `utilerrors.Aggregate.Error()` of a field.ErrorList: repeats dropped, `[a, b]` for several."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def qualified_kind(group: str, kind: str) -> str:
    """schema.GroupKind.String(): `Kind.group`, just `Kind` for the core group."""
    return f"{kind}.{group}" if group else kind


def invalid_status(
    group: str, kind: str, name: str, violations: Sequence[Violation], budget: int = RESPONSE_BYTES
) -> Status:
    """metav1.Status of apimachinery `NewInvalid(GroupKind{group, kind}, name, errs)`, at most `budget`
    bytes of JSON: causes past MAX_CAUSES or the budget are counted in the message, not listed (the first
    is always listed: a cause is at most CAUSE_MESSAGE_BYTES + CAUSE_FIELD_BYTES, twice over)."""
    name = clip(name)
    head = f"{qualified_kind(group, kind)} {one_line(go_quote(name))} is invalid: "
    causes: list[StatusCause] = []
    details: StatusDetails = {"kind": kind, "causes": causes}
    if group:
        details["group"] = group
    if name:
        details["name"] = name
    status: Status = {
        "metadata": {},
        "status": "Failure",
        "message": head,
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }
    # what the status takes without its causes, with room for `[`, `]` and ", and N more errors not listed"
    used = json_size(status) + 64
    errors: list[str] = []
    for v in violations[:MAX_CAUSES]:
        message = fit(one_line(v.message), CAUSE_MESSAGE_BYTES)
        where = fit(one_line(v.field), CAUSE_FIELD_BYTES)
        cause: StatusCause = {"reason": cause_type(v), "message": message}
        if where:
            cause["field"] = where
        error = f"{where}: {message}" if where else message
        # the cause and a comma, and the error in the message (its quotes' 2 bytes pay for ", ")
        cost = json_size(cause) + 1 + json_size(error)
        if causes and used + cost > budget:
            break
        used += cost
        causes.append(cause)
        errors.append(error)
    left = len(violations) - len(causes)
    if left:
        errors.append(f"and {left} more errors not listed")
    status["message"] = head + _aggregate(errors)
    return status


def failure_status(code: int, reason: str, message: str) -> Status:
    """A plain metav1.Status failure (BadRequest 400, InternalError 500, ...)."""
    text = fit(one_line(message), MESSAGE_BYTES)
    return {"metadata": {}, "status": "Failure", "message": text, "reason": reason, "code": code}


def cap_warnings(
    texts: Iterable[str],
    max_count: int = 20,
    max_total: int = WARNING_TOTAL,
    cut: int = WARNING_CUT,
    max_bytes: int = WARNINGS_BYTES,
) -> list[str]:
    """Warnings the API server passes on unchanged (see the module docstring), at most `max_bytes` of
    JSON together."""
    unique = list(dict.fromkeys(one_line(t) for t in texts if t))
    if (
        len(unique) <= max_count
        and sum(len(t) for t in unique) <= max_total
        and sum(json_size(t) for t in unique) <= max_bytes
    ):
        return unique
    out: list[str] = []
    total = size = 0
    reserve = 64  # room for the closing "N more" text
    for t in unique:
        short = t if len(t) <= cut else t[: cut - 3] + "..."
        cost = json_size(short)
        if (
            len(out) + 1 >= max_count
            or total + len(short) > max_total - reserve
            or size + cost > max_bytes - reserve
        ):
            break
        out.append(short)
        total += len(short)
        size += cost
    left = len(unique) - len(out)
    if left:
        out.append(f"{left} more warning{'s' if left > 1 else ''} not shown")
    return out


def audit_annotations(values: dict[str, str]) -> dict[str, str]:
    """`auditAnnotations`, each value at most ANNOTATION_BYTES of JSON (the keys are draguard's own)."""
    return {k: fit(one_line(v), ANNOTATION_BYTES) for k, v in values.items()}


# -- sizes as the server encodes them ----------------------------------------------------------------


def json_size(value: object) -> int:
    """Bytes of `value` as JSON the way the server writes it (compact, `ensure_ascii`)."""
    return len(json.dumps(value, separators=(",", ":")))


def _char_bytes(c: str) -> int:
    """Bytes of one character inside a JSON string (`ensure_ascii`)."""
    code = ord(c)
    if 0x20 <= code < 0x7F:
        return 2 if c in '"\\' else 1
    if code < 0x20:
        return 2 if c in "\b\f\n\r\t" else 6
    return 6 if code < 0x10000 else 12  # \uXXXX, or a surrogate pair of them


def fit(text: str, budget: int) -> str:
    """`text`, clipped with `text.clip`'s marker where needed so that its JSON string (quotes included)
    takes at most `budget` bytes."""
    if len(text) * 12 + 2 <= budget or json_size(text) <= budget:
        return text
    room = budget - json_size(clip_marker(len(text)))  # the marker for the largest cut, quotes included
    keep = used = 0
    for c in text[: max(room, 0)]:
        used += _char_bytes(c)
        if used > room:
            break
        keep += 1
    return clip(text, keep)


def json_patch(ops: Sequence[dict[str, Any]]) -> str:
    """The base64 text of a JSON Patch for `response.patch`."""
    return base64.b64encode(json.dumps(list(ops), separators=(",", ":")).encode()).decode()


def envelope(response: AdmissionResponse) -> AdmissionReviewResponse:
    """The AdmissionReview around a response."""
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
