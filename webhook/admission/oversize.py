"""Bounded work per review: a DRA object whose spec or status holds a list or map of more than
MAX_ENTRIES entries is answered at once, without running the rules over every entry.

No such list or map is valid in resource.k8s.io/v1 (the largest bounds: 256 `reservedFor` entries, 128
devices of a slice, 32 attributes and capacities of a device), so the API server rejects the object
whatever draguard says; checking it entry by entry would cost seconds and hundreds of MiB per request
(2,000,000 empty requests in one claim: 21 s and ~1 GiB before this guard). Subtrees the API bounds only
by size or not at all are left out: `metadata` (labels may be many), opaque `parameters` and device
status `data` (arbitrary JSON of up to 10 KiB), and `nodeSelector` (core's NodeSelector has no count
limits). The walk is iterative and stops at the first finding.
"""

from __future__ import annotations

from typing import Any

from webhook.model.violation import Severity, Violation

RULE = "input.too-many-items"
MAX_ENTRIES = 1024
SKIPPED_KEYS = frozenset({"parameters", "data", "nodeSelector"})


def oversized(obj: object, kind: str) -> Violation | None:
    """The first list or map of `obj`'s spec or status with more than MAX_ENTRIES entries, as a violation
    at its path; None when there is none."""
    if not isinstance(obj, dict):
        return None
    stack: list[tuple[Any, str]] = [(obj[k], k) for k in ("status", "spec") if k in obj]
    while stack:
        value, path = stack.pop()
        if type(value) is dict:
            if len(value) > MAX_ENTRIES:
                return _violation(path, len(value), kind)
            stack.extend(
                (v, f"{path}.{k}" if _plain(k) else f"{path}[{str(k)[:128]!r}]")
                for k, v in value.items()
                if type(v) in (dict, list) and k not in SKIPPED_KEYS
            )
        elif type(value) is list:
            if len(value) > MAX_ENTRIES:
                return _violation(path, len(value), kind)
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value) if type(v) in (dict, list))
    return None


def _plain(key: str) -> bool:
    return isinstance(key, str) and 0 < len(key) <= 253 and key.replace("-", "").replace("_", "").isalnum()


def _violation(path: str, n: int, kind: str) -> Violation:
    return Violation(
        RULE,
        Severity.ERROR,
        path,
        f"Too many: {n}: must have at most {MAX_ENTRIES} items (no list or map of a {kind} allows more; "
        "draguard did not check the rest of this object)",
    )
