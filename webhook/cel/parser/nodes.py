"""What the parser builds besides its grammar (cel-go's parser helper and parse-tree visitor): node ids with
their source offsets, the visitor's errors and depth limit, macro expansion of calls. One per parse, used by
the parser (`webhook.cel.parser.parser`), the literals (`parselits`) and the fast paths (`parsefast`)."""

from __future__ import annotations

import threading
from array import array

from webhook.cel.common.ast import Call, Expr, Unspecified
from webhook.cel.parser import macros
from webhook.cel.parser.grammar import MACRO_NAMES, MAX_RECURSION

# Node ids as shared int objects: every parse numbers its nodes from 1, and an int above 256 is otherwise an
# object of its own (28-32 bytes per node of every cached selector). A tuple, replaced (never mutated) when
# a parse numbered past it, up to _ID_POOL_MAX ids; ids beyond it are plain ints.
_ID_POOL: tuple[int, ...] = tuple(range(1024))
_ID_POOL_MAX = 1 << 15
_ID_LOCK = threading.Lock()


def _grow_ids(n: int) -> None:
    global _ID_POOL
    with _ID_LOCK:
        if len(_ID_POOL) < n:
            _ID_POOL = tuple(range(min(n, _ID_POOL_MAX)))


class Nodes:
    """`offsets`: node id -> code-point offset (ids start at 1); `visitor`: the tree visitor's errors (offset,
    message); `visit_overflow`: offset of the first node beyond the visitor's depth limit (-1: none)."""

    __slots__ = ("offsets", "ids", "next_id", "visitor", "visit_overflow")

    def __init__(self) -> None:
        self.offsets = array("i", (-1,))
        self.ids = _ID_POOL
        self.next_id = 1
        self.visitor: list[tuple[int, str]] = []
        self.visit_overflow = -1

    def new_id(self, offset: int) -> int:
        i = self.next_id
        self.next_id = i + 1
        self.offsets.append(offset)
        ids = self.ids
        return ids[i] if i < len(ids) else i

    def visitor_error(self, offset: int, message: str) -> Unspecified:
        self.visitor.append((offset, message))
        return Unspecified(self.new_id(offset))

    def counted(self, height: int, offset: int) -> int:
        """The visitor depth of a counted node over children of `height`."""
        if height >= MAX_RECURSION and self.visit_overflow < 0:
            self.visit_overflow = offset
        return height + 1

    def call_or_macro(self, offset: int, fn: str, target: Expr | None, args: tuple[Expr, ...]) -> Expr:
        """The call at `offset` (its operator or open parenthesis), expanded if it is a macro."""
        if fn in MACRO_NAMES:
            factory = macros.Factory(self.new_id, offset)
            try:
                expanded = macros.expand(factory, fn, target, args, self.offset_of)
            except macros.MacroError as err:
                return self.visitor_error(self.offset_of(err.node.id), err.message)
            if expanded is not None:
                return expanded
        return Call(self.new_id(offset), fn, target, args)

    def offset_of(self, node_id: int) -> int:
        return self.offsets[node_id] if 0 < node_id < len(self.offsets) else -1

    def done(self) -> None:
        """After the parse: let the next parses share ids up to twice as many as this one numbered."""
        if self.next_id > len(_ID_POOL) and len(_ID_POOL) < _ID_POOL_MAX:
            _grow_ids(2 * self.next_id)
