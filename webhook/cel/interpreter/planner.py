"""The planner: turns a CEL AST (`webhook.cel.common.ast`) into closures (`webhook.cel.interpreter.closures`), once per
expression. Chains that can be arbitrarily long in an accepted expression (unary operators, left-deep
binary operators, member calls, field selections and indexes) become loops."""

from __future__ import annotations

from typing import Any

from webhook.cel.common import ast as A
from webhook.cel.common.values import (
    COST_LIMIT_MESSAGE,
    MAP_TYPES,
    BoolKeyMap,
    CelError,
    CelType,
    EvaluationStopped,
    MutList,
    MutMap,
    Optional,
    UInt,
    key_value,
    map_key,
)
from webhook.cel.interpreter.closures import (
    ALLOC_LIMIT,
    COST_LIMIT,
    UNINITIALIZED,
    Closure,
    ErrorBox,
    Frame,
    Qualifier,
    and_op,
    apply_chain,
    call_closure,
    conditional,
    constant,
    costed,
    device_chain,
    equality,
    format_key,
    go_type,
    not_strictly_false,
    or_op,
    regex_unguarded,
)
from webhook.cel.lib import extlib, k8slib, netlib, stdlib  # noqa: F401  (they register the functions)
from webhook.cel.lib.functions import FUNCTIONS, Fn
from webhook.cel.lib.regex import error_of
from webhook.model.errors import DraguardError

# Type identifiers usable as values (`type(x) == int`).
TYPE_IDENTS = {
    n: CelType(n)
    for n in (
        "int",
        "uint",
        "double",
        "bool",
        "string",
        "bytes",
        "list",
        "map",
        "null_type",
        "type",
        "optional_type",
        "google.protobuf.Timestamp",
        "google.protobuf.Duration",
        "kubernetes.Quantity",
        "kubernetes.Semver",
        "kubernetes.URL",
        "kubernetes.NamedFormat",
        "net.IP",
        "net.CIDR",
    )
}

TYPE_IDENTS["dyn"] = CelType("dyn")

_CONVERSIONS = {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"}

_REGEX_FNS = {"matches", "find", "findAll"}

_SPECIAL = {
    "__not_strictly_false__",
    "_&&_",
    "_||_",
    "_?_:_",
    "_==_",
    "_!=_",
    "@not_strictly_false",
    "_[_]",
    "_[?_]",
    "_?._",
}

_INDEX_FNS = ("_[_]", "_[?_]", "_?._")


class PlanError(DraguardError):
    """The AST cannot be planned (an unknown function or a construct the environment lacks)."""


class Planner:
    """Builds closures for one expression. `variables`: declared global variables; `device`: the name
    of the DRA device variable (chains on it read the API device directly), or None."""

    def __init__(
        self,
        variables: frozenset[str] = frozenset(),
        device: str | None = None,
        optimize: bool = True,
        qualified: dict[int, str] | None = None,
    ) -> None:
        self.qualified = qualified or {}  # the checker's namespaced call / identifier resolutions
        self.optimize = optimize  # cel-go OptOptimize (Kubernetes sets it): fold constant literals
        self.variables = variables | ({device} if device else frozenset())
        self.device = device
        self.scopes: list[dict[str, tuple[int, bool]]] = []  # name -> (slot, is accumulator)
        self.nslots = 0
        self.depth = 0
        self.max_depth = 0
        self.accu_inits: dict[int, Closure] = {}
        self.consts: dict[int, Any] = {}  # id(closure) -> value, for constant folding as cel-go's OptOptimize

    def const(self, v: Any) -> Closure:
        f = constant(v)
        self.consts[id(f)] = (f, v)
        return f

    # -- entry ------------------------------------------------------------------------------------

    def plan(self, e: A.Expr) -> Closure:
        # (no try/finally: a failure abandons the whole planner, nothing inside catches one)
        depth = self.depth = self.depth + 1
        if depth > self.max_depth:
            self.max_depth = depth
        f = self._plan(e)
        self.depth = depth - 1
        return f

    def _plan(self, e: A.Expr) -> Closure:
        k = type(e)
        if k is A.Const:
            return self.const(_const_value(e))  # type: ignore[arg-type]
        if k is A.Call:
            if e.function in _INDEX_FNS:  # type: ignore[attr-defined]
                return self._chain(e)
            return self._call(e)  # type: ignore[arg-type]
        if k is A.Ident or k is A.Select:
            return self._chain(e)
        if isinstance(e, A.ListExpr):
            return self._list(e)
        if isinstance(e, A.MapExpr):
            return self._map(e)
        if isinstance(e, A.Comprehension):
            return self._comprehension(e)
        if isinstance(e, A.StructExpr):
            name = e.type_name

            def no_struct(fr: Frame) -> Any:
                raise CelError(f"unknown type: {name}")

            return no_struct
        raise PlanError(f"cannot evaluate {type(e).__name__}")

    # -- scopes --------------------------------------------------------------------------------------

    def _lookup(self, name: str) -> tuple[int, bool] | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _new_slot(self) -> int:
        self.nslots += 1
        return self.nslots - 1

    # -- attribute chains ----------------------------------------------------------------------------

    def _qualified_name(self, e: A.Expr) -> str | None:
        """`a.b.c` as a dotted name when `a` is not a variable in scope (a namespace or type name)."""
        parts: list[str] = []
        while isinstance(e, A.Select) and not e.test_only:
            parts.append(e.field)
            e = e.operand
        if not isinstance(e, A.Ident) or self._lookup(e.name) is not None or e.name in self.variables:
            return None
        parts.append(e.name)
        return ".".join(reversed(parts))

    def _chain(self, e: A.Expr) -> Closure:
        quals: list[Qualifier] = []
        node = e
        while True:
            if isinstance(node, A.Select):
                name = self._qualified_name(node)
                if name is not None and name in TYPE_IDENTS:
                    break
                quals.append(Qualifier(node.field, None, False, node.test_only, 0))
                node = node.operand
            elif isinstance(node, A.Call) and node.function in _INDEX_FNS and len(node.args) == 2:
                key = node.args[1]
                optional = node.function != "_[_]"
                if isinstance(key, A.Const):
                    quals.append(Qualifier(_const_value(key), None, optional, False, 0))
                else:
                    fn = self.plan(key)
                    is_attr = isinstance(key, A.Ident | A.Select) or (
                        isinstance(key, A.Call) and key.function in _INDEX_FNS
                    )
                    quals.append(Qualifier(None, fn, optional, False, 0 if is_attr else 1))
                node = node.args[0]
            else:
                break
        quals.reverse()
        root_cost = 1
        if (
            quals
            and isinstance(node, A.Ident)
            and node.name.lstrip(".") == self.device
            and (node.name.startswith(".") or self._lookup(node.name) is None)
        ):
            special = self._device_chain(quals)
            if special is not None:
                return special
        if isinstance(node, A.Ident):
            root = self._ident(node.name)
        elif isinstance(node, A.Select):  # a qualified type name
            root = constant(TYPE_IDENTS[self._qualified_name(node) or ""])
            root_cost = 0
        else:
            root = self.plan(node)
            if not quals:
                return root
        if not quals:
            if isinstance(node, A.Ident) and (
                self._lookup(node.name) is not None
                or node.name in self.variables
                or node.name not in TYPE_IDENTS
            ):
                return costed(root, 1)
            return root
        return apply_chain(root, quals, root_cost)

    def _ident(self, name: str) -> Closure:
        hit = self._lookup(name) if not name.startswith(".") else None
        name = name.lstrip(".")  # `.device`: the root namespace's `device`
        if hit is not None:
            slot, is_accu = hit
            if is_accu:
                init = self.accu_inits[slot]

                def accu(fr: Frame) -> Any:
                    v = fr.slots[slot]
                    if v is UNINITIALIZED:
                        try:
                            v = init(fr)
                        except CelError as e:
                            v = ErrorBox(e)
                        else:
                            if type(v) is list and not v:
                                v = MutList()
                            elif type(v) is dict and not v:
                                v = MutMap()
                        fr.slots[slot] = v
                    if type(v) is ErrorBox:
                        raise v.error
                    return v

                return accu

            def local(fr: Frame) -> Any:
                v = fr.slots[slot]
                if type(v) is ErrorBox:
                    raise v.error
                return v

            return local
        if name == self.device:
            return lambda fr: fr.dev.as_map()
        if name in self.variables:

            def var(fr: Frame) -> Any:
                try:
                    return fr.vars[name]
                except KeyError:
                    raise CelError(f"no such attribute(s): {name}") from None

            return var
        if name in TYPE_IDENTS:
            return constant(TYPE_IDENTS[name])

        def missing(fr: Frame) -> Any:
            raise CelError(f"no such attribute(s): {name}")

        return missing

    def _device_chain(self, quals: list[Qualifier]) -> Closure | None:
        """`device.driver`, `device.attributes[D][I]`, ... read straight from the API device."""
        plain = 0
        for q in quals:
            if q.fn is not None or q.optional or q.test_only or type(q.key) is not str:
                break
            plain += 1
        if plain == 0:
            return None
        first = quals[0].key
        rest = quals[1:]
        if first in ("attributes", "capacity"):
            is_attr = first == "attributes"
            if plain >= 3:
                domain, ident = quals[1].key, quals[2].key
                if is_attr:
                    get = lambda fr: fr.dev.attribute(domain, ident)  # noqa: E731
                else:
                    get = lambda fr: fr.dev.capacity_value(domain, ident)  # noqa: E731
                return device_chain(get, 4, quals[3:])
            if plain == 2:
                domain = quals[1].key
                if is_attr:
                    get = lambda fr: fr.dev.attribute_domain(domain)  # noqa: E731
                else:
                    get = lambda fr: fr.dev.capacity_domain(domain)  # noqa: E731
                return device_chain(get, 3, quals[2:])
            if is_attr:
                return device_chain(lambda fr: fr.dev.attributes_map(), 2, rest)
            return device_chain(lambda fr: fr.dev.capacity_map(), 2, rest)
        if first == "driver":
            return device_chain(lambda fr: fr.dev.driver, 2, rest)
        if first == "allowMultipleAllocations":
            return device_chain(lambda fr: fr.dev.allow_multiple, 2, rest)
        return None

    # -- calls ---------------------------------------------------------------------------------------

    def _call(self, e: A.Call) -> Closure:
        fn = e.function
        if fn in _SPECIAL:
            return self._special(e)
        resolved = self.qualified.get(e.id)
        if resolved is not None and e.target is not None:
            return self._generic(resolved, False, e.args)
        target = e.target
        if target is not None:
            qual = self._qualified_name(target)
            if qual is not None and any(k[0] == f"{qual}.{fn}" for k in FUNCTIONS):
                return self._generic(f"{qual}.{fn}", False, e.args)
        if target is None:
            return self._spine(e) if _spine_length(e) > 1 else self._generic(fn, False, e.args)
        if _spine_length(e) > 1:
            return self._spine(e)
        return self._generic(fn, True, (target, *e.args))

    def _resolve(self, name: str, member: bool, arity: int) -> Fn:
        f = FUNCTIONS.get((name, member, arity))
        if f is None:
            f = FUNCTIONS.get((name, not member, arity))
        if f is None:
            raise PlanError(f"no such overload: {name}")
        return f

    def _generic(self, name: str, member: bool, args: tuple[A.Expr, ...]) -> Closure:
        f = FUNCTIONS.get((name, member, len(args)))
        if f is None:
            msg = f"no such overload: {name}"

            for a in args:  # still plan the arguments: their errors come first, as in cel-go
                self.plan(a)

            def missing(fr: Frame) -> Any:
                raise CelError(msg)

            return missing
        fns = [self.plan(a) for a in args]
        if self.optimize and name in _CONVERSIONS and len(fns) == 1 and id(fns[0]) in self.consts:
            try:
                return self.const(f.impl(self.consts[id(fns[0])][1]))
            except CelError as err:  # cel-go fails to create the program
                raise PlanError(err.message) from None
        return call_closure(self._regex(name, f, fns[1:2]), fns)

    def _regex(self, name: str, f: Fn, pattern: list[Closure]) -> Fn:
        """`matches`/`find`/`findAll` with a constant pattern: compiled now (an invalid one fails the
        program, as in cel-go), called without the overload's type guard."""
        if name in _REGEX_FNS and pattern and id(pattern[0]) in self.consts:
            value = self.consts[id(pattern[0])][1]
            if type(value) is str:
                problem = error_of(value)
                if problem is not None:
                    raise PlanError(problem)
                return regex_unguarded(f)
        return f

    def _spine(self, e: A.Call) -> Closure:
        """A left-deep chain of binary/unary/member calls, evaluated in a loop (no recursion per link)."""
        links: list[tuple[Fn, list[Closure]]] = []
        node: A.Expr = e
        while (
            isinstance(node, A.Call)
            and node.function not in _SPECIAL
            and (node.target is not None or node.args)
        ):
            if node.id in self.qualified:
                break
            member = node.target is not None
            operands: tuple[A.Expr, ...] = (node.target, *node.args) if node.target is not None else node.args
            if node.target is not None:
                qual = self._qualified_name(node.target)
                if qual is not None and any(k[0] == f"{qual}.{node.function}" for k in FUNCTIONS):
                    break
            f = FUNCTIONS.get((node.function, member, len(operands)))
            if f is None:
                break
            rest = [self.plan(a) for a in operands[1:]]
            links.append((self._regex(node.function, f, rest[:1]), rest))
            node = operands[0]
        if not links:
            return self._generic(
                e.function, e.target is not None, (*((e.target,) if e.target else ()), *e.args)
            )
        first = self.plan(node)
        links.reverse()

        def spine(fr: Frame) -> Any:
            v = first(fr)
            for f, rest in links:
                args = (v, *[r(fr) for r in rest])
                v = f.impl(*args)
                if f.cost is None:
                    fr.cost += 1
                else:
                    fr.cost += f.cost(args, v)
                    fr.check()
                if f.grows is not None:
                    fr.grow(f.grows(args, v))
            return v

        return spine

    def _special(self, e: A.Call) -> Closure:
        fn = e.function
        args = [self.plan(a) for a in e.args]
        if fn == "_&&_":
            return and_op(args[0], args[1])
        if fn == "_||_":
            return or_op(args[0], args[1])
        if fn == "_?_:_":
            return conditional(args[0], args[1], args[2])
        if fn in ("@not_strictly_false", "__not_strictly_false__"):
            return not_strictly_false(args[0])
        if fn == "_==_":
            return equality(args[0], args[1], False)
        if fn == "_!=_":
            return equality(args[0], args[1], True)
        raise PlanError(f"cannot evaluate {fn}")

    # -- literals ------------------------------------------------------------------------------------

    def _list(self, e: A.ListExpr) -> Closure:
        elems = [self.plan(x) for x in e.elements]
        if self.optimize and not e.optional_indices and all(id(f) in self.consts for f in elems):
            return self.const([self.consts[id(f)][1] for f in elems])
        optional = frozenset(e.optional_indices)
        n = len(elems)

        def make_list(fr: Frame) -> Any:
            out = []
            for i, f in enumerate(elems):
                v = f(fr)
                if i in optional:
                    if type(v) is not Optional:
                        raise CelError(
                            f"cannot initialize optional list element from non-optional value {v!r}"
                        )
                    if not v.has_value():
                        continue
                    v = v.value
                out.append(v)
            fr.cost += 10
            fr.grow(n)
            return out

        return make_list

    def _map(self, e: A.MapExpr) -> Closure:
        entries = [(self.plan(en.key), self.plan(en.value), en.optional) for en in e.entries]
        constant = self.optimize and all(
            id(k) in self.consts and id(v) in self.consts and not o for k, v, o in entries
        )
        n = len(entries)

        def make_map(fr: Frame) -> Any:
            out: dict[Any, Any] = {}
            has_bool = False
            for kf, vf, opt in entries:
                k = kf(fr)
                v = vf(fr)
                mk = map_key(k)
                if opt:
                    if type(v) is not Optional:
                        raise CelError(
                            f"cannot initialize optional entry '{format_key(k)}' from non-optional value {v!r}"
                        )
                    if not v.has_value():
                        out.pop(mk, None)
                        continue
                    v = v.value
                if mk in out:
                    raise CelError(f"Failed with repeated key: {format_key(k)}")
                has_bool = has_bool or type(k) is bool
                out[mk] = v
            fr.grow(n)
            if not constant:
                fr.cost += 30
            return BoolKeyMap(out) if has_bool else out

        if constant:
            try:
                value = make_map(Frame(0, COST_LIMIT, ALLOC_LIMIT, None, {}))
            except CelError:
                return make_map
            return self.const(value)
        return make_map

    # -- comprehensions ------------------------------------------------------------------------------

    def _comprehension(self, e: A.Comprehension) -> Closure:
        rng = self.plan(e.iter_range)
        init = self.plan(e.accu_init)
        accu_slot = self._new_slot()
        self.accu_inits[accu_slot] = init
        it_slot = self._new_slot()
        it2_slot = self._new_slot() if e.iter_var2 else -1
        scope: dict[str, tuple[int, bool]] = {e.accu_var: (accu_slot, True), e.iter_var: (it_slot, False)}
        if e.iter_var2:
            scope[e.iter_var2] = (it2_slot, False)
        self.scopes.append(scope)
        cond = self.plan(e.loop_condition)
        step = self.plan(e.loop_step)
        self.scopes.pop()
        self.scopes.append({e.accu_var: (accu_slot, True)})
        result = self.plan(e.result)
        self.scopes.pop()
        two = bool(e.iter_var2)

        def fold(fr: Frame) -> Any:
            r = rng(fr)
            t = type(r)
            slots = fr.slots
            if t is list or t is MutList:
                items: Any = enumerate(r) if two else r
            elif t is dict or t in MAP_TYPES:
                if two:
                    items = ((key_value(k), v) for k, v in list(r.items()))
                else:
                    items = [key_value(k) for k in r] if t is BoolKeyMap else list(r)
            elif two:
                raise CelError(f"unsupported comprehension range type: {go_type(r)}")
            else:
                raise CelError(f"got '{go_type(r)}', expected iterable type")
            saved = (slots[accu_slot], slots[it_slot], slots[it2_slot] if two else None)
            slots[accu_slot] = UNINITIALIZED
            try:
                for x in items:
                    if two:
                        slots[it_slot], slots[it2_slot] = x
                    else:
                        slots[it_slot] = x
                    try:
                        c = cond(fr)
                    except CelError:
                        c = None
                    if c is False:
                        break
                    try:
                        slots[accu_slot] = step(fr)
                    except CelError as err:
                        slots[accu_slot] = ErrorBox(err)
                    if fr.cost > fr.limit:
                        raise EvaluationStopped(COST_LIMIT_MESSAGE)
                out = result(fr)
            finally:
                slots[accu_slot], slots[it_slot] = saved[0], saved[1]
                if two:
                    slots[it2_slot] = saved[2]
            t = type(out)
            if t is MutList:
                return list(out)
            if t is MutMap:
                return dict(out)
            return out

        return fold


def _spine_length(e: A.Expr) -> int:
    """How many chained calls hang on the first operand (x.f().g() or ((a + b) + c): 2)."""
    n = 0
    node = e
    while isinstance(node, A.Call) and node.function not in _SPECIAL:
        operands = (node.target, *node.args) if node.target is not None else node.args
        if not operands:
            break
        n += 1
        node = operands[0]  # type: ignore[assignment]
    return n


def _const_value(e: A.Const) -> Any:
    if e.kind == "uint":
        return UInt(e.value)  # type: ignore[arg-type]
    return e.value
