"""Compile a CEL AST (`webhook.cel.ast`) once into Python closures, and evaluate it with cel-go's
semantics, runtime cost (interpreter/runtimecost.go + Kubernetes' library costs) and size limits.

    program = plan(ast_root, variables={"device"})
    value, cost = program.evaluate(variables={"device": ...})       # or device=DeviceInput (DRA)

`evaluate` raises only `CelError` (a CEL error value: "no such key: x", "division by zero", ...) and
`EvaluationStopped` (cost limit, size limit, or an internal failure such as MemoryError).

Each node becomes one closure `f(frame) -> value`. Chains that can be arbitrarily long in an accepted
expression (unary operators, left-deep binary operators, member calls, field selections and indexes)
are compiled into loops, so neither planning nor evaluation recurses once per link; what remains
nests as deep as the parser's recursion limit allows.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from webhook.cel import ast as A
from webhook.cel import extlib, k8slib, netlib, stdlib  # noqa: F401  (they register the functions)
from webhook.cel.functions import FUNCTIONS, Fn, actual_size, ceil_factor
from webhook.cel.values import (
    COST_LIMIT_MESSAGE,
    MAP_TYPES,
    NONE,
    SIZE_LIMIT_MESSAGE,
    UINT64_MAX,
    BoolKeyMap,
    CelError,
    CelType,
    DefaultMap,
    EvaluationStopped,
    MutList,
    MutMap,
    Optional,
    UInt,
    equal,
    key_value,
    lookup_key,
    map_key,
    type_name,
)

COST_LIMIT = 1_000_000  # CELSelectorExpressionMaxCost
ALLOC_LIMIT = 8_000_000  # characters/elements an evaluation may build in total
Closure = Callable[["Frame"], Any]

_ABSENT = object()
_UNINIT = object()


class Frame:
    """The state of one evaluation: comprehension variables, cost and size accounting, inputs."""

    __slots__ = ("slots", "cost", "limit", "alloc", "alloc_limit", "dev", "vars")

    def __init__(
        self, nslots: int, limit: int, alloc_limit: int, dev: Any, variables: dict[str, Any]
    ) -> None:
        self.slots: list[Any] = [None] * nslots
        self.cost = 0
        self.limit = limit
        self.alloc = 0
        self.alloc_limit = alloc_limit
        self.dev = dev
        self.vars = variables

    def check(self) -> None:
        if self.cost > self.limit:
            raise EvaluationStopped(COST_LIMIT_MESSAGE)

    def grow(self, n: int) -> None:
        self.alloc += n
        if self.alloc > self.alloc_limit:
            raise EvaluationStopped(SIZE_LIMIT_MESSAGE)


class _ErrBox:
    """A comprehension accumulator holding an error value."""

    __slots__ = ("error",)

    def __init__(self, error: CelError) -> None:
        self.error = error


# Frames per nesting level are few; beyond this plan depth an evaluation runs on a fresh thread
# (whose recursion depth starts at 0) so a deep but accepted expression never hits RecursionError.
_THREAD_DEPTH = 150


class Program:
    """A planned expression (immutable, shareable between threads)."""

    __slots__ = ("_fn", "_nslots", "_deep")

    def __init__(self, fn: Closure, nslots: int, depth: int) -> None:
        self._fn = fn
        self._nslots = nslots
        self._deep = depth > _THREAD_DEPTH

    def evaluate(
        self,
        *,
        device: Any = None,
        variables: dict[str, Any] | None = None,
        limit: int = COST_LIMIT,
        alloc_limit: int = ALLOC_LIMIT,
    ) -> tuple[Any, int]:
        """(value, actual cost). Raises CelError or EvaluationStopped (see the module docstring)."""
        frame = Frame(self._nslots, limit, alloc_limit, device, variables or {})
        if self._deep:
            return _on_thread(self._run, frame)
        return self._run(frame)

    def _run(self, frame: Frame) -> tuple[Any, int]:
        try:
            value = self._fn(frame)
            if type(value) is _ErrBox:
                raise value.error
            if frame.cost > frame.limit:
                raise EvaluationStopped(COST_LIMIT_MESSAGE)
        except (CelError, EvaluationStopped) as e:
            e.cost = frame.cost
            raise
        except MemoryError:
            raise _stopped("evaluation ran out of memory", frame) from None
        except RecursionError:
            raise _stopped("expression nests too deeply to evaluate", frame) from None
        except Exception as e:  # a defect of ours: still never a traceback for the caller
            raise _stopped(f"internal evaluation error: {type(e).__name__}: {e}", frame) from None
        return value, frame.cost


def _stopped(message: str, frame: Frame) -> EvaluationStopped:
    e = EvaluationStopped(message)
    e.cost = frame.cost
    return e


def _on_thread(run: Callable[[Frame], tuple[Any, int]], frame: Frame) -> tuple[Any, int]:
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(run(frame))
        except BaseException as e:  # handed back to the caller's thread
            box.append(e)

    t = threading.Thread(target=target, name="cel-deep-eval", daemon=True)
    t.start()
    t.join()
    out = box[0] if box else EvaluationStopped("internal evaluation error: no result")
    if isinstance(out, BaseException):
        raise out
    return out  # type: ignore[no-any-return]


# ---- qualification (select / index) ---------------------------------------------------------------


def _fmt_key(k: Any) -> str:
    if type(k) is bool:
        return "true" if k else "false"
    if type(k) is float:
        from webhook.cel.stdlib import format_double

        return format_double(k)
    return str(k)


def _list_index(lst: list[Any], key: Any) -> int:
    t = type(key)
    if t is int or t is UInt:
        return int(key)
    if t is float:
        if key == key and -(2**63) <= key < 2**63 and float(int(key)) == key:
            return int(key)
        raise CelError(f"unsupported index value {_fmt_key(key)} in list")
    raise CelError(f"unsupported index type '{type_name(key)}' in list")


def qualify(obj: Any, key: Any) -> Any:
    """`obj[key]` / `obj.key` (cel-go refQualify); raises CelError."""
    t = type(obj)
    if t is dict or t in MAP_TYPES:
        k = lookup_key(key)
        v = obj.get(k, _ABSENT) if k is not _ABSENT else _ABSENT
        if v is _ABSENT:
            if t is DefaultMap:
                return {}
            raise CelError(f"no such key: {_fmt_key(key)}")
        return v
    if t is list or t is MutList:
        i = _list_index(obj, key)
        if 0 <= i < len(obj):
            return obj[i]
        raise CelError(f"index out of bounds: {_fmt_key(key)}")
    raise CelError(f"no such key: {_fmt_key(key)}")


def qualify_present(obj: Any, key: Any) -> Any:
    """Like `qualify`, but an absent key/index (or a value that has no fields) gives _ABSENT."""
    t = type(obj)
    if t is dict or t in MAP_TYPES:
        k = lookup_key(key)
        v = obj.get(k, _ABSENT) if k is not _ABSENT else _ABSENT
        if v is _ABSENT and t is DefaultMap:
            return {}
        return v
    if t is list or t is MutList:
        i = _list_index(obj, key)
        return obj[i] if 0 <= i < len(obj) else _ABSENT
    return _ABSENT


# ---- the planner ------------------------------------------------------------------------------------

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
_SPECIAL = {"_&&_", "_||_", "_?_:_", "_==_", "_!=_", "@not_strictly_false", "_[_]", "_[?_]", "_?._"}
_INDEX_FNS = ("_[_]", "_[?_]", "_?._")


class _Qual:
    """One link of an attribute chain: a constant key or a computed one, optional or not."""

    __slots__ = ("key", "fn", "optional", "test_only", "key_cost")

    def __init__(self, key: Any, fn: Closure | None, optional: bool, test_only: bool, key_cost: int) -> None:
        self.key = key
        self.fn = fn
        self.optional = optional
        self.test_only = test_only
        self.key_cost = key_cost


class PlanError(Exception):
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
        f = _const(v)
        self.consts[id(f)] = (f, v)
        return f

    # -- entry ------------------------------------------------------------------------------------

    def plan_root(self, e: A.Expr) -> Program:
        fn = self.plan(e)
        return Program(fn, self.nslots, self.max_depth)

    def plan(self, e: A.Expr) -> Closure:
        self.depth += 1
        self.max_depth = max(self.max_depth, self.depth)
        try:
            return self._plan(e)
        finally:
            self.depth -= 1

    def _plan(self, e: A.Expr) -> Closure:
        if isinstance(e, A.Const):
            return self.const(_const_value(e))
        if isinstance(e, A.Ident | A.Select):
            return self._chain(e)
        if isinstance(e, A.Call):
            if e.function in _INDEX_FNS:
                return self._chain(e)
            return self._call(e)
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
        quals: list[_Qual] = []
        node = e
        while True:
            if isinstance(node, A.Select):
                name = self._qualified_name(node)
                if name is not None and name in TYPE_IDENTS:
                    break
                quals.append(_Qual(node.field, None, False, node.test_only, 0))
                node = node.operand
            elif isinstance(node, A.Call) and node.function in _INDEX_FNS and len(node.args) == 2:
                key = node.args[1]
                optional = node.function != "_[_]"
                if isinstance(key, A.Const):
                    quals.append(_Qual(_const_value(key), None, optional, False, 0))
                else:
                    fn = self.plan(key)
                    is_attr = isinstance(key, A.Ident | A.Select) or (
                        isinstance(key, A.Call) and key.function in _INDEX_FNS
                    )
                    quals.append(_Qual(None, fn, optional, False, 0 if is_attr else 1))
                node = node.args[0]
            else:
                break
        quals.reverse()
        root_cost = 1
        if isinstance(node, A.Ident):
            root = self._ident(node.name)
        elif isinstance(node, A.Select):  # a qualified type name
            root = _const(TYPE_IDENTS[self._qualified_name(node) or ""])
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
                return _costed(root, 1)
            return root
        if (
            isinstance(node, A.Ident)
            and node.name.lstrip(".") == self.device
            and (node.name.startswith(".") or self._lookup(node.name) is None)
        ):
            special = self._device_chain(quals)
            if special is not None:
                return special
        return _apply_chain(root, quals, root_cost)

    def _ident(self, name: str) -> Closure:
        hit = self._lookup(name) if not name.startswith(".") else None
        name = name.lstrip(".")  # `.device`: the root namespace's `device`
        if hit is not None:
            slot, is_accu = hit
            if is_accu:
                init = self.accu_inits[slot]

                def accu(fr: Frame) -> Any:
                    v = fr.slots[slot]
                    if v is _UNINIT:
                        try:
                            v = init(fr)
                        except CelError as e:
                            v = _ErrBox(e)
                        else:
                            if type(v) is list and not v:
                                v = MutList()
                            elif type(v) is dict and not v:
                                v = MutMap()
                        fr.slots[slot] = v
                    if type(v) is _ErrBox:
                        raise v.error
                    return v

                return accu

            def local(fr: Frame) -> Any:
                v = fr.slots[slot]
                if type(v) is _ErrBox:
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
            return _const(TYPE_IDENTS[name])

        def missing(fr: Frame) -> Any:
            raise CelError(f"no such attribute(s): {name}")

        return missing

    def _device_chain(self, quals: list[_Qual]) -> Closure | None:
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
                return _continue_chain(get, 4, quals[3:])
            if plain == 2:
                domain = quals[1].key
                if is_attr:
                    get = lambda fr: fr.dev.attribute_domain(domain)  # noqa: E731
                else:
                    get = lambda fr: fr.dev.capacity_domain(domain)  # noqa: E731
                return _continue_chain(get, 3, quals[2:])
            if is_attr:
                return _continue_chain(lambda fr: fr.dev.attributes_map(), 2, rest)
            return _continue_chain(lambda fr: fr.dev.capacity_map(), 2, rest)
        if first == "driver":
            return _continue_chain(lambda fr: fr.dev.driver, 2, rest)
        if first == "allowMultipleAllocations":
            return _continue_chain(lambda fr: fr.dev.allow_multiple, 2, rest)
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
        return _call_closure(self._regex(name, f, fns[1:2]), fns)

    def _regex(self, name: str, f: Fn, pattern: list[Closure]) -> Fn:
        """`matches`/`find`/`findAll` with a constant pattern: compiled now (an invalid one fails the
        program, as in cel-go), called without the overload's type guard."""
        if name in _REGEX_FNS and pattern and id(pattern[0]) in self.consts:
            value = self.consts[id(pattern[0])][1]
            if type(value) is str:
                from webhook.cel.regex import error_of

                problem = error_of(value)
                if problem is not None:
                    raise PlanError(problem)
                return _regex_optimized(f)
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
                if f.grows:
                    fr.grow(actual_size(v))
            return v

        return spine

    def _special(self, e: A.Call) -> Closure:
        fn = e.function
        args = [self.plan(a) for a in e.args]
        if fn == "_&&_":
            return _and(args[0], args[1])
        if fn == "_||_":
            return _or(args[0], args[1])
        if fn == "_?_:_":
            return _cond(args[0], args[1], args[2])
        if fn == "@not_strictly_false":
            return _not_strictly_false(args[0])
        if fn == "_==_":
            return _eq(args[0], args[1], False)
        if fn == "_!=_":
            return _eq(args[0], args[1], True)
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
                            f"cannot initialize optional entry '{_fmt_key(k)}' from non-optional value {v!r}"
                        )
                    if not v.has_value():
                        out.pop(mk, None)
                        continue
                    v = v.value
                if mk in out:
                    raise CelError(f"Failed with repeated key: {_fmt_key(k)}")
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
                raise CelError(f"unsupported comprehension range type: {_go_type(r)}")
            else:
                raise CelError(f"got '{_go_type(r)}', expected iterable type")
            saved = (slots[accu_slot], slots[it_slot], slots[it2_slot] if two else None)
            slots[accu_slot] = _UNINIT
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
                        slots[accu_slot] = _ErrBox(err)
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


def _go_type(v: Any) -> str:
    """Go's %T of a cel-go value (used in cel-go's "expected iterable type" error)."""
    from webhook.cel.values import TYPE_NAMES

    go = {
        bool: "types.Bool",
        int: "types.Int",
        UInt: "types.Uint",
        float: "types.Double",
        str: "types.String",
        bytes: "types.Bytes",
        type(None): "types.Null",
        Optional: "*types.Optional",
        CelType: "*types.Type",
    }.get(type(v))
    if go:
        return go
    name = TYPE_NAMES.get(type(v), type(v).__name__)
    return {
        "kubernetes.Semver": "cel.Semver",
        "kubernetes.Quantity": "cel.Quantity",
        "net.IP": "cel.IP",
        "net.CIDR": "cel.CIDR",
        "kubernetes.URL": "cel.URL",
        "kubernetes.NamedFormat": "*cel.Format",
        "google.protobuf.Timestamp": "types.Timestamp",
        "google.protobuf.Duration": "types.Duration",
    }.get(name, name)


def _regex_optimized(f: Fn) -> Fn:
    """cel-go's regex optimization (a constant pattern, compiled with the program) calls the function
    without the overload's type guard: a non-string receiver is a bare "no such overload"."""
    impl = f.impl

    def call(s: Any, *rest: Any) -> Any:
        if type(s) is not str:
            raise CelError("no such overload")
        return impl(s, *rest)

    return Fn(call, f.cost, f.grows)


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


def _const(v: Any) -> Closure:
    return lambda fr: v


def _costed(f: Closure, c: int) -> Closure:
    def costed(fr: Frame) -> Any:
        fr.cost += c
        return f(fr)

    return costed


def _continue_chain(get: Closure, cost: int, rest: list[_Qual]) -> Closure:
    """A device lookup (`cost`: the attribute and its consumed qualifiers) then the remaining qualifiers."""
    if not rest:

        def direct(fr: Frame) -> Any:
            fr.cost += cost
            return get(fr)

        return direct
    return _apply_chain(get, rest, cost)


def _apply_chain(root: Closure, quals: list[_Qual], root_cost: int) -> Closure:
    """Apply qualifiers to the root's value (cel-go applyQualifiers: once a qualifier is optional, the
    rest test presence and the result is an optional; `has()` tests the last one)."""
    # cel-go: the attribute costs 1, each constant qualifier 1; a computed key costs what it costs, plus 1
    # when it is not itself an attribute (a relative attribute).
    static_cost = root_cost + sum(1 if q.fn is None else q.key_cost for q in quals)
    plain = all(q.fn is None and not q.optional and not q.test_only for q in quals)
    if plain and len(quals) == 1:
        k0 = quals[0].key

        def one(fr: Frame) -> Any:
            fr.cost += static_cost
            return qualify(root(fr), k0)

        return one
    if plain:
        keys = [q.key for q in quals]

        def plain_chain(fr: Frame) -> Any:
            fr.cost += static_cost
            v = root(fr)
            for k in keys:
                v = qualify(v, k)
            return v

        return plain_chain
    test_only = quals[-1].test_only

    def chain(fr: Frame) -> Any:
        v = root(fr)
        cost = root_cost
        opt = False
        if type(v) is Optional:
            if not v.has_value():
                fr.cost += cost
                return False if test_only else NONE
            v = v.value
            opt = True
        for q in quals:
            if q.fn is None:
                k = q.key
                cost += 1
            else:
                k = q.fn(fr)
                cost += q.key_cost
            opt = opt or q.optional
            if q.test_only:
                fr.cost += cost - root_cost  # presence tests cost their qualifiers only
                return qualify_present(v, k) is not _ABSENT
            if opt:
                v = qualify_present(v, k)
                if v is _ABSENT:
                    fr.cost += cost
                    return NONE
            else:
                v = qualify(v, k)
        fr.cost += cost
        return Optional(v) if opt else v

    return chain


def _call_closure(f: Fn, fns: list[Closure]) -> Closure:
    impl = f.impl
    cost = f.cost
    grows = f.grows
    n = len(fns)
    if n == 1 and cost is None and not grows:
        (a,) = fns

        def call1(fr: Frame) -> Any:
            r = impl(a(fr))
            fr.cost += 1
            return r

        return call1
    if n == 2 and cost is None and not grows:
        a, b = fns

        def call2(fr: Frame) -> Any:
            r = impl(a(fr), b(fr))
            fr.cost += 1
            return r

        return call2
    if n == 0:

        def call0(fr: Frame) -> Any:
            r = impl()
            fr.cost += 1 if cost is None else cost((), r)
            return r

        return call0

    def call(fr: Frame) -> Any:
        args = tuple(g(fr) for g in fns)
        r = impl(*args)
        if cost is None:
            fr.cost += 1
        else:
            fr.cost += cost(args, r)
            if fr.cost > fr.limit:
                raise EvaluationStopped(COST_LIMIT_MESSAGE)
        if grows:
            fr.grow(actual_size(r))
        return r

    return call


# ---- logic and equality -------------------------------------------------------------------------------


def _and(a: Closure, b: Closure) -> Closure:
    def and_(fr: Frame) -> Any:
        try:
            x = a(fr)
        except CelError as e:
            err: CelError | None = e
        else:
            if x is False:
                return False
            err = None if x is True else CelError("no such overload")
        try:
            y = b(fr)
        except CelError as e:
            if err is None:
                err = e
        else:
            if y is False:
                return False
            if y is not True and err is None:
                err = CelError("no such overload")
        if err is not None:
            raise err
        return True

    return and_


def _or(a: Closure, b: Closure) -> Closure:
    def or_(fr: Frame) -> Any:
        try:
            x = a(fr)
        except CelError as e:
            err: CelError | None = e
        else:
            if x is True:
                return True
            err = None if x is False else CelError("no such overload")
        try:
            y = b(fr)
        except CelError as e:
            if err is None:
                err = e
        else:
            if y is True:
                return True
            if y is not False and err is None:
                err = CelError("no such overload")
        if err is not None:
            raise err
        return False

    return or_


def _cond(c: Closure, t: Closure, f: Closure) -> Closure:
    def cond(fr: Frame) -> Any:
        v = c(fr)
        if v is True:
            return t(fr)
        if v is False:
            return f(fr)
        raise CelError("no such overload")

    return cond


def _not_strictly_false(a: Closure) -> Closure:
    def nsf(fr: Frame) -> Any:
        fr.cost += 1
        try:
            v = a(fr)
        except CelError:
            return True
        return v is not False

    return nsf


def _eq_cost(a: Any, b: Any) -> int:
    from webhook.cel.values import TYPE_NAMES

    name = TYPE_NAMES.get(type(a), "")
    if name.startswith(("kubernetes.", "net.")):
        return 1
    return ceil_factor(min(actual_size(a), actual_size(b)))


def _eq(a: Closure, b: Closure, negate: bool) -> Closure:
    if negate:

        def ne(fr: Frame) -> Any:
            x = a(fr)
            y = b(fr)
            t = type(x)
            if t is type(y) and (t is int or t is bool):
                fr.cost += 1
                return x != y
            fr.cost += _eq_cost(x, y)
            return equal(x, y) is not True  # cel-go: Equal(x, y) != True

        return ne

    def eq(fr: Frame) -> Any:
        x = a(fr)
        y = b(fr)
        t = type(x)
        if t is type(y):
            if t is str:
                fr.cost += ceil_factor(min(len(x), len(y)))
                return x == y
            if t is int or t is bool:
                fr.cost += 1
                return x == y
        fr.cost += _eq_cost(x, y)
        r = equal(x, y)
        if r is None:
            raise CelError("no such overload")
        return r

    return eq


def plan(
    root: A.Expr,
    variables: frozenset[str] = frozenset(),
    device: str | None = None,
    optimize: bool = True,
    qualified: dict[int, str] | None = None,
) -> Program:
    """Plan an AST once; raises PlanError if it uses a construct the evaluator has no implementation of,
    or where cel-go fails to create the program (a constant conversion or regex that is an error).
    `qualified`: the checker's resolution of namespaced calls (`sets.contains(...)`) by node id."""
    planner = Planner(variables, device, optimize, qualified)
    depth = A.depth(root)
    if depth > _THREAD_DEPTH // 2 and sys.getrecursionlimit() - depth < 400:
        box: list[Any] = []

        def target() -> None:
            try:
                box.append(planner.plan_root(root))
            except BaseException as e:
                box.append(e)

        t = threading.Thread(target=target, name="cel-deep-plan", daemon=True)
        t.start()
        t.join()
        out = box[0] if box else PlanError("planning failed")
        if isinstance(out, BaseException):
            if isinstance(out, RecursionError):
                raise PlanError("expression nests too deeply to evaluate")
            raise out
        return out  # type: ignore[no-any-return]
    try:
        return planner.plan_root(root)
    except RecursionError:
        raise PlanError("expression nests too deeply to evaluate") from None


__all__ = ["COST_LIMIT", "Frame", "PlanError", "Program", "plan", "qualify", "UINT64_MAX"]


class SelectorProgram:
    """The program of a compiled DRA selector (`webhook.cel.compiler.Compiled.program`)."""

    __slots__ = ("program",)

    def __init__(self, program: Program) -> None:
        self.program = program

    def evaluate(self, device: Any) -> bool:
        """Evaluate on a `webhook.cel.activation.DeviceInput`; raises EvaluationError (any failure)."""
        from webhook.cel.activation import EvaluationError

        if getattr(device, "failure", None):
            raise EvaluationError(device.failure)
        try:
            value, _ = self.program.evaluate(device=device)
        except (CelError, EvaluationStopped) as e:
            raise EvaluationError(e.message) from None
        if value is True or value is False:
            return value
        raise EvaluationError(f"CEL result of type {type_name(value)} could not be converted to bool")


def plan_compiled(compiled: Any) -> SelectorProgram:
    """The planner behind `Compiled.program` (a checked DRA selector: `device` is the API device)."""
    return SelectorProgram(plan(compiled.ast.expr, device="device", qualified=compiled.qualified))
