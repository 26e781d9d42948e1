"""RFC 6902 JSON Patch `remove` operations for a set of locations in a document, and applying the
operations the mutating endpoint writes (`apply_ops`: `remove` and `add`).

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


def _steps(path: str) -> list[str]:
    """The unescaped reference tokens of a JSON Pointer."""
    return [t.replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:]]


def apply_ops(doc: Any, ops: Iterable[dict[str, Any]]) -> None:
    """Apply the `remove` and `add` operations this package writes to `doc`, in place (a list index or
    `-` for add; the mutating endpoint computes its later operations on what the earlier ones leave).
    Raises ValueError for an operation that does not apply."""
    for op in ops:
        steps = _steps(str(op["path"]))
        if not steps:
            raise ValueError(f"{op['op']} of the whole document")
        parent = doc
        for s in steps[:-1]:
            parent = parent[int(s)] if isinstance(parent, list) else parent[s]
        last = steps[-1]
        if op["op"] == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                del parent[last]
        elif op["op"] == "add":
            if isinstance(parent, list):
                parent.insert(len(parent) if last == "-" else int(last), op["value"])
            elif isinstance(parent, dict):
                parent[last] = op["value"]
            else:
                raise ValueError(f"add at {op['path']}: the parent is not a container")
        else:
            raise ValueError(f"unsupported operation {op['op']!r}")
