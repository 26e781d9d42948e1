"""CEL types and the checker's type unification, as cel-go (`common/types`, `checker/types.go`) defines them."""

from __future__ import annotations

from dataclasses import dataclass

# kinds
DYN, ANY, BOOL, BYTES, DOUBLE, DURATION, ERROR, INT = (
    "dyn",
    "any",
    "bool",
    "bytes",
    "double",
    "duration",
    "error",
    "int",
)
LIST, MAP, NULL, OPAQUE, STRING, STRUCT, TIMESTAMP = (
    "list",
    "map",
    "null",
    "opaque",
    "string",
    "struct",
    "timestamp",
)
TYPE, TYPE_PARAM, UINT = "type", "type_param", "uint"


@dataclass(frozen=True, slots=True)
class Type:
    """kind + runtime type name + parameters (list element, map key/value, opaque/type parameters)."""

    kind: str
    name: str
    params: tuple[Type, ...] = ()

    def __str__(self) -> str:  # cel-go's Type.String()
        if self.kind == TYPE_PARAM:
            return f"<{self.name}>"
        name = "google.protobuf.Any" if self.kind == ANY else self.name
        if not self.params:
            return name
        return f"{name}({', '.join(str(p) for p in self.params)})"


DYN_T = Type(DYN, "dyn")
ANY_T = Type(ANY, "google.protobuf.Any")
BOOL_T = Type(BOOL, "bool")
BYTES_T = Type(BYTES, "bytes")
DOUBLE_T = Type(DOUBLE, "double")
DURATION_T = Type(DURATION, "google.protobuf.Duration")
ERROR_T = Type(ERROR, "error")
INT_T = Type(INT, "int")
NULL_T = Type(NULL, "null_type")
STRING_T = Type(STRING, "string")
TIMESTAMP_T = Type(TIMESTAMP, "google.protobuf.Timestamp")
TYPE_T = Type(TYPE, "type")
UINT_T = Type(UINT, "uint")


def list_of(elem: Type) -> Type:
    return Type(LIST, "list", (elem,))


def map_of(key: Type, value: Type) -> Type:
    return Type(MAP, "map", (key, value))


def opaque(name: str, *params: Type) -> Type:
    return Type(OPAQUE, name, params)


def optional_of(t: Type) -> Type:
    return opaque("optional_type", t)


def struct(name: str) -> Type:
    return Type(STRUCT, name)


def param(name: str) -> Type:
    return Type(TYPE_PARAM, name)


def type_of(t: Type) -> Type:
    return Type(TYPE, "type", (t,))


QUANTITY_T = struct("kubernetes.Quantity")
SEMVER_T = struct("kubernetes.Semver")
URL_T = struct("kubernetes.URL")
FORMAT_T = struct("kubernetes.NamedFormat")
IP_T = opaque("net.IP")
CIDR_T = opaque("net.CIDR")


def format_type(t: Type | None) -> str:
    """cel-go's FormatCELType (used in checker messages)."""
    if t is None:
        return ""
    k = t.kind
    if k == ANY:
        return "any"
    if k == DURATION:
        return "duration"
    if k == ERROR:
        return "!error!"
    if k == NULL:
        return "null"
    if k == TIMESTAMP:
        return "timestamp"
    if k == TYPE_PARAM:
        return t.name
    if not t.params:
        return t.name
    return f"{t.name}({', '.join(format_type(p) for p in t.params)})"


def is_dyn(t: Type) -> bool:
    return t.kind in (DYN, ANY)


def is_dyn_or_error(t: Type) -> bool:
    return t.kind in (DYN, ANY, ERROR)


def is_optional(t: Type) -> bool:
    return t.kind == OPAQUE and t.name == "optional_type"


def unwrap_optional(t: Type) -> tuple[Type, bool]:
    if is_optional(t):
        return t.params[0], True
    return t, False


def is_exact(a: Type, b: Type) -> bool:
    return a == b


def is_equivalent(a: Type, b: Type) -> bool:
    """IsEquivalentType: like IsExactType, ignoring type-parameter names."""
    if a.kind != b.kind or len(a.params) != len(b.params):
        return False
    if a.kind != TYPE_PARAM and a.name != b.name:
        return False
    return all(is_equivalent(x, y) for x, y in zip(a.params, b.params, strict=True))


def _is_dyn_kind(t: Type) -> bool:  # Type.isDyn(): dyn, any and type parameters
    return t.kind in (DYN, ANY, TYPE_PARAM)


def default_assignable(to: Type, frm: Type) -> bool:
    """Type.IsAssignableType (no wrapper types are declared in this environment)."""
    if to == frm or _is_dyn_kind(to):
        return True
    if to.kind != frm.kind or to.name != frm.name or len(to.params) != len(frm.params):
        return False
    return all(default_assignable(p, f) for p, f in zip(to.params, frm.params, strict=True))


Mapping = dict[str, Type]


def _find(m: Mapping, t: Type) -> Type | None:
    if t.kind == TYPE_PARAM:
        return m.get(t.name)
    return None


def is_equal_or_less_specific(t1: Type, t2: Type) -> bool:
    k1, k2 = t1.kind, t2.kind
    if is_dyn(t1) or k1 == TYPE_PARAM:
        return True
    if is_dyn(t2) or k2 == TYPE_PARAM:
        return False
    if k1 != k2:
        return False
    if k1 == OPAQUE:
        if t1.name != t2.name or len(t1.params) != len(t2.params):
            return False
        return all(is_equal_or_less_specific(a, b) for a, b in zip(t1.params, t2.params, strict=True))
    if k1 == LIST:
        return is_equal_or_less_specific(t1.params[0], t2.params[0])
    if k1 == MAP:
        return is_equal_or_less_specific(t1.params[0], t2.params[0]) and is_equal_or_less_specific(
            t1.params[1], t2.params[1]
        )
    if k1 == TYPE:
        return True
    return t1 == t2


def most_general(t1: Type, t2: Type) -> Type:
    return t1 if is_equal_or_less_specific(t1, t2) else t2


def _not_referenced_in(m: Mapping, t: Type, within: Type) -> bool:
    if t == within:
        return False
    k = within.kind
    if k == TYPE_PARAM:
        sub = m.get(within.name)
        if sub is None:
            return True
        return _not_referenced_in(m, t, sub)
    if k in (OPAQUE, LIST, MAP, TYPE):
        return all(_not_referenced_in(m, t, p) for p in within.params)
    return True


# Unification mutates the mapping in place and logs each binding it replaces on a trail, so that a failed
# attempt is undone binding by binding (cel-go copies the whole mapping per attempt).
Trail = list[tuple[str, "Type | None"]]


def _bind(m: Mapping, trail: Trail, name: str, value: Type) -> None:
    trail.append((name, m.get(name)))
    m[name] = value


def _undo(m: Mapping, trail: Trail) -> None:
    for name, old in reversed(trail):
        if old is None:
            del m[name]
        else:
            m[name] = old


def _valid_substitution(m: Mapping, t1: Type, t2: Type, trail: Trail) -> tuple[bool, bool]:
    if t1.kind == t2.kind and t1 == t2:
        return True, True
    sub = m.get(t2.name)
    if sub is not None:
        if t1.kind == sub.kind and t1 == sub:
            return True, True
        if _assignable(m, t1, sub, trail):
            new = most_general(t1, sub)
            if _not_referenced_in(m, t2, new):
                _bind(m, trail, t2.name, new)
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        _bind(m, trail, t2.name, t1)
        return True, False
    return False, False


def _nullable(t: Type) -> bool:
    return t.kind in (OPAQUE, STRUCT, ANY, DURATION, TIMESTAMP) or default_assignable(t, NULL_T)


def _assignable(m: Mapping, t1: Type, t2: Type, trail: Trail) -> bool:
    k1, k2 = t1.kind, t2.kind
    if k2 == TYPE_PARAM:
        valid, has_sub = _valid_substitution(m, t1, t2, trail)
        if valid:
            return True
        if has_sub:
            return False
    if k1 == TYPE_PARAM:
        return _valid_substitution(m, t2, t1, trail)[0]
    if k1 in _DYN_OR_ERROR or k2 in _DYN_OR_ERROR:
        return True
    if k1 == NULL:
        return _nullable(t2)
    if k2 == NULL:
        return _nullable(t1)
    if k1 in _SCALAR_KINDS:
        return default_assignable(t2, t1)
    if k1 == TYPE:
        return k2 == TYPE
    if k1 in (OPAQUE, LIST, MAP):
        return (
            k1 == k2
            and t1.name == t2.name
            and len(t1.params) == len(t2.params)
            and all(_assignable(m, a, b, trail) for a, b in zip(t1.params, t2.params, strict=True))
        )
    return False


_DYN_OR_ERROR = frozenset({DYN, ANY, ERROR})
_SCALAR_KINDS = frozenset({BOOL, BYTES, DOUBLE, INT, STRING, UINT, ANY, DURATION, TIMESTAMP, STRUCT})


def assign(m: Mapping, t1: Type, t2: Type) -> bool:
    """Whether t2 can be assigned to t1; if so `m` holds the new bindings, else it is unchanged."""
    trail: Trail = []
    if _assignable(m, t1, t2, trail):
        return True
    _undo(m, trail)
    return False


def assign_list(m: Mapping, l1: list[Type], l2: list[Type]) -> bool:
    """`assign` element by element, all or nothing."""
    if len(l1) != len(l2):
        return False
    trail: Trail = []
    for a, b in zip(l1, l2, strict=True):
        if not _assignable(m, a, b, trail):
            _undo(m, trail)
            return False
    return True


def is_assignable(m: Mapping, t1: Type, t2: Type) -> Mapping | None:
    """A new mapping under which t2 can be assigned to t1, or None."""
    c = dict(m)
    return c if assign(c, t1, t2) else None


def is_assignable_list(m: Mapping, l1: list[Type], l2: list[Type]) -> Mapping | None:
    c = dict(m)
    return c if assign_list(c, l1, l2) else None


def has_params(t: Type) -> bool:
    """Whether a type parameter occurs in `t`."""
    if not t.params:
        return t.kind == TYPE_PARAM
    stack = list(t.params)
    while stack:
        x = stack.pop()
        if x.kind == TYPE_PARAM:
            return True
        stack.extend(x.params)
    return False


def substitute(m: Mapping, t: Type, params_to_dyn: bool) -> Type:
    if t.kind == TYPE_PARAM:
        sub = m.get(t.name)
        if sub is not None:
            return substitute(m, sub, params_to_dyn)
        return DYN_T if params_to_dyn else t
    if not t.params:
        return t
    return Type(t.kind, t.name, tuple(substitute(m, p, params_to_dyn) for p in t.params))


def substitute_all(m: Mapping, types: dict[int, Type], params_to_dyn: bool) -> dict[int, Type]:
    """substitute() over many types sharing sub-trees: each distinct Type object is rebuilt once."""
    memo: dict[int, Type] = {}

    def sub(tt: Type) -> Type:
        key = id(tt)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if tt.kind == TYPE_PARAM:
            found = m.get(tt.name)
            out = sub(found) if found is not None else (DYN_T if params_to_dyn else tt)
        elif not tt.params:
            out = tt
        else:
            new = tuple(sub(p) for p in tt.params)
            out = (
                tt
                if all(a is b for a, b in zip(new, tt.params, strict=True))
                else Type(tt.kind, tt.name, new)
            )
        memo[key] = out
        return out

    return {i: sub(tt) for i, tt in types.items()}


def rename_params(t: Type, names: dict[str, Type]) -> Type:
    """Substitute declared type parameters (A, B, T...) by fresh type variables."""
    if t.kind == TYPE_PARAM:
        return names.get(t.name, t)
    if not t.params:
        return t
    return Type(t.kind, t.name, tuple(rename_params(p, names) for p in t.params))


def params_in(t: Type, out: set[str]) -> set[str]:
    if t.kind == TYPE_PARAM:
        out.add(t.name)
    for p in t.params:
        params_in(p, out)
    return out
