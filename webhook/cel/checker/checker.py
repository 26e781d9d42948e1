"""The CEL type checker, a port of cel-go's `checker/` (overload resolution with type parameters,
dyn/any, optional types, CrossTypeNumericComparisons) over the DRA environment's declarations.

    check(parsed, env) -> Checked(types, refs, issues)

The walk runs on an explicit stack of generators, so any accepted AST depth is safe.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field

from webhook.cel.checker import decls
from webhook.cel.checker import types as t
from webhook.cel.checker.types import Type
from webhook.cel.common.ast import (
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
from webhook.cel.common.errors import Issue

_LOGICAL = {"_&&_": "logical_and", "_||_": "logical_or"}
_CONST_TYPES = {
    "null": t.NULL_T,
    "bool": t.BOOL_T,
    "int": t.INT_T,
    "uint": t.UINT_T,
    "double": t.DOUBLE_T,
    "string": t.STRING_T,
    "bytes": t.BYTES_T,
}


class Env:
    """Declarations visible to the checker: variables, struct types and their fields, functions. Also the
    environment's memo of overload resolutions over ground argument types (see `_Checker.resolve`)."""

    __slots__ = ("variables", "structs", "functions", "resolved", "_plans", "prefixes")

    def __init__(
        self,
        variables: dict[str, Type],
        structs: dict[str, dict[str, Type]],
        functions: dict[str, list[decls.Overload]],
    ) -> None:
        self.variables = variables
        self.structs = structs
        self.functions = functions
        # first components of the dotted variable names (`net` of `net.IP`): a selection on any other
        # identifier cannot name a qualified identifier
        self.prefixes = frozenset(name.split(".", 1)[0] for name in variables if "." in name)
        # (function, member, argument types) -> (result type, overload ids, fresh type variables used);
        # result None: no overload matches. Bounded: at most RESOLVED_MAX entries.
        self.resolved: dict[tuple[str, bool, tuple[Type, ...]], tuple[Type | None, tuple[str, ...], int]] = {}
        self._plans: dict[tuple[str, bool], list[tuple[decls.Overload, bool]]] = {}

    def candidates(self, fn: str, member: bool) -> list[tuple[decls.Overload, bool]]:
        """The overloads of `fn` callable as a member (or global) call, each with whether it has type
        parameters; from the declarations, in declaration order."""
        key = (fn, member)
        plan = self._plans.get(key)
        if plan is None:
            plan = [(ov, bool(ov.type_params)) for ov in self.functions.get(fn, ()) if ov.member == member]
            if len(self._plans) < 4096:
                self._plans[key] = plan
        return plan


RESOLVED_MAX = 4096
_MEMO_TYPE_NODES = 12  # only argument types this small are memoised (bounds the memo's size in bytes)


def _ground_size(types: tuple[Type, ...]) -> int:
    """The number of type nodes in `types`, or a large number if a type parameter occurs in them."""
    n = 0
    stack = list(types)
    while stack:
        x = stack.pop()
        if x.kind == t.TYPE_PARAM:
            return 1 << 30
        n += 1
        if x.params:
            stack.extend(x.params)
    return n


def dra_env(*, list_attributes: bool, consumable_capacity: bool, stored: bool = False) -> Env:
    """The DRA selector environment. `stored`: StoredExpressions (every gated declaration present)."""
    if stored:
        list_attributes = consumable_capacity = True
    variables: dict[str, Type] = {"device": decls.DEVICE_T}
    for name, tt in decls.TYPE_IDENTS.items():
        variables[name] = t.type_of(tt)
    variables[decls.DEVICE_T.name] = t.type_of(decls.DEVICE_T)
    functions = dict(decls.FUNCTIONS)
    if list_attributes:
        functions["includes"] = [decls.INCLUDES]
    fields = decls.device_type(list_attributes=list_attributes, consumable_capacity=consumable_capacity)
    return Env(variables, {decls.DEVICE_T.name: fields}, functions)


@dataclass
class Checked:
    """The checker's side tables: id -> type, id -> resolved overload ids or identifier name."""

    types: dict[int, Type] = field(default_factory=dict)
    refs: dict[int, tuple[str, ...]] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    # Calls written on a namespace (`optional.of(x)`, `sets.contains(a, b)`) and selections that name a
    # qualified identifier (`net.IP`): id -> the global function / identifier name they resolve to.
    qualified: dict[int, str] = field(default_factory=dict)
    # Names of the functions called in the expression that the AST validators and the planning checks
    # look at (`webhook.cel.compiler`), and whether it holds list or map literals of two or more entries.
    calls: set[str] = field(default_factory=set)
    aggregates: bool = False


# Functions whose calls the validators (duration, timestamp, matches, format) or the planning checks
# (constant conversions, constant regexes) inspect.
WATCHED = frozenset(
    {"duration", "timestamp", "matches", "format", "find", "findAll"}
    | {"bool", "bytes", "double", "dyn", "int", "string", "type", "uint"}
)

_Gen = Generator[Expr, None, None]
_NOT_GROUND = (None, (), -1)


class _Checker:
    def __init__(self, parsed: ParsedExpr, env: Env) -> None:
        self.parsed = parsed
        self.env = env
        self.types: dict[int, Type] = {}
        self.refs: dict[int, tuple[str, ...]] = {}
        self.issues: list[Issue] = []
        self.m: t.Mapping = {}
        self.counter = 0
        self.scopes: list[dict[str, Type]] = []
        self.idents: dict[int, str] = {}  # Select nodes resolved as qualified identifiers
        self.calls: set[str] = set()
        self.aggregates = False
        self.params_seen = False  # whether a type parameter may occur in `types` (else no final substitution)

    def error(self, node_id: int, message: str) -> None:
        line, col = self.parsed.source.location(node_id)
        self.issues.append(Issue(line, col, message))

    def new_var(self) -> Type:
        v = t.param(f"_var{self.counter}")
        self.counter += 1
        self.params_seen = True
        return v

    def assignable(self, t1: Type, t2: Type) -> bool:
        return t.assign(self.m, t1, t2)

    def sub(self, tt: Type) -> Type:
        if tt.params or tt.kind == t.TYPE_PARAM:
            return t.substitute(self.m, tt, False)
        return tt

    # identifiers
    def local(self, name: str) -> Type | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def resolve_simple(self, name: str) -> tuple[str, Type] | None:
        loc = self.local(name) if self.scopes else None
        if loc is not None and not name.startswith("."):
            return name, loc
        cand = name[1:] if name.startswith(".") else name
        g = self.env.variables.get(cand)
        if g is not None:
            return ("." + cand if loc is not None else cand), g
        return None

    def _bind_qualified(self, eid: int, resolved: tuple[str, Type]) -> None:
        """Record a select chain resolved as one qualified identifier (a namespaced name or enum)."""
        name, tt = resolved
        self.types[eid] = tt
        self.refs[eid] = (name,)
        self.idents[eid] = name
        if tt.params and t.has_params(tt):
            self.params_seen = True

    def resolve_qualified(self, qualifiers: list[str]) -> tuple[str, Type] | None:
        if len(qualifiers) == 1:
            return self.resolve_simple(qualifiers[0])
        if self.scopes and self.local(qualifiers[0]) is not None and not qualifiers[0].startswith("."):
            return None
        name = ".".join(qualifiers)
        cand = name[1:] if name.startswith(".") else name
        g = self.env.variables.get(cand)
        return (cand, g) if g is not None else None

    def function(self, name: str) -> list[decls.Overload] | None:
        cand = name[1:] if name.startswith(".") else name
        return self.env.functions.get(cand)

    # the walk: leaves are typed on the spot, other nodes by a generator that yields their children
    def run(self, root: Expr) -> None:
        start = self.start
        g = start(root)
        if g is None:
            return
        stack: list[_Gen] = [g]
        push = stack.append
        pop = stack.pop
        while stack:
            child = next(stack[-1], None)
            if child is None:
                pop()
                continue
            g = start(child)
            if g is not None:
                push(g)

    def start(self, e: Expr) -> _Gen | None:
        k = type(e)
        if k is Const:
            self.types[e.id] = _CONST_TYPES[e.kind]  # type: ignore[attr-defined]
            return None
        if k is Ident:
            self.check_ident(e)  # type: ignore[arg-type]
            return None
        if k is Call:
            if e.target is None:  # type: ignore[attr-defined]
                fn = e.function  # type: ignore[attr-defined]
                if fn != "_?._" and all(map(_inlinable, e.args)):  # type: ignore[attr-defined]
                    self.call_inline(e)  # type: ignore[arg-type]
                    return None
                if fn == "_&&_" or fn == "_||_":
                    return self.check_logical(e)  # type: ignore[arg-type]
            return self.check_call(e)  # type: ignore[arg-type]
        if k is Select:
            if type(e.operand) is Ident:  # type: ignore[attr-defined]
                self.select_inline(e)  # type: ignore[arg-type]
                return None
            return self.check_select(e)  # type: ignore[arg-type]
        if k is ListExpr:
            return self.check_list(e)  # type: ignore[arg-type]
        if k is MapExpr:
            return self.check_map(e)  # type: ignore[arg-type]
        if k is StructExpr:
            return self.check_struct(e)  # type: ignore[arg-type]
        if k is Comprehension:
            return self.check_comprehension(e)  # type: ignore[arg-type]
        self.error(e.id, f"unexpected unspecified type: {type(e).__name__}")
        return None

    def check_ident(self, e: Ident) -> None:
        r = self.resolve_simple(e.name)
        if r is not None:
            tt = r[1]
            self.types[e.id] = tt
            self.refs[e.id] = (r[0],)
            if tt.params and not self.params_seen and t.has_params(tt):
                self.params_seen = True
            return
        self.types[e.id] = t.ERROR_T
        self.error(e.id, f"undeclared reference to '{e.name}' (in container '')")

    def leaf(self, e: Expr) -> None:
        """Type a node `_inlinable` accepts."""
        k = type(e)
        if k is Const:
            self.types[e.id] = _CONST_TYPES[e.kind]  # type: ignore[attr-defined]
        elif k is Ident:
            self.check_ident(e)  # type: ignore[arg-type]
        else:
            self.select_inline(e)  # type: ignore[arg-type]

    def select_inline(self, e: Select) -> None:
        """`check_select` for a selection on an identifier, without a generator."""
        op = e.operand
        assert type(op) is Ident
        name = op.name
        if not e.test_only and (name[1:] if name.startswith(".") else name) in self.env.prefixes:
            r = self.resolve_qualified([name, e.field])
            if r is not None:
                self._bind_qualified(e.id, r)
                return
        self.check_ident(op)
        result = self.field_result(e.id, op, e.field, False)
        self.types[e.id] = t.BOOL_T if e.test_only else self.sub(result)

    def call_inline(self, e: Call) -> None:
        """`check_call` for a global call whose arguments are all `_inlinable`, without a generator."""
        fn = e.function
        if fn in WATCHED:
            self.calls.add(fn)
        for a in e.args:
            self.leaf(a)
        if fn == "_&&_" or fn == "_||_":
            self.logical(e, fn)
            return
        if self.function(fn) is None:
            self.error(e.id, f"undeclared reference to '{fn}' (in container '')")
            self.types[e.id] = t.ERROR_T
            return
        self.resolve(e, fn, None)

    def check_logical(self, e: Call) -> _Gen:
        """A tree of `&&`/`||` (a long chain is a balanced tree of them) in one generator: operands in
        order, each operator after both of its operands, as `check_call` would."""
        stack: list[tuple[Expr, bool]] = [(e, False)]
        while stack:
            x, done = stack.pop()
            if done:
                self.logical(x, x.function)  # type: ignore[arg-type, attr-defined]
                continue
            if type(x) is Call and x.target is None and x.function in _LOGICAL:  # type: ignore[attr-defined]
                stack.append((x, True))
                a, b = x.args  # type: ignore[attr-defined]
                stack.append((b, False))
                stack.append((a, False))
                continue
            g = self.start(x)
            if g is not None:
                yield from g

    def check_select(self, e: Select) -> _Gen:
        if not e.test_only:
            quals: list[str] = []
            cur: Expr = e
            while type(cur) is Select and not cur.test_only:  # type: ignore[attr-defined]
                quals.append(cur.field)  # type: ignore[attr-defined]
                cur = cur.operand  # type: ignore[attr-defined]
            if type(cur) is Ident:
                quals.append(cur.name)  # type: ignore[attr-defined]
                r = self.resolve_qualified(quals[::-1])
                if r is not None:
                    self._bind_qualified(e.id, r)
                    return
        result = yield from self.select_field(e.id, e.operand, e.field, False)
        if e.test_only:
            result = t.BOOL_T
        self.types[e.id] = self.sub(result)

    def select_field(
        self, node_id: int, operand: Expr, name: str, optional: bool
    ) -> Generator[Expr, None, Type]:
        yield operand
        return self.field_result(node_id, operand, name, optional)

    def field_result(self, node_id: int, operand: Expr, name: str, optional: bool) -> Type:
        """The type of selecting `name` on the (typed) operand."""
        op_type = self.sub(self.types[operand.id])
        target, is_opt = t.unwrap_optional(op_type)
        result = t.ERROR_T
        kind = target.kind
        if kind == t.MAP:
            result = target.params[1]
        elif kind == t.STRUCT:
            ft = self.field_type(node_id, target.name, name)
            if ft is not None:
                result = ft
        elif kind == t.TYPE_PARAM:
            self.assignable(t.DYN_T, target)
            result = t.DYN_T
        else:
            if not t.is_dyn_or_error(target):
                self.error(node_id, f"type '{t.format_type(target)}' does not support field selection")
            result = t.DYN_T
        if is_opt or optional:
            return t.optional_of(result)
        return result

    def field_type(self, node_id: int, struct: str, name: str) -> Type | None:
        fields = self.env.structs.get(struct)
        if fields is None:
            self.error(node_id, f"unexpected failed resolution of '{struct}'")
            return None
        ft = fields.get(name)
        if ft is None:
            self.error(node_id, f"undefined field '{name}'")
        return ft

    def check_call(self, e: Call) -> _Gen:
        fn = e.function
        if fn in WATCHED:
            self.calls.add(fn)
        if fn == "_?._":
            yield from self.check_opt_select(e)
            return
        yield from e.args
        if e.target is None:
            if fn == "_&&_" or fn == "_||_":
                self.logical(e, fn)
                return
            if self.function(fn) is None:
                self.error(e.id, f"undeclared reference to '{fn}' (in container '')")
                self.types[e.id] = t.ERROR_T
                return
            self.resolve(e, fn, None)
            return
        qual = _qualified_name(e.target)
        if qual is not None:
            name = qual + "." + fn
            if self.function(name) is not None:
                self.idents[e.id] = name
                self.resolve(e, name, None)
                return
        yield e.target
        if self.function(fn) is not None:
            self.resolve(e, fn, e.target)
            return
        self.types[e.id] = t.ERROR_T
        self.error(e.id, f"undeclared reference to '{fn}' (in container '')")

    def check_opt_select(self, e: Call) -> _Gen:
        if len(e.args) != 2 or e.target is not None:
            kind = " member call with" if e.target is not None else ""
            self.error(
                e.id,
                f"unsupported optional field selection: incorrect signature.{kind} argument count: {len(e.args)}",
            )
            return
        operand, fld = e.args
        if not (isinstance(fld, Const) and fld.kind == "string"):
            self.error(fld.id, "unsupported optional field selection")
            return
        assert isinstance(fld.value, str)
        result = yield from self.select_field(e.id, operand, fld.value, True)
        self.types[e.id] = self.sub(result)
        self.refs[e.id] = ("select_optional_field",)

    def logical(self, e: Call, fn: str) -> None:
        """`_&&_` / `_||_`: each argument must be assignable to bool (one error per argument)."""
        ok = True
        for a in e.args:
            at = self.types[a.id]
            if at is t.BOOL_T:
                continue
            if not self.assignable(at, t.BOOL_T):
                self.error(a.id, f"expected type 'bool' but found '{t.format_type(at)}'")
                ok = False
        if not ok:
            self.types[e.id] = t.ERROR_T
            return
        self.types[e.id] = t.BOOL_T
        self.refs[e.id] = (_LOGICAL[fn],)

    def resolve(self, e: Call, fn: str, target: Expr | None) -> None:
        """Overload resolution of `fn` (as written: its declaration is looked up without a leading dot).
        Over ground argument types (no type parameter) the outcome does not depend on the bindings made so
        far, so the environment memoises it, with the number of fresh type variables the resolution used
        (their names must advance as cel-go's do)."""
        lookup = fn[1:] if fn.startswith(".") else fn
        types = self.types
        if target is None:
            arg_types = tuple([types[a.id] for a in e.args])
        else:
            arg_types = (types[target.id], *[types[a.id] for a in e.args])
        member = target is not None
        key = (lookup, member, arg_types)
        memo = self.env.resolved
        hit = memo.get(key)
        if hit is None:
            if _ground_size(arg_types) <= _MEMO_TYPE_NODES:
                before = self.counter
                saved, self.m = self.m, {}
                result, ids = self.match(lookup, member, list(arg_types))
                self.m = saved
                if result is None or not t.has_params(result):
                    hit = (result, ids, self.counter - before)
                    if len(memo) < RESOLVED_MAX:
                        memo[key] = hit
                    self.counter = before
                else:
                    hit = _NOT_GROUND
                    self.counter = before
            else:
                hit = _NOT_GROUND
        if hit[2] >= 0:
            result, ids, fresh = hit
            self.counter += fresh
        else:
            result, ids = self.match(lookup, member, list(arg_types))
        if result is None:
            shown = [t.substitute(self.m, a, True) for a in arg_types]
            self.error(
                e.id,
                f"found no matching overload for '{fn}' applied to '{_signature(shown, member)}'",
            )
            self.types[e.id] = t.ERROR_T
            return
        self.types[e.id] = result
        self.refs[e.id] = ids

    def match(self, fn: str, member: bool, arg_types: list[Type]) -> tuple[Type | None, tuple[str, ...]]:
        """cel-go's resolveOverload: every overload whose signature the arguments fit, binding type variables."""
        result: Type | None = None
        ids: list[str] = []
        m = self.m
        for ov, generic in self.env.candidates(fn, member):
            cand_args: list[Type] = list(ov.args)
            res = ov.result
            if generic:
                fresh = {p: self.new_var() for p in ov.type_params}
                cand_args = [t.rename_params(a, fresh) for a in cand_args]
                res = t.rename_params(res, fresh)
            if not t.assign_list(m, arg_types, cand_args):
                continue
            ids.append(ov.id)
            fn_result = self.sub(res)
            if result is None:
                result = fn_result
            elif not t.is_dyn(result) and fn_result != result:
                result = t.DYN_T
        return result, tuple(ids)

    def join(self, e: Expr, prev: Type | None, cur: Type) -> Type:
        if prev is None:
            return cur
        if self.assignable(prev, cur):
            return t.most_general(prev, cur)
        return t.DYN_T  # mixed literals are reported by the homogeneous-literal validator

    def check_list(self, e: ListExpr) -> _Gen:
        elem: Type | None = None
        optional = set(e.optional_indices)
        if len(e.elements) > 1:
            self.aggregates = True
        for i, x in enumerate(e.elements):
            yield x
            et = self.types[x.id]
            if i in optional:
                et, is_opt = t.unwrap_optional(et)
                if not is_opt and not t.is_dyn(et):
                    self.error(
                        x.id,
                        f"expected type '{t.format_type(t.optional_of(et))}' but found '{t.format_type(et)}'",
                    )
            elem = self.join(x, elem, et)
        self.types[e.id] = t.list_of(elem if elem is not None else self.new_var())

    def check_map(self, e: MapExpr) -> _Gen:
        kt: Type | None = None
        vt: Type | None = None
        if len(e.entries) > 1:
            self.aggregates = True
        for en in e.entries:
            yield en.key
            kt = self.join(en.key, kt, self.types[en.key.id])
            yield en.value
            v = self.types[en.value.id]
            if en.optional:
                v, is_opt = t.unwrap_optional(v)
                if not is_opt and not t.is_dyn(v):
                    self.error(
                        en.value.id,
                        f"expected type '{t.format_type(t.optional_of(v))}' but found '{t.format_type(v)}'",
                    )
            vt = self.join(en.value, vt, v)
        if kt is None or vt is None:
            kt, vt = self.new_var(), self.new_var()
        self.types[e.id] = t.map_of(kt, vt)

    def check_struct(self, e: StructExpr) -> _Gen:
        name = e.type_name[1:] if e.type_name.startswith(".") else e.type_name
        fields = self.env.structs.get(name)
        if fields is None:
            self.error(e.id, f"undeclared reference to '{e.type_name}' (in container '')")
            self.types[e.id] = t.ERROR_T
            return
        self.types[e.id] = t.struct(name)
        self.refs[e.id] = (name,)
        for f in e.fields:
            yield f.value
            ft = fields.get(f.name)
            if ft is None:
                self.error(f.id, f"undefined field '{f.name}'")
                ft = t.ERROR_T
            vt = self.types[f.value.id]
            if f.optional:
                vt, is_opt = t.unwrap_optional(vt)
                if not is_opt and not t.is_dyn(vt):
                    self.error(
                        f.value.id,
                        f"expected type '{t.format_type(t.optional_of(vt))}' but found '{t.format_type(vt)}'",
                    )
            if not self.assignable(ft, vt):
                self.error(
                    f.id,
                    f"expected type of field '{f.name}' is '{t.format_type(ft)}' but provided type is "
                    f"'{t.format_type(vt)}'",
                )

    def check_comprehension(self, e: Comprehension) -> _Gen:
        yield e.iter_range
        yield e.accu_init
        rng = self.sub(self.types[e.iter_range.id])
        accu = self.types[e.accu_init.id]
        self.scopes.append({e.accu_var: accu})
        two = bool(e.iter_var2)
        v1: Type
        v2: Type | None = None
        if rng.kind == t.LIST:
            v1 = rng.params[0]
            if two:
                v2, v1 = v1, t.INT_T
        elif rng.kind == t.MAP:
            v1 = rng.params[0]
            if two:
                v2 = rng.params[1]
        elif rng.kind in (t.DYN, t.ERROR, t.TYPE_PARAM):
            self.assignable(t.DYN_T, rng)
            v1 = t.DYN_T
            v2 = t.DYN_T if two else None
        else:
            self.error(
                e.iter_range.id,
                f"expression of type '{t.format_type(rng)}' cannot be range of a comprehension "
                "(must be list, map, or dynamic)",
            )
            v1 = t.ERROR_T
            v2 = t.ERROR_T if two else None
        scope = {e.iter_var: v1}
        if two and v2 is not None:
            scope[e.iter_var2] = v2
        self.scopes.append(scope)
        yield e.loop_condition
        self.assert_type(e.loop_condition, t.BOOL_T)
        yield e.loop_step
        self.assert_type(e.loop_step, accu)
        self.scopes.pop()
        yield e.result
        self.scopes.pop()
        self.types[e.id] = self.sub(self.types[e.result.id])

    def assert_type(self, e: Expr, tt: Type) -> None:
        if not self.assignable(tt, self.types[e.id]):
            self.error(
                e.id, f"expected type '{t.format_type(tt)}' but found '{t.format_type(self.types[e.id])}'"
            )


def _inlinable(e: Expr) -> bool:
    """Nodes the walk types without a generator: leaves and selections on an identifier."""
    k = type(e)
    return k is Const or k is Ident or (k is Select and type(e.operand) is Ident)  # type: ignore[attr-defined]


def _qualified_name(e: Expr) -> str | None:
    parts: list[str] = []
    while isinstance(e, Select):
        if e.test_only:
            return None
        parts.append(e.field)
        e = e.operand
    if isinstance(e, Ident):
        parts.append(e.name)
        return ".".join(reversed(parts))
    return None


def _signature(args: list[Type], member: bool) -> str:
    shown = [t.format_type(a) for a in args]
    if member:
        return f"{shown[0]}.({', '.join(shown[1:])})"
    return f"({', '.join(shown)})"


def check(parsed: ParsedExpr, env: Env) -> Checked:
    """Type-check a parsed expression; types are final (type variables left unbound become dyn)."""
    c = _Checker(parsed, env)
    c.run(parsed.expr)
    final = t.substitute_all(c.m, c.types, True) if c.params_seen or c.m else c.types
    return Checked(final, c.refs, c.issues, c.idents, c.calls, c.aggregates)


def output_type(checked: Checked, parsed: ParsedExpr) -> Type:
    return checked.types.get(parsed.expr.id, t.DYN_T)
