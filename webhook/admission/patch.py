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

from webhook.model.errors import DraguardError

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


class PatchError(DraguardError, ValueError):
    """A JSON Patch operation that does not apply to the document (a path that is not there)."""


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _parent(doc: Any, path: str) -> tuple[Any, str]:
    """The container that holds the last token of `path`, and that token (unescaped)."""
    if not path.startswith("/"):
        raise PatchError(f"{path!r}: a JSON Pointer starts with /")
    tokens = [_unescape(t) for t in path[1:].split("/")]
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, dict) and t in cur:
            cur = cur[t]
        elif isinstance(cur, list) and t.isdigit() and int(t) < len(cur):
            cur = cur[int(t)]
        else:
            raise PatchError(f"{path}: {t!r} is not there")
    return cur, tokens[-1]


def apply_ops(doc: Any, ops: Sequence[dict[str, Any]]) -> Any:
    """`doc` with the `add`, `remove` and `replace` operations of a JSON Patch applied in order (RFC
    6902; in place where `doc` is a container, the result returned: a patch of "" replaces it whole).
    What the mutating endpoint writes; anything else raises PatchError."""
    for op in ops:
        kind, path = op.get("op"), op.get("path")
        if not isinstance(path, str) or kind not in ("add", "remove", "replace"):
            raise PatchError(f"unsupported operation {op!r}")
        if path == "":
            if kind == "remove":
                raise PatchError("cannot remove the whole document")
            doc = op["value"]
            continue
        parent, token = _parent(doc, path)
        if isinstance(parent, dict):
            if kind != "add" and token not in parent:
                raise PatchError(f"{path}: {token!r} is not there")
            if kind == "remove":
                del parent[token]
            else:
                parent[token] = op["value"]
        elif isinstance(parent, list):
            end = token == "-" and kind == "add"
            if not end and not (token.isdigit() and int(token) < len(parent) + (kind == "add")):
                raise PatchError(f"{path}: no item {token!r}")
            if kind == "add":
                parent.insert(len(parent) if end else int(token), op["value"])
            elif kind == "remove":
                del parent[int(token)]
            else:
                parent[int(token)] = op["value"]
        else:
            raise PatchError(f"{path}: not inside an object or a list")
    return doc
