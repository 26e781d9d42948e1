"""API-server wording for field errors (`Invalid value: "x": ...`, `Too many: ...`), shared by rule modules.

The helpers return message strings only; the rule function pairs them with a `Path` in a `Finding`.
Values are rendered the way Go's `field.Error` renders them: strings quoted, numbers and booleans bare.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from webhook.model import names
from webhook.model.jsontext import json_head

_KINDS = (
    "Required value",
    "Invalid value",
    "Too long",
    "Too many",
    "Duplicate value",
    "Unsupported value",
    "Forbidden",
    "Not found",
)


def render(value: Any, limit: int = 120) -> str:
    """A value as the API server prints it in an error: `"text"`, `5`, `true`, compact JSON for objects
    (a long string clipped: `"ab…[+N characters]"`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return names.quote(value)
    if value is None:
        return '"null"'
    text = json_head(value, limit, sort_keys=True)  # never all of an aliased value: at most limit + 1
    return text if len(text) <= limit else text[: limit - 3] + "..."


def required(detail: str = "") -> str:
    return f"Required value: {detail}" if detail else "Required value"


def invalid(value: Any, detail: str) -> str:
    return f"Invalid value: {render(value)}: {detail}"


def duplicate(value: Any) -> str:
    return f"Duplicate value: {render(value)}"


def forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def too_many(count: int, limit: int) -> str:
    return f"Too many: {count}: must have at most {limit} items"


def too_long(limit: int) -> str:
    return f"Too long: may not be more than {limit} bytes"


def not_found(value: Any, detail: str = "") -> str:
    base = f"Not found: {render(value)}"
    return f"{base}: {detail}" if detail else base


def not_supported(value: Any, supported: Iterable[str]) -> str:
    return f"Unsupported value: {render(value)}: supported values: " + ", ".join(f'"{s}"' for s in supported)


def as_invalid(value: Any, messages: Iterable[str]) -> list[str]:
    """Wrap primitive-check messages (`names.dns_label(v)` …) as `Invalid value` errors.

    A message that already carries an error kind (e.g. `Too long: ...`) is kept as it is."""
    out: list[str] = []
    for m in messages:
        if isinstance(m, names.Problem) and isinstance(value, str):
            out.append(names.render(value, m))  # knows Required / Too long / part-of-value problems
        elif m.startswith(_KINDS):
            out.append(m)
        else:
            out.append(invalid(value, m))
    return out


def byte_len(text: str) -> int:
    """Length in bytes, like Go's `len` on a string."""
    return len(text.encode("utf-8"))


# --- common name formats, as lists of error messages (empty = valid) ------------------------------


def driver_name_errors(value: str) -> list[str]:
    """Driver names are checked like CSI driver names: required, lower-cased DNS subdomain, ≤63 bytes."""
    return as_invalid(value, names.driver_name(value))


def pool_name_errors(value: str) -> list[str]:
    """Pool names: required, ≤253 bytes, every `/`-separated segment a DNS subdomain."""
    return as_invalid(value, names.pool_name(value))


def device_name_errors(value: str) -> list[str]:
    """Device names are DNS labels (an empty name fails the label check, as upstream)."""
    return as_invalid(value, names.device_name(value))


def label_name_errors(value: str) -> list[str]:
    """metav1 `ValidateLabelName`: a qualified name (optional DNS-subdomain prefix + `/` + name)."""
    return as_invalid(value, names.label_key(value))


def label_value_errors(value: str) -> list[str]:
    return as_invalid(value, names.label_value(value))
