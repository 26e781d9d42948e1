"""RFC 6902 JSON Patch `remove` operations for a set of locations in a document.

    remove_ops(doc, [("spec", "devices", 0, "bindsToNode"), ...])
      -> [{"op": "remove", "path": "/spec/devices/0/bindsToNode"}, ...]

Only locations present in `doc` are removed, each once, none inside another removed one. They are
ordered so that every `remove` is valid when the ones before it have been applied: list items are
removed from the highest index down, and anything inside an item before the item itself or an earlier
item (descending order of the locations, indices compared as numbers).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

Location = tuple[str | int, ...]


def pointer(loc: Location) -> str:
    """A JSON Pointer (RFC 6901): `~` as `~0`, `/` as `~1`; list indices as decimal numbers."""
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in loc)


def _exists(doc: Any, loc: Location) -> bool:
    cur = doc
    for step in loc:
        if isinstance(step, int) and not isinstance(step, bool):
            if not isinstance(cur, list) or not 0 <= step < len(cur):
                return False
            cur = cur[step]
        elif isinstance(step, str) and isinstance(cur, dict) and step in cur:
            cur = cur[step]
        else:
            return False
    return True


def _order(loc: Location) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, s) if isinstance(s, int) else (1, str(s)) for s in loc)


def remove_ops(doc: Any, locations: Iterable[Sequence[str | int]]) -> list[dict[str, str]]:
    """`remove` operations for the locations present in `doc` (see the module docstring)."""
    present = {tuple(loc) for loc in locations if loc and _exists(doc, tuple(loc))}
    outer = [loc for loc in present if not any(loc[:n] in present for n in range(1, len(loc)))]
    return [{"op": "remove", "path": pointer(loc)} for loc in sorted(outer, key=_order, reverse=True)]
