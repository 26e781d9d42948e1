"""The CEL abstract syntax tree after macro expansion, shaped like cel-go's (`common/ast`).

Contract for consumers (type checker, cost estimator, evaluator, `reads`):

- Nodes are slotted dataclasses, never changed once built (not frozen: a frozen dataclass costs four times
  as much to construct) and compared by identity; every node has a unique positive `id`. Types and resolved
  references live in side tables keyed by id (`Checked.types`, `Checked.refs`), never on the nodes.
- `Const.kind` is one of "null" "bool" "int" "uint" "double" "string" "bytes"; `value` is
  None / bool / int / float / str / bytes (an int for both "int" and "uint").
- Operators are `Call`s with cel-go's function names: `_+_ _-_ _*_ _/_ _%_ -_ !_ _==_ _!=_ _<_ _<=_
  _>_ _>=_ @in _&&_ _||_ _?_:_ _[_]`, plus `_[?_]` (optional index), `_?._` (optional field selection:
  args (operand, Const string field name)) and `@not_strictly_false` (in `all`/`exists` macros).
  `_&&_`/`_||_` chains are balanced binary trees, as cel-go builds them.
- `Select(test_only=True)` is `has(operand.field)`. `Call.target` is the receiver of a member call
  (`x.f(y)`: target x, args (y,)), None for a global call.
- Macros are expanded: `all exists exists_one existsOne map filter` (one and two iteration variables,
  `transformList transformMap transformMapEntry`), `cel.bind`, `optMap`/`optFlatMap`, `sortBy` become
  `Comprehension`s. Comprehension semantics (cel-go): evaluate `iter_range`; bind `accu_var` to
  `accu_init`; for each element (list: iter_var = element, or iter_var = index and iter_var2 = element;
  map: iter_var = key, iter_var2 = value) while `loop_condition` is true, set accu_var to `loop_step`;
  then evaluate `result` with only accu_var in scope. `iter_var2` is "" for one-variable forms. The
  accumulator of macros is named "@result"; `cel.bind`/`optMap` use the iteration variable "#unused" over
  an empty list. `cel.@mapInsert(m, k, v)` / `cel.@mapInsert(m, entry_map)` and `@sortByAssociatedKeys`
  are internal functions produced by macros.
- `ListExpr.optional_indices`: positions of `[?e]` elements; `MapEntry.optional` / `StructField.optional`
  for `{?k: v}`.
- Depth: an accepted expression can nest a couple of thousand nodes deep. Never walk an AST with
  unbounded Python recursion; use `walk`/`children` (iterative) or an explicit stack.
- `SourceInfo` maps each id to the code-point offset where it starts (an array indexed by id);
  `location(id)` gives cel-go's 1-based line and 0-based column (code points).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(slots=True, eq=False)
class Expr:
    """Base of all expression nodes."""

    id: int


@dataclass(slots=True, eq=False)
class Const(Expr):
    kind: str
    value: None | bool | int | float | str | bytes


@dataclass(slots=True, eq=False)
class Ident(Expr):
    name: str


@dataclass(slots=True, eq=False)
class Select(Expr):
    operand: Expr
    field: str
    test_only: bool = False


@dataclass(slots=True, eq=False)
class Call(Expr):
    function: str
    target: Expr | None
    args: tuple[Expr, ...]


@dataclass(slots=True, eq=False)
class ListExpr(Expr):
    elements: tuple[Expr, ...]
    optional_indices: tuple[int, ...] = ()


@dataclass(slots=True, eq=False)
class MapEntry:
    id: int
    key: Expr
    value: Expr
    optional: bool = False


@dataclass(slots=True, eq=False)
class MapExpr(Expr):
    entries: tuple[MapEntry, ...]


@dataclass(slots=True, eq=False)
class StructField:
    id: int
    name: str
    value: Expr
    optional: bool = False


@dataclass(slots=True, eq=False)
class StructExpr(Expr):
    type_name: str
    fields: tuple[StructField, ...]


@dataclass(slots=True, eq=False)
class Comprehension(Expr):
    iter_range: Expr
    iter_var: str
    iter_var2: str
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr


@dataclass(slots=True, eq=False)
class Unspecified(Expr):
    """Placeholder built where the parser reported an error (never in an accepted expression)."""


ACCUMULATOR = "@result"
UNUSED_ITER_VAR = "#unused"


def children(e: Expr) -> tuple[Expr, ...]:
    """Direct sub-expressions in cel-go's evaluation/check order."""
    if isinstance(e, Select):
        return (e.operand,)
    if isinstance(e, Call):
        return ((e.target, *e.args)) if e.target is not None else e.args
    if isinstance(e, ListExpr):
        return e.elements
    if isinstance(e, MapExpr):
        return tuple(x for en in e.entries for x in (en.key, en.value))
    if isinstance(e, StructExpr):
        return tuple(f.value for f in e.fields)
    if isinstance(e, Comprehension):
        return (e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result)
    return ()


def walk(root: Expr) -> Iterator[Expr]:
    """All nodes, pre-order, iteratively (safe at any depth)."""
    stack = [root]
    while stack:
        e = stack.pop()
        yield e
        stack.extend(reversed(children(e)))


def depth(root: Expr) -> int:
    """The number of nodes on the longest root-to-leaf path (level by level, iteratively)."""
    d = 0
    level = [root]
    while level:
        d += 1
        nxt: list[Expr] = []
        add, extend = nxt.append, nxt.extend
        for e in level:
            k = type(e)
            if k is Call:
                if e.target is not None:  # type: ignore[attr-defined]
                    add(e.target)  # type: ignore[attr-defined]
                extend(e.args)  # type: ignore[attr-defined]
            elif k is Select:
                add(e.operand)  # type: ignore[attr-defined]
            elif k is not Const and k is not Ident:
                extend(children(e))
        level = nxt
    return d


class SourceInfo:
    """Where each node starts in the source: `offsets[id]` is a code-point offset (-1: unknown; ids start at
    1), line starts computed when a location is first asked for."""

    __slots__ = ("text", "offsets", "_line_starts")

    def __init__(self, text: str, offsets: array[int] | None = None) -> None:
        self.text = text
        self.offsets: array[int] = offsets if offsets is not None else array("i", (-1,))
        self._line_starts: list[int] | None = None

    @property
    def line_starts(self) -> list[int]:
        starts = self._line_starts
        if starts is None:
            starts = [0]
            pos = self.text.find("\n")
            while pos >= 0:
                starts.append(pos + 1)
                pos = self.text.find("\n", pos + 1)
            self._line_starts = starts
        return starts

    def location_of_offset(self, offset: int) -> tuple[int, int]:
        """(1-based line, 0-based column) of a code-point offset; (-1, -1) for a negative offset."""
        if offset < 0:
            return -1, -1
        starts = self.line_starts
        lo = bisect_right(starts, offset) - 1
        return lo + 1, offset - starts[lo]

    def location(self, node_id: int) -> tuple[int, int]:
        """cel-go's start location of a node: (line, column), (-1, -1) when unknown."""
        if not 0 < node_id < len(self.offsets):
            return -1, -1
        return self.location_of_offset(self.offsets[node_id])

    def snippet(self, line: int) -> str | None:
        starts = self.line_starts
        if line < 1 or line > len(starts):
            return None
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[start:end]


@dataclass(slots=True, eq=False)
class ParsedExpr:
    """A parsed (macro-expanded) expression with its source positions."""

    expr: Expr
    source: SourceInfo
    max_id: int
