"""The CEL type checker, a port of cel-go's `checker/` (overload resolution with type parameters,
dyn/any, optional types, CrossTypeNumericComparisons) over the DRA environment's declarations.

    check(parsed, env) -> Checked(types, refs, issues)

The walk runs on an explicit stack of generators, so any accepted AST depth is safe.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field

from webhook.cel import decls
from webhook.cel import types as t
from webhook.cel.ast import (
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
from webhook.cel.errors import Issue
from webhook.cel.types import Type

_CONST_TYPES = {
    "null": t.NULL_T,
    "bool": t.BOOL_T,
    "int": t.INT_T,
    "uint": t.UINT_T,
    "double": t.DOUBLE_T,
    "string": t.STRING_T,
    "bytes": t.BYTES_T,
}


@dataclass
class Env:
    """Declarations visible to the checker: variables, struct types and their fields, functions."""

    variables: dict[str, Type]
    structs: dict[str, dict[str, Type]]
    functions: dict[str, list[decls.Overload]]


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


_Gen = Generator[Expr, None, None]


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

    def error(self, node_id: int, message: str) -> None:
        line, col = self.parsed.source.location(node_id)
        self.issues.append(Issue(line, col, message))

    def new_var(self) -> Type:
        v = t.param(f"_var{self.counter}")
        self.counter += 1
        return v

    def assignable(self, t1: Type, t2: Type) -> bool:
        m = t.is_assignable(self.m, t1, t2)
        if m is None:
            return False
        self.m = m
        return True

    def sub(self, tt: Type) -> Type:
        return t.substitute(self.m, tt, False)

    # identifiers
    def local(self, name: str) -> Type | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def resolve_simple(self, name: str) -> tuple[str, Type] | None:
        loc = self.local(name)
        if loc is not None and not name.startswith("."):
            return name, loc
        cand = name[1:] if name.startswith(".") else name
        g = self.env.variables.get(cand)
        if g is not None:
            return ("." + cand if loc is not None else cand), g
        return None

    def resolve_qualified(self, qualifiers: list[str]) -> tuple[str, Type] | None:
        if len(qualifiers) == 1:
            return self.resolve_simple(qualifiers[0])
        if self.local(qualifiers[0]) is not None and not qualifiers[0].startswith("."):
            return None
        name = ".".join(qualifiers)
        cand = name[1:] if name.startswith(".") else name
        g = self.env.variables.get(cand)
        return (cand, g) if g is not None else None

    def function(self, name: str) -> list[decls.Overload] | None:
        cand = name[1:] if name.startswith(".") else name
        return self.env.functions.get(cand)

    # the walk
    def run(self, root: Expr) -> None:
        stack: list[_Gen] = [self.visit(root)]
        while stack:
            try:
                child = next(stack[-1])
            except StopIteration:
                stack.pop()
                continue
            stack.append(self.visit(child))

    def visit(self, e: Expr) -> _Gen:
        if isinstance(e, Const):
            self.types[e.id] = _CONST_TYPES[e.kind]
        elif isinstance(e, Ident):
            self.check_ident(e)
        elif isinstance(e, Select):
            yield from self.check_select(e)
        elif isinstance(e, Call):
            yield from self.check_call(e)
        elif isinstance(e, ListExpr):
            yield from self.check_list(e)
        elif isinstance(e, MapExpr):
            yield from self.check_map(e)
        elif isinstance(e, StructExpr):
            yield from self.check_struct(e)
        elif isinstance(e, Comprehension):
            yield from self.check_comprehension(e)
        else:
            self.error(e.id, f"unexpected unspecified type: {type(e).__name__}")

    def check_ident(self, e: Ident) -> None:
        r = self.resolve_simple(e.name)
        if r is not None:
            self.types[e.id] = r[1]
            self.refs[e.id] = (r[0],)
            return
        self.types[e.id] = t.ERROR_T
        self.error(e.id, f"undeclared reference to '{e.name}' (in container '')")

    def check_select(self, e: Select) -> _Gen:
        if not e.test_only:
            quals: list[str] = []
            cur: Expr = e
            while isinstance(cur, Select) and not cur.test_only:
                quals.append(cur.field)
                cur = cur.operand
            if isinstance(cur, Ident):
                quals.append(cur.name)
                r = self.resolve_qualified(quals[::-1])
                if r is not None:
                    self.types[e.id] = r[1]
                    self.refs[e.id] = (r[0],)
                    self.idents[e.id] = r[0]
                    return
        result = yield from self.select_field(e.id, e.operand, e.field, False)
        if e.test_only:
            result = t.BOOL_T
        self.types[e.id] = self.sub(result)

    def select_field(
        self, node_id: int, operand: Expr, name: str, optional: bool
    ) -> Generator[Expr, None, Type]:
        yield operand
        op_type = self.sub(self.types[operand.id])
        target, is_opt = t.unwrap_optional(op_type)
        result = t.ERROR_T
        if target.kind == t.MAP:
            result = target.params[1]
        elif target.kind == t.STRUCT:
            ft = self.field_type(node_id, target.name, name)
            if ft is not None:
                result = ft
        elif target.kind == t.TYPE_PARAM:
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
        if fn == "_?._":
            yield from self.check_opt_select(e)
            return
        yield from e.args
        if e.target is None:
            overloads = self.function(fn)
            if overloads is None:
                self.error(e.id, f"undeclared reference to '{fn}' (in container '')")
                self.types[e.id] = t.ERROR_T
                return
            self.resolve(e, fn, overloads, None)
            return
        qual = _qualified_name(e.target)
        if qual is not None:
            overloads = self.function(qual + "." + fn)
            if overloads is not None:
                self.idents[e.id] = qual + "." + fn
                self.resolve(e, qual + "." + fn, overloads, None)
                return
        yield e.target
        overloads = self.function(fn)
        if overloads is not None:
            self.resolve(e, fn, overloads, e.target)
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

    def resolve(self, e: Call, fn: str, overloads: list[decls.Overload], target: Expr | None) -> None:
        arg_exprs = ([target] if target is not None else []) + list(e.args)
        arg_types = [self.types[a.id] for a in arg_exprs]
        result: Type | None = None
        ids: list[str] = []
        for ov in overloads:
            if (target is None) == ov.member:
                continue
            if fn in ("_&&_", "_||_"):
                ok = True
                for a, at in zip(e.args, arg_types, strict=True):
                    if not self.assignable(at, t.BOOL_T):
                        self.error(a.id, f"expected type 'bool' but found '{t.format_type(at)}'")
                        ok = False
                if not ok:
                    self.types[e.id] = t.ERROR_T
                    return
                self.types[e.id] = t.BOOL_T
                self.refs[e.id] = (ov.id,)
                return
            cand_args: list[Type] = list(ov.args)
            res = ov.result
            if ov.type_params:
                fresh = {p: self.new_var() for p in ov.type_params}
                cand_args = [t.rename_params(a, fresh) for a in cand_args]
                res = t.rename_params(res, fresh)
            m = t.is_assignable_list(self.m, arg_types, cand_args)
            if m is None:
                continue
            self.m = m
            ids.append(ov.id)
            fn_result = self.sub(res)
            if result is None:
                result = fn_result
            elif not t.is_dyn(result) and fn_result != result:
                result = t.DYN_T
        if result is None:
            shown = [t.substitute(self.m, a, True) for a in arg_types]
            self.error(
                e.id,
                f"found no matching overload for '{fn}' applied to '{_signature(shown, target is not None)}'",
            )
            self.types[e.id] = t.ERROR_T
            return
        self.types[e.id] = result
        self.refs[e.id] = tuple(ids)

    def join(self, e: Expr, prev: Type | None, cur: Type) -> Type:
        if prev is None:
            return cur
        if self.assignable(prev, cur):
            return t.most_general(prev, cur)
        return t.DYN_T  # mixed literals are reported by the homogeneous-literal validator

    def check_list(self, e: ListExpr) -> _Gen:
        elem: Type | None = None
        optional = set(e.optional_indices)
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
    final = t.substitute_all(c.m, c.types, True)
    return Checked(final, c.refs, c.issues, c.idents)


def output_type(checked: Checked, parsed: ParsedExpr) -> Type:
    return checked.types.get(parsed.expr.id, t.DYN_T)
