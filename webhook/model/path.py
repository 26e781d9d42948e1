"""Field paths in the API server's notation (`spec.devices[3].capacity[memory].value`).

Modelled on Go's `field.Path`: a path is immutable and cheap to extend; it becomes a string
only when a violation is reported.
"""

from __future__ import annotations

from webhook.model.text import clip


class Path:
    """An immutable field path. `Path("spec").child("devices").index(3).key("memory")`."""

    __slots__ = ("_parent", "_part")

    def __init__(self, root: str = "", _parent: Path | None = None) -> None:
        self._parent = _parent
        self._part = root

    def child(self, name: str, *more: str) -> Path:
        """`spec` → `spec.devices` (several names nest: `child("a", "b")` → `spec.a.b`)."""
        p = Path("." + name if (self._part or self._parent is not None) else name, self)
        for m in more:
            p = Path("." + m, p)
        return p

    def index(self, i: int) -> Path:
        """`spec.devices` → `spec.devices[3]`."""
        return Path(f"[{i}]", self)

    def key(self, k: str) -> Path:
        """`spec.devices[0].capacity` → `spec.devices[0].capacity[memory]` (map key, unquoted; a long key
        clipped: `[ab…[+N characters]]`)."""
        return Path(f"[{clip(k)}]", self)

    def __str__(self) -> str:
        parts: list[str] = []
        p: Path | None = self
        while p is not None:
            parts.append(p._part)
            p = p._parent
        return "".join(reversed(parts))

    def __repr__(self) -> str:
        return f"Path({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Path):
            return str(self) == str(other)
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))


ROOT = Path()
