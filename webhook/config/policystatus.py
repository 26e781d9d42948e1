"""The status a server writes on a DraguardPolicy: `observedGeneration` and two conditions, as
`metav1.Condition`s.

- `Ready`: True (reason `Applied`) when the generation is in force; False (reason `Invalid`) when it is
  not, because it is invalid (a server that applied an earlier valid generation keeps that one);
- `Invalid`: True with the first error's reason (`UnknownRule`, `InvalidExpression`, ...) and the errors
  as its message; False (reason `Valid`) otherwise.

The verdict depends on the object's generation and its errors only, so every replica and worker reaches the
same one and a status already saying it is never written again (a write loop between servers cannot
start); `lastTransitionTime` moves only when a condition's status does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from webhook.config.fields import FieldError

ConditionStatus = Literal["True", "False"]
READY = "Ready"
INVALID = "Invalid"
MAX_MESSAGE = 8192  # bytes of a condition's message (metav1.Condition allows 32768)
MAX_LISTED = 20  # errors listed in the Invalid condition


@dataclass(frozen=True)
class Condition:
    type: str
    status: ConditionStatus
    reason: str
    message: str


@dataclass(frozen=True)
class Verdict:
    """What a server says about one generation of a policy."""

    generation: int
    ready: Condition
    invalid: Condition

    @property
    def valid(self) -> bool:
        return self.invalid.status == "False"


def _clipped(text: str) -> str:
    data = text.encode()
    if len(data) <= MAX_MESSAGE:
        return text
    return data[: MAX_MESSAGE - 40].decode(errors="ignore") + f"… [{len(data)} bytes in all]"


def verdict_of(generation: int, errors: Sequence[FieldError]) -> Verdict:
    if not errors:
        return Verdict(
            generation,
            Condition(READY, "True", "Applied", f"generation {generation} is in force"),
            Condition(INVALID, "False", "Valid", ""),
        )
    listed = "; ".join(str(e) for e in errors[:MAX_LISTED])
    more = f"; and {len(errors) - MAX_LISTED} more" if len(errors) > MAX_LISTED else ""
    return Verdict(
        generation,
        Condition(
            READY,
            "False",
            "Invalid",
            f"generation {generation} is invalid ({len(errors)} error(s), see the Invalid condition) and not "
            "applied; a server that applied an earlier valid generation keeps it in force",
        ),
        Condition(INVALID, "True", errors[0].reason, _clipped(listed + more)),
    )


def _conditions(status: Any) -> dict[str, Mapping[str, Any]]:
    conditions = status.get("conditions") if isinstance(status, dict) else None
    out: dict[str, Mapping[str, Any]] = {}
    for c in conditions if isinstance(conditions, list) else ():
        if isinstance(c, dict) and isinstance(c.get("type"), str):
            out[c["type"]] = c
    return out


def says(status: Any, verdict: Verdict) -> bool:
    """Whether an object's `status` already says exactly this (transition times aside)."""
    if not isinstance(status, dict) or status.get("observedGeneration") != verdict.generation:
        return False
    have = _conditions(status)
    for want in (verdict.ready, verdict.invalid):
        c = have.get(want.type)
        if c is None or c.get("observedGeneration") != verdict.generation:
            return False
        if (c.get("status"), c.get("reason"), c.get("message")) != (want.status, want.reason, want.message):
            return False
    return True


def status_patch(obj: Mapping[str, Any], verdict: Verdict, now: str) -> dict[str, Any]:
    """A JSON merge patch of the status subresource saying `verdict`, conditional on the object's
    resourceVersion (a newer object makes it fail with 409: the newer one gets its own verdict). `now`:
    RFC 3339 (`2026-01-02T03:04:05Z`), the transition time of a condition whose status changes."""
    have = _conditions(obj.get("status"))
    conditions: list[Mapping[str, Any]] = [c for t, c in have.items() if t not in (READY, INVALID)]
    for c in (verdict.ready, verdict.invalid):
        old = have.get(c.type)
        since = old.get("lastTransitionTime") if old is not None and old.get("status") == c.status else None
        conditions.append(
            {
                "type": c.type,
                "status": c.status,
                "observedGeneration": verdict.generation,
                "lastTransitionTime": since if isinstance(since, str) else now,
                "reason": c.reason,
                "message": c.message,
            }
        )
    meta = obj.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
    patch: dict[str, Any] = {"status": {"observedGeneration": verdict.generation, "conditions": conditions}}
    if isinstance(rv, str) and rv:
        patch["metadata"] = {"resourceVersion": rv}
    return patch
