"""The closures a planned CEL program is made of: evaluation state (`Frame`), field selection and
indexing with cel-go's errors, calls with their runtime cost, `&&`/`||`/`?:` with errors absorbed by a
deciding operand, and equality."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webhook.cel.common.values import (
    COST_LIMIT_MESSAGE,
    MAP_TYPES,
    NONE,
    SIZE_LIMIT_MESSAGE,
    TYPE_NAMES,
    CelError,
    CelType,
    DefaultMap,
    EvaluationStopped,
    MutList,
    Optional,
    UInt,
    equal,
    lookup_key,
    type_name,
)
from webhook.cel.lib import extlib, k8slib, netlib, stdlib  # noqa: F401  (they register the functions)
from webhook.cel.lib.functions import Fn, actual_size, ceil_factor
from webhook.cel.lib.printing import format_double

COST_LIMIT = 1_000_000  # CELSelectorExpressionMaxCost

ALLOC_LIMIT = 8_000_000  # characters/elements an evaluation may build in total

Closure = Callable[["Frame"], Any]

_ABSENT = object()

UNINITIALIZED = object()


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


class ErrorBox:
    """A comprehension accumulator holding an error value."""

    __slots__ = ("error",)

    def __init__(self, error: CelError) -> None:
        self.error = error


def format_key(k: Any) -> str:
    if type(k) is bool:
        return "true" if k else "false"
    if type(k) is float:
        return format_double(k)
    return str(k)


def _list_index(lst: list[Any], key: Any) -> int:
    t = type(key)
    if t is int or t is UInt:
        return int(key)
    if t is float:
        if key == key and -(2**63) <= key < 2**63 and float(int(key)) == key:
            return int(key)
        raise CelError(f"unsupported index value {format_key(key)} in list")
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
            raise CelError(f"no such key: {format_key(key)}")
        return v
    if t is list or t is MutList:
        i = _list_index(obj, key)
        if 0 <= i < len(obj):
            return obj[i]
        raise CelError(f"index out of bounds: {format_key(key)}")
    raise CelError(f"no such key: {format_key(key)}")


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


class Qualifier:
    """One link of an attribute chain: a constant key or a computed one, optional or not."""

    __slots__ = ("key", "fn", "optional", "test_only", "key_cost")

    def __init__(self, key: Any, fn: Closure | None, optional: bool, test_only: bool, key_cost: int) -> None:
        self.key = key
        self.fn = fn
        self.optional = optional
        self.test_only = test_only
        self.key_cost = key_cost


def go_type(v: Any) -> str:
    """Go's %T of a cel-go value (used in cel-go's "expected iterable type" error)."""
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


def regex_unguarded(f: Fn) -> Fn:
    """cel-go's regex optimization (a constant pattern, compiled with the program) calls the function
    without the overload's type guard: a non-string receiver is a bare "no such overload"."""
    impl = f.impl

    def call(s: Any, *rest: Any) -> Any:
        if type(s) is not str:
            raise CelError("no such overload")
        return impl(s, *rest)

    return Fn(call, f.cost, f.grows)


def constant(v: Any) -> Closure:
    return lambda fr: v


def costed(f: Closure, c: int) -> Closure:
    def costed(fr: Frame) -> Any:
        fr.cost += c
        return f(fr)

    return costed


def device_chain(get: Closure, cost: int, rest: list[Qualifier]) -> Closure:
    """A device lookup (`cost`: the attribute and its consumed qualifiers) then the remaining qualifiers."""
    if not rest:

        def direct(fr: Frame) -> Any:
            fr.cost += cost
            return get(fr)

        return direct
    return apply_chain(get, rest, cost)


def apply_chain(root: Closure, quals: list[Qualifier], root_cost: int) -> Closure:
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


def call_closure(f: Fn, fns: list[Closure]) -> Closure:
    impl = f.impl
    cost = f.cost
    grows = f.grows
    n = len(fns)
    if n == 1 and cost is None and grows is None:
        (a,) = fns

        def call1(fr: Frame) -> Any:
            r = impl(a(fr))
            fr.cost += 1
            return r

        return call1
    if n == 2 and cost is None and grows is None:
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
        if grows is not None:
            fr.grow(grows(args, r))
        return r

    return call


def and_op(a: Closure, b: Closure) -> Closure:
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


def or_op(a: Closure, b: Closure) -> Closure:
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


def conditional(c: Closure, t: Closure, f: Closure) -> Closure:
    def cond(fr: Frame) -> Any:
        v = c(fr)
        if v is True:
            return t(fr)
        if v is False:
            return f(fr)
        raise CelError("no such overload")

    return cond


def not_strictly_false(a: Closure) -> Closure:
    def nsf(fr: Frame) -> Any:
        fr.cost += 1
        try:
            v = a(fr)
        except CelError:
            return True
        return v is not False

    return nsf


def equality_cost(a: Any, b: Any) -> int:
    name = TYPE_NAMES.get(type(a), "")
    if name.startswith(("kubernetes.", "net.")):
        return 1
    return ceil_factor(min(actual_size(a), actual_size(b)))


def equality(a: Closure, b: Closure, negate: bool) -> Closure:
    if negate:

        def ne(fr: Frame) -> Any:
            x = a(fr)
            y = b(fr)
            t = type(x)
            if t is type(y) and (t is int or t is bool):
                fr.cost += 1
                return x != y
            fr.cost += equality_cost(x, y)
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
        fr.cost += equality_cost(x, y)
        r = equal(x, y)
        if r is None:
            raise CelError("no such overload")
        return r

    return eq
