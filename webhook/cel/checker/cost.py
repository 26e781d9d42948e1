"""The worst-case cost estimate of a checked selector: cel-go's `checker/cost.go` with the Kubernetes library
estimator (`apiserver/pkg/cel/library/cost.go`), the ext lists/sets estimators and the DRA estimator (the
declared maximum sizes of the `device` fields, `includes`). The API server rejects a selector whose estimated
maximum exceeds 1,000,000. Sizes and costs are (min, max) pairs saturating at 2**64-1, as in Go.
"""

from __future__ import annotations

from collections.abc import Generator

from webhook.cel.checker import types as t
from webhook.cel.checker.checker import Checked
from webhook.cel.checker.costmodel import (
    K8S_FNS,
    REGEX_FACTOR,
    STRING_FACTOR,
    U64,
    UNKNOWN,
    Est,
    Node,
    Path,
    add,
    by_factor,
    dra_size,
    k8s_estimate,
    mul,
    overload_estimate,
    sat_add,
    sat_mul,
    union,
)
from webhook.cel.checker.types import Type
from webhook.cel.common.ast import (
    ACCUMULATOR,
    Call,
    Comprehension,
    Const,
    Expr,
    Ident,
    ListExpr,
    MapExpr,
    ParsedExpr,
    Select,
    StructExpr,
)


class _Var:
    __slots__ = ("path", "size", "entry")

    def __init__(self, path: Path | None, size: Est | None, entry: tuple[str, Est, Est] | None) -> None:
        self.path = path
        self.size = size
        self.entry = entry


_ZERO: Est = (0, 0)
_UNKNOWN_PATH: Path = ("<not computed>",)
_ONE_EST: Est = (1, 1)
_ACCUMULATORS = (ACCUMULATOR, "__result__")


class _Coster:
    """The walk: `visit(e)` computes a leaf's cost on the spot, or returns a generator that yields the
    children it needs; either way the cost of the last node finished is left in `ret`."""

    def __init__(self, checked: Checked) -> None:
        self.types = checked.types
        self.refs = checked.refs
        self.paths: dict[int, Path] = {}
        self.sizes: dict[int, Est] = {}
        self.entries: dict[int, tuple[str, Est, Est]] = {}
        self.vars: dict[str, list[_Var]] = {}
        self.ret: Est = _ZERO

    # variables and paths
    def peek(self, name: str) -> _Var | None:
        s = self.vars.get(name)
        return s[-1] if s else None

    def push(self, name: str, v: _Var) -> None:
        self.vars.setdefault(name, []).append(v)

    def pop(self, name: str) -> None:
        self.vars[name].pop()

    def path(self, e: Expr) -> Path | None:
        if type(e) is Ident:
            s = self.vars.get(e.name)  # type: ignore[attr-defined]
            if s:
                return s[-1].path
        return self.paths.get(e.id)

    def type(self, e: Expr) -> Type:
        return self.types.get(e.id, t.DYN_T)

    def node(self, e: Expr) -> Node:
        p = self.path(e)
        size = self.size(e, p)
        if p and p[0] in _ACCUMULATORS:
            p = None
        return Node(p, self.type(e), e, size)

    def size(self, e: Expr, path: Path | None = _UNKNOWN_PATH) -> Est | None:
        """The computed size of `e` (`path`: its path if the caller has it)."""
        s = self.sizes.get(e.id)
        if s is not None:
            return s
        k = type(e)
        if k is Const:
            kind = e.kind  # type: ignore[attr-defined]
            if kind == "string" or kind == "bytes":
                n = len(e.value)  # type: ignore[attr-defined]
                return n, n
            return _ONE_EST
        if k is ListExpr:
            n = len(e.elements)  # type: ignore[attr-defined]
            return n, n
        if k is MapExpr:
            n = len(e.entries)  # type: ignore[attr-defined]
            return n, n
        p = self.path(e) if path is _UNKNOWN_PATH else path
        if p and p[0] == "device":
            s = dra_size(p)
            if s is not None:
                self.sizes[e.id] = s
                return s
        if _scalar(self.type(e)):
            return _ONE_EST
        if k is Ident:
            v = self.peek(e.name)  # type: ignore[attr-defined]
            if v is not None and v.size is not None:
                return v.size
        return None

    def size_or_unknown(self, x: Expr | Node) -> Est:
        if isinstance(x, Node):
            return x.size if x.size is not None else UNKNOWN
        s = self.size(x)
        return s if s is not None else UNKNOWN

    def entry(self, e: Expr) -> tuple[str, Est, Est] | None:
        s = self.entries.get(e.id)
        if s is not None:
            return s
        if type(e) is Ident:
            v = self.peek(e.name)  # type: ignore[attr-defined]
            if v is not None and v.entry is not None:
                return v.entry
        return None

    # the walk
    def ident(self, e: Ident) -> None:
        s = self.vars.get(e.name)
        v = s[-1] if s else None
        if v is None:
            self.paths[e.id] = (e.name,)
        elif v.path is not None:
            self.paths[e.id] = v.path
        else:
            self.paths.pop(e.id, None)
        self.ret = _ONE_EST

    def visit(self, e: Expr) -> Generator[Expr, None, None] | None:
        k = type(e)
        if k is Const:
            self.ret = _ZERO
            return None
        if k is Ident:
            self.ident(e)  # type: ignore[arg-type]
            return None
        if k is Select:
            op = e.operand  # type: ignore[attr-defined]
            if type(op) is Ident:  # `x.f`: no generator
                self.ident(op)
                if not e.test_only:  # type: ignore[attr-defined]
                    self.select(e)  # type: ignore[arg-type]
                return None
            return self.cost_select(e)  # type: ignore[arg-type]
        if k is Call:
            refs = self.refs.get(e.id)
            if refs in _LOGICAL_IDS:
                return self.cost_logical(e)  # type: ignore[arg-type]
            if (
                e.function != "dyn"  # type: ignore[attr-defined]
                and all(map(_leafy, e.args))  # type: ignore[attr-defined]
                and (e.target is None or _leafy(e.target))  # type: ignore[attr-defined]
            ):
                self.call_inline(e)  # type: ignore[arg-type]
                return None
            return self.cost_call(e)  # type: ignore[arg-type]
        return self.cost_other(e)

    def cost_logical(self, e: Call) -> Generator[Expr, None, None]:
        """A tree of `&&`/`||` in one generator (a long chain is a balanced tree of them): the cost of the
        left side, at most both; the operands' sizes play no part."""
        refs = self.refs
        stack: list[tuple[Expr, bool]] = [(e, False)]
        costs: list[Est] = []
        while stack:
            x, done = stack.pop()
            if done:
                rhs = costs.pop()
                lhs = costs.pop()
                self.set_size(x)
                costs.append(union((U64, 0), (lhs[0], add(lhs, rhs)[1])))
                continue
            if type(x) is Call and x.function != "dyn" and refs.get(x.id) in _LOGICAL_IDS:
                stack.append((x, True))
                a, b = x.args  # type: ignore[attr-defined]
                stack.append((b, False))
                stack.append((a, False))
                continue
            g = self.visit(x)
            if g is not None:
                yield from g
            costs.append(self.ret)
        self.ret = costs[0]

    def leaf(self, a: Expr) -> Est | None:
        """The cost of a leaf or of `x.f` computed on the spot; None for the others (walked as usual)."""
        k = type(a)
        if k is Const:
            return _ZERO
        if k is Ident:
            self.ident(a)  # type: ignore[arg-type]
            return _ONE_EST
        if k is Select and type(a.operand) is Ident:  # type: ignore[attr-defined]
            self.visit(a)
            return self.ret
        return None

    def set_size(self, e: Expr) -> None:
        result = self.call_size(e)
        if result is not None:
            self.sizes[e.id] = result

    def call_size(self, e: Expr) -> Est | None:
        """`size(e)` for a Call node."""
        s = self.sizes.get(e.id)
        if s is not None:
            return s
        p = self.paths.get(e.id)
        if p and p[0] == "device":
            s = dra_size(p)
            if s is not None:
                self.sizes[e.id] = s
                return s
        tt = self.types.get(e.id, t.DYN_T)
        if tt.kind in _SCALARS or _scalar(tt):
            return _ONE_EST
        return None

    def select(self, e: Select) -> None:
        """After the operand's cost is in `ret`: the cost and path of a field selection."""
        sc = self.ret
        if self.type(e.operand).kind in _SELECT_COSTS:
            sc = (sat_add(sc[0], 1), sat_add(sc[1], 1))
        p = self.path(e.operand)
        self.paths[e.id] = (*p, e.field) if p else (e.field,)
        self.ret = sc

    def cost_select(self, e: Select) -> Generator[Expr, None, None]:
        yield e.operand
        if not e.test_only:  # presence tests cost nothing in Kubernetes
            self.select(e)

    def cost_other(self, e: Expr) -> Generator[Expr, None, None]:
        if isinstance(e, ListExpr):
            s: Est = (0, 0)
            item: Est = (0 if not e.elements else U64, 0)
            for x in e.elements:
                yield x
                s = add(s, self.ret)
                item = union(item, self.size_or_unknown(x))
            self.entries[e.id] = (t.LIST, (1, 1), item)
            self.ret = add(s, (10, 10))
            return
        if isinstance(e, MapExpr):
            ms: Est = (0, 0)
            ks: Est = (0 if not e.entries else U64, 0)
            vs: Est = (0 if not e.entries else U64, 0)
            for en in e.entries:
                yield en.key
                ms = add(ms, self.ret)
                yield en.value
                ms = add(ms, self.ret)
                ks = union(ks, self.size_or_unknown(en.key))
                vs = union(vs, self.size_or_unknown(en.value))
            self.entries[e.id] = (t.MAP, ks, vs)
            self.ret = add(ms, (30, 30))
            return
        if isinstance(e, StructExpr):
            fs: Est = (0, 0)
            for f in e.fields:
                yield f.value
                fs = add(fs, self.ret)
            self.ret = add(fs, (40, 40))
            return
        if isinstance(e, Comprehension):
            if _is_bind(e):
                yield e.iter_range
                bs = self.ret
                yield e.accu_init
                bs = add(bs, self.ret)
                self.push(e.accu_var, self.local(e.accu_init))
                yield e.result
                bs = add(bs, self.ret)
                self.pop(e.accu_var)
                self.copy_sizes(e, e.result)
                self.ret = bs
                return
            yield from self.cost_comprehension(e)
            return
        self.ret = _ZERO

    def local(self, e: Expr) -> _Var:
        return _Var(self.path(e), self.size(e), self.entry(e))

    def copy_sizes(self, dst: Expr, src: Expr) -> None:
        s = self.size(src)
        if s is not None:
            self.sizes[dst.id] = s
        en = self.entry(src)
        if en is not None:
            self.entries[dst.id] = en

    def cost_comprehension(self, e: Comprehension) -> Generator[Expr, None, None]:
        yield e.iter_range
        s = self.ret
        yield e.accu_init
        s = add(s, self.ret)
        self.push(e.accu_var, self.local(e.accu_init))
        rng = e.iter_range
        en = self.entry(rng)
        container = en[0] if en is not None else self.type(rng).kind
        base = self.path(rng) or ()
        if e.iter_var2:
            key_sub = "@indices" if container == t.LIST else "@keys"
            val_sub = "@items" if container == t.LIST else "@values"
            self.push(e.iter_var, _Var((*base, key_sub), en[1] if en else None, None))
            self.push(e.iter_var2, _Var((*base, val_sub), en[2] if en else None, None))
        else:
            if container == t.LIST:
                self.push(e.iter_var, _Var((*base, "@items"), en[2] if en else None, None))
            else:
                self.push(e.iter_var, _Var((*base, "@keys"), en[1] if en else None, None))
        yield e.loop_condition
        loop = self.ret
        yield e.loop_step
        step = self.ret
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        yield e.result
        s = add(s, self.ret)
        self.pop(e.accu_var)
        count = self.size_or_unknown(rng)
        s = add(s, mul(count, add(step, loop)))
        init = e.accu_init
        if isinstance(init, Const):
            sz = self.size(init)
            if sz is not None:
                self.sizes[e.id] = sz
        elif isinstance(init, ListExpr | MapExpr):
            self.sizes[e.id] = count
            step_entry = self.entry(e.loop_step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        self.ret = s

    def cost_call(self, e: Call) -> Generator[Expr, None, None]:
        args = e.args
        if e.function == "dyn" and len(args) == 1:
            yield args[0]
            c = self.ret
            self.copy_sizes(e, args[0])
            self.ret = add((1, 1), c)
            return
        ids = self.refs.get(e.id, ())
        arg_costs: list[Est] = []
        arg_nodes: list[Node] = []
        for a in args:
            ac = self.leaf(a)
            if ac is None:
                yield a
                ac = self.ret
            arg_costs.append(ac)
            arg_nodes.append(self.node(a))
        if not ids:
            self.ret = _ZERO
            return
        total: Est = (0, 0)
        target: Node | None = None
        if e.target is not None and e.id not in self._namespaced:
            tc = self.leaf(e.target)
            if tc is None:
                yield e.target
                tc = self.ret
            total = add(total, tc)
            target = self.node(e.target)
        self.finish_call(e, ids, target, arg_nodes, arg_costs, total)

    def call_inline(self, e: Call) -> None:
        """`cost_call` for a call whose operands are all leaves (see `leaf`), without a generator."""
        ids = self.refs.get(e.id, ())
        arg_costs: list[Est] = []
        arg_nodes: list[Node] = []
        for a in e.args:
            arg_costs.append(self.leaf(a))  # type: ignore[arg-type]
            arg_nodes.append(self.node(a))
        if not ids:
            self.ret = _ZERO
            return
        total: Est = (0, 0)
        target: Node | None = None
        if e.target is not None and e.id not in self._namespaced:
            total = add(total, self.leaf(e.target))  # type: ignore[arg-type]
            target = self.node(e.target)
        self.finish_call(e, ids, target, arg_nodes, arg_costs, total)

    def finish_call(
        self,
        e: Call,
        ids: tuple[str, ...],
        target: Node | None,
        arg_nodes: list[Node],
        arg_costs: list[Est],
        total: Est,
    ) -> None:
        args = e.args
        fn_cost: Est = (U64, 0)
        result: Est | None = None
        for oid in ids:
            c, rs = self.function_cost(e, oid, target, arg_nodes, arg_costs)
            fn_cost = union(fn_cost, c)
            if rs is not None:
                result = rs if result is None else union(result, rs)
            if oid in ("index_list", "index_map") and args:
                en = self.entry(args[0])
                result = en[2] if en is not None else None
                p = self.path(args[0])
                self.paths[e.id] = (
                    (*p, "@items" if oid == "index_list" else "@values")
                    if p
                    else ("@items" if oid == "index_list" else "@values",)
                )
            if result is None:
                result = self.call_size(e)
        if result is not None:
            self.sizes[e.id] = result
        self.ret = add(total, fn_cost)

    _namespaced: frozenset[int] = frozenset()

    def function_cost(
        self, e: Call, oid: str, target: Node | None, args: list[Node], arg_costs: list[Est]
    ) -> tuple[Est, Est | None]:
        arg_sum: Est = (0, 0)
        for c in arg_costs:
            arg_sum = add(arg_sum, c)
        est = overload_estimate(self, oid, target, args) if oid.startswith("list") else None
        if est is None and e.function in K8S_FNS:
            est = k8s_estimate(self, e.function, oid, target, args)
        if est is not None:
            return add(est[0], arg_sum), est[1]
        # the branches below are on distinct overload ids: the most frequent first
        if oid in _COMPARE_SIZED:
            lhs, rhs = self.size_or_unknown(args[0]), self.size_or_unknown(args[1])
            smallest = min(lhs[1], rhs[1])
            return add(by_factor((1 if smallest > 0 else 0, smallest), STRING_FACTOR), arg_sum), None
        if oid in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return (lhs[0], add(lhs, rhs)[1]), None
        if oid == "string_format" and target is not None:
            return add(by_factor(self.size_or_unknown(target), STRING_FACTOR), arg_sum), None
        if oid in ("string_to_bytes", "bytes_to_string", "strings_quote") and len(args) == 1:
            sz = self.size_or_unknown(args[0])
            res = {
                "string_to_bytes": (sz[0], sat_mul(sz[1], 4)),
                "bytes_to_string": (sz[0] // 4, sz[1]),
                "strings_quote": (sat_add(sz[0], 2), sat_add(sat_mul(sz[1], 2), 2)),
            }[oid]
            return add(by_factor(sz, STRING_FACTOR), arg_sum), res
        if oid in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return add(by_factor(self.size_or_unknown(args[0]), STRING_FACTOR), arg_sum), None
        if oid == "in_list" and len(args) == 2:
            return add(by_factor(self.size_or_unknown(args[1]), 1), arg_sum), None
        if oid == "matches_string" and target is not None and len(args) == 1:
            s = by_factor(add(self.size_or_unknown(target), (1, 1)), STRING_FACTOR)
            r = by_factor(self.size_or_unknown(args[0]), REGEX_FACTOR)
            return add(mul(s, r), arg_sum), None
        if oid == "contains_string" and target is not None and len(args) == 1:
            s = by_factor(self.size_or_unknown(target), STRING_FACTOR)
            r = by_factor(self.size_or_unknown(args[0]), STRING_FACTOR)
            return add(mul(s, r), arg_sum), None
        if oid == "conditional":
            size = union(self.size_or_unknown(args[1]), self.size_or_unknown(args[2]))
            a, b = self.entry(e.args[1]), self.entry(e.args[2])
            if a is not None and b is not None:
                self.entries[e.id] = (a[0], union(a[1], b[1]), union(a[2], b[2]))
            return add(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
        if oid in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            res = add(self.size_or_unknown(args[0]), self.size_or_unknown(args[1]))
            a, b = self.entry(e.args[0]), self.entry(e.args[1])
            if a is not None and b is not None:
                self.entries[e.id] = (a[0], union(a[1], b[1]), union(a[2], b[2]))
            if oid == "add_list":
                return add((1, 1), arg_sum), res
            return add(by_factor(res, STRING_FACTOR), arg_sum), res
        return add((1, 1), arg_sum), None


_SELECT_COSTS = frozenset({t.MAP, t.STRUCT, t.TYPE_PARAM})
_LOGICAL_OR = ("logical_or",)
_LOGICAL_AND = ("logical_and",)
_LOGICAL_IDS = frozenset({_LOGICAL_OR, _LOGICAL_AND})
_COMPARE_SIZED = frozenset(
    {
        "less_string",
        "greater_string",
        "less_equals_string",
        "greater_equals_string",
        "less_bytes",
        "greater_bytes",
        "less_equals_bytes",
        "greater_equals_bytes",
        "equals",
        "not_equals",
    }
)


_SCALARS = frozenset({t.BOOL, t.DOUBLE, t.DURATION, t.INT, t.TIMESTAMP, t.UINT})


def _leafy(e: Expr) -> bool:
    """Operands `_Coster.leaf` computes on the spot."""
    k = type(e)
    return k is Const or k is Ident or (k is Select and type(e.operand) is Ident)  # type: ignore[attr-defined]


def _scalar(tt: Type) -> bool:
    if tt.kind in _SCALARS:
        return True
    return tt.kind == t.OPAQUE and tt.name == "optional_type" and _scalar(tt.params[0])


def _is_bind(e: Comprehension) -> bool:
    r, cond = e.iter_range, e.loop_condition
    return (
        isinstance(r, ListExpr)
        and not r.elements
        and isinstance(cond, Const)
        and cond.kind == "bool"
        and cond.value is False
        and e.accu_var != "__result__"
    )


def estimate_cost(parsed: ParsedExpr, checked: Checked) -> int:
    """The estimated maximum cost of evaluating the expression once (cel-go's CostEstimate.Max); the size
    model is the newest device declaration whatever the gates, as upstream's."""
    c = _Coster(checked)
    c._namespaced = frozenset(checked.qualified)
    visit = c.visit
    g = visit(parsed.expr)
    if g is not None:
        stack = [g]
        push, pop = stack.append, stack.pop
        while stack:
            child = next(stack[-1], None)
            if child is None:
                pop()
                continue
            g = visit(child)
            if g is not None:
                push(g)
    return int(c.ret[1])
