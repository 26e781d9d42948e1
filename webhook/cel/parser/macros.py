"""CEL macro expansion as cel-go does it in the Kubernetes environment: has, all/exists/exists_one/
existsOne/map/filter (one and two variables), transformList/transformMap/transformMapEntry, cel.bind,
optMap/optFlatMap and sortBy (ext lists v3)."""

from __future__ import annotations

from collections.abc import Callable

from webhook.cel.common.ast import (
    ACCUMULATOR,
    UNUSED_ITER_VAR,
    Call,
    Comprehension,
    Const,
    Expr,
    Ident,
    ListExpr,
    MapEntry,
    MapExpr,
    Select,
    StructExpr,
    StructField,
    children,
)
from webhook.model.errors import DraguardError

LEGACY_ACCUMULATOR = "__result__"


class MacroError(DraguardError):
    """The macro matched but its arguments are not well formed; `node` locates the message."""

    def __init__(self, node: Expr, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


class Factory:
    """Builds macro nodes with fresh ids located at the macro call (cel-go's exprHelper)."""

    def __init__(self, new_id: Callable[[int], int], call_offset: int) -> None:
        self._new_id = new_id
        self._offset = call_offset

    def id(self) -> int:
        return self._new_id(self._offset)

    def accu(self) -> Ident:
        return Ident(self.id(), ACCUMULATOR)

    def lit(self, kind: str, value: None | bool | int | float | str | bytes) -> Const:
        return Const(self.id(), kind, value)

    def call(self, fn: str, *args: Expr) -> Call:
        return Call(self.id(), fn, None, tuple(args))

    def member(self, fn: str, target: Expr, *args: Expr) -> Call:
        return Call(self.id(), fn, target, tuple(args))

    def empty_list(self) -> ListExpr:
        return ListExpr(self.id(), ())

    def fold(
        self, rng: Expr, v1: str, v2: str, accu: str, init: Expr, cond: Expr, step: Expr, result: Expr
    ) -> Comprehension:
        return Comprehension(self.id(), rng, v1, v2, accu, init, cond, step, result)

    def copy(self, e: Expr, offsets: Callable[[int], int]) -> Expr:
        """A deep copy with fresh ids at the original nodes' offsets (iterative)."""
        return _copy(e, self._new_id, offsets, self.id)


def _copy(
    root: Expr, new_id: Callable[[int], int], offset: Callable[[int], int], macro_id: Callable[[], int]
) -> Expr:
    # Post-order rebuild with an explicit stack (ASTs can be deep).
    out: dict[int, Expr] = {}
    ids: dict[int, int] = {}
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        e, done = stack.pop()
        if not done:
            ids[id(e)] = new_id(offset(e.id))
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(children(e)))
            continue
        nid = ids[id(e)]

        def get(x: Expr) -> Expr:
            return out[id(x)]

        if isinstance(e, Select):
            out[id(e)] = Select(nid, get(e.operand), e.field, e.test_only)
        elif isinstance(e, Call):
            out[id(e)] = Call(
                nid,
                e.function,
                get(e.target) if e.target is not None else None,
                tuple(get(a) for a in e.args),
            )
        elif isinstance(e, ListExpr):
            out[id(e)] = ListExpr(nid, tuple(get(x) for x in e.elements), e.optional_indices)
        elif isinstance(e, MapExpr):
            out[id(e)] = MapExpr(
                nid, tuple(MapEntry(macro_id(), get(en.key), get(en.value), en.optional) for en in e.entries)
            )
        elif isinstance(e, StructExpr):
            out[id(e)] = StructExpr(
                nid,
                e.type_name,
                tuple(StructField(macro_id(), f.name, get(f.value), f.optional) for f in e.fields),
            )
        elif isinstance(e, Comprehension):
            out[id(e)] = Comprehension(
                nid,
                get(e.iter_range),
                e.iter_var,
                e.iter_var2,
                e.accu_var,
                get(e.accu_init),
                get(e.loop_condition),
                get(e.loop_step),
                get(e.result),
            )
        elif isinstance(e, Const):
            out[id(e)] = Const(nid, e.kind, e.value)
        elif isinstance(e, Ident):
            out[id(e)] = Ident(nid, e.name)
        else:
            out[id(e)] = type(e)(nid)
    return out[id(root)]


def _simple_name(e: Expr) -> str | None:
    return e.name if isinstance(e, Ident) else None


def _iter_var(arg: Expr, not_ident: str) -> str:
    name = _simple_name(arg)
    if name is None:
        raise MacroError(arg, not_ident)
    if name in (ACCUMULATOR, LEGACY_ACCUMULATOR):
        raise MacroError(arg, "iteration variable overwrites accumulator variable")
    return name


def _two_vars(a0: Expr, a1: Expr) -> tuple[str, str]:
    v1 = _simple_name(a0)
    if v1 is None:
        raise MacroError(a0, "argument must be a simple name")
    v2 = _simple_name(a1)
    if v2 is None:
        raise MacroError(a1, "argument must be a simple name")
    if v1 == v2:
        raise MacroError(a1, f"duplicate variable name: {v1}")
    if v1 in (ACCUMULATOR, LEGACY_ACCUMULATOR):
        raise MacroError(a0, "iteration variable overwrites accumulator variable")
    if v2 in (ACCUMULATOR, LEGACY_ACCUMULATOR):
        raise MacroError(a1, "iteration variable overwrites accumulator variable")
    return v1, v2


def _quantifier(f: Factory, kind: str, target: Expr, v1: str, v2: str, pred: Expr) -> Expr:
    if kind == "all":
        init: Expr = f.lit("bool", True)
        cond: Expr = f.call("@not_strictly_false", f.accu())
        step: Expr = f.call("_&&_", f.accu(), pred)
        result: Expr = f.accu()
    elif kind == "exists":
        init = f.lit("bool", False)
        cond = f.call("@not_strictly_false", f.call("!_", f.accu()))
        step = f.call("_||_", f.accu(), pred)
        result = f.accu()
    else:
        init = f.lit("int", 0)
        cond = f.lit("bool", True)
        step = f.call("_?_:_", pred, f.call("_+_", f.accu(), f.lit("int", 1)), f.accu())
        result = f.call("_==_", f.accu(), f.lit("int", 1))
    return f.fold(target, v1, v2, ACCUMULATOR, init, cond, step, result)


def _map(f: Factory, target: Expr, args: tuple[Expr, ...]) -> Expr:
    v = _iter_var(args[0], "argument is not an identifier")
    filt, fn = (args[1], args[2]) if len(args) == 3 else (None, args[1])
    init = f.empty_list()
    cond = f.lit("bool", True)
    step: Expr = f.call("_+_", f.accu(), ListExpr(f.id(), (fn,)))
    if filt is not None:
        step = f.call("_?_:_", filt, step, f.accu())
    return f.fold(target, v, "", ACCUMULATOR, init, cond, step, f.accu())


def _filter(f: Factory, target: Expr, args: tuple[Expr, ...]) -> Expr:
    v = _iter_var(args[0], "argument is not an identifier")
    init = f.empty_list()
    cond = f.lit("bool", True)
    step: Expr = f.call("_+_", f.accu(), ListExpr(f.id(), (args[0],)))
    step = f.call("_?_:_", args[1], step, f.accu())
    return f.fold(target, v, "", ACCUMULATOR, init, cond, step, f.accu())


def _transform(f: Factory, kind: str, target: Expr, args: tuple[Expr, ...]) -> Expr:
    v1, v2 = _two_vars(args[0], args[1])
    filt, fn = (args[2], args[3]) if len(args) == 4 else (None, args[2])
    if kind == "transformList":
        step: Expr = f.call("_+_", f.accu(), ListExpr(f.id(), (fn,)))
        init: Expr = f.empty_list()
    elif kind == "transformMap":
        step = f.call("cel.@mapInsert", f.accu(), Ident(f.id(), v1), fn)
        init = MapExpr(f.id(), ())
    else:
        step = f.call("cel.@mapInsert", f.accu(), fn)
        init = MapExpr(f.id(), ())
    if filt is not None:
        step = f.call("_?_:_", filt, step, f.accu())
    return f.fold(target, v1, v2, ACCUMULATOR, init, f.lit("bool", True), step, f.accu())


def expand(
    f: Factory, function: str, target: Expr | None, args: tuple[Expr, ...], offsets: Callable[[int], int]
) -> Expr | None:
    """The expansion of a macro call, None if `function`/arity is no macro (raises MacroError)."""
    n = len(args)
    if target is None:
        if function == "has" and n == 1:
            a = args[0]
            if isinstance(a, Select) and not a.test_only:
                return Select(f.id(), a.operand, a.field, True)
            raise MacroError(a, "invalid argument to has() macro")
        return None
    if n == 2 and function in ("all", "exists", "exists_one"):  # no two-argument existsOne in cel-go v0.27
        v = _iter_var(args[0], "argument must be a simple name")
        kind = "one" if function in ("exists_one", "existsOne") else function
        return _quantifier(f, kind, target, v, "", args[1])
    if n == 3 and function in ("all", "exists", "exists_one", "existsOne"):
        v1, v2 = _two_vars(args[0], args[1])
        kind = "one" if function in ("exists_one", "existsOne") else function
        return _quantifier(f, kind, target, v1, v2, args[2])
    if function == "map" and n in (2, 3):
        return _map(f, target, args)
    if function == "filter" and n == 2:
        return _filter(f, target, args)
    if function in ("transformList", "transformMap", "transformMapEntry") and n in (3, 4):
        return _transform(f, function, target, args)
    if function == "bind" and n == 3:
        if not (isinstance(target, Ident) and target.name == "cel"):
            return None
        name = _simple_name(args[0])
        if name is None:
            raise MacroError(args[0], "cel.bind() variable names must be simple identifiers")
        return f.fold(
            f.empty_list(),
            UNUSED_ITER_VAR,
            "",
            name,
            args[1],
            f.lit("bool", False),
            Ident(f.id(), name),
            args[2],
        )
    if function in ("optMap", "optFlatMap") and n == 2:
        name = _simple_name(args[0])
        if name is None:
            raise MacroError(args[0], f"{function}() variable name must be a simple identifier")
        has_value = f.member("hasValue", target)
        fold = f.fold(
            f.empty_list(),
            UNUSED_ITER_VAR,
            "",
            name,
            f.member("value", f.copy(target, offsets)),
            f.lit("bool", False),
            Ident(f.id(), name),
            args[1],
        )
        then: Expr = f.call("optional.of", fold) if function == "optMap" else fold
        return f.call("_?_:_", has_value, then, f.call("optional.none"))
    if function == "sortBy" and n == 2:
        if not isinstance(target, ListExpr | Select | Ident | Comprehension | Call):
            raise MacroError(
                target,
                "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
            )
        var = Ident(f.id(), "@__sortBy_input__")
        mapped = _map(f, f.copy(var, offsets), args)
        call = f.member("@sortByAssociatedKeys", f.copy(var, offsets), mapped)
        return f.fold(f.empty_list(), UNUSED_ITER_VAR, "", var.name, target, f.lit("bool", False), var, call)
    return None
