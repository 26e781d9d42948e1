"""Function and identifier declarations of the Kubernetes DRA CEL environment (v1.37): the CEL standard
library, optional types, ext strings v2, sets, ext lists v3, two-variable comprehensions, and the Kubernetes
libraries (urls, regex, lists, authz, authz selectors, quantity, ip, cidr, format, semver v1, DRA includes).

Signatures are written `name(arg, ...) -> result` with `target.name(...)` for member overloads; single capital
letters (A, B, K, V, T) are type parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from webhook.cel.checker import types as t
from webhook.cel.checker.types import Type


@dataclass(frozen=True, slots=True)
class Overload:
    id: str
    args: tuple[Type, ...]  # the receiver first for member overloads
    result: Type
    member: bool
    type_params: tuple[str, ...]


_NAMED = {
    "bool": t.BOOL_T,
    "bytes": t.BYTES_T,
    "double": t.DOUBLE_T,
    "duration": t.DURATION_T,
    "dyn": t.DYN_T,
    "int": t.INT_T,
    "null": t.NULL_T,
    "string": t.STRING_T,
    "timestamp": t.TIMESTAMP_T,
    "uint": t.UINT_T,
    "Quantity": t.QUANTITY_T,
    "Semver": t.SEMVER_T,
    "URL": t.URL_T,
    "Format": t.FORMAT_T,
    "IP": t.IP_T,
    "CIDR": t.CIDR_T,
    "Authorizer": t.struct("kubernetes.authorization.Authorizer"),
    "PathCheck": t.struct("kubernetes.authorization.PathCheck"),
    "GroupCheck": t.struct("kubernetes.authorization.GroupCheck"),
    "ResourceCheck": t.struct("kubernetes.authorization.ResourceCheck"),
    "Decision": t.struct("kubernetes.authorization.Decision"),
}


def _type(s: str) -> Type:
    s = s.strip()
    if "(" in s:
        head, rest = s.split("(", 1)
        inner = rest[:-1]
        parts, depth, cur = [], 0, ""
        for ch in inner:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "("
            depth -= ch == ")"
            cur += ch
        parts.append(cur)
        ps = [_type(p) for p in parts]
        if head == "list":
            return t.list_of(ps[0])
        if head == "map":
            return t.map_of(ps[0], ps[1])
        if head == "opt":
            return t.optional_of(ps[0])
        if head == "type":
            return t.type_of(ps[0])
        raise ValueError(s)
    if len(s) == 1 and s.isupper():
        return t.param(s)
    return _NAMED[s]


FUNCTIONS: dict[str, list[Overload]] = {}


def _add(name: str, oid: str, sig: str) -> None:
    """sig: 'A, B -> R' (global) or 'A.(B) -> R' (member: receiver A)."""
    lhs, res = sig.split("->")
    lhs = lhs.strip()
    member = lhs.endswith(")") and ".(" in lhs
    if member:
        recv, rest = lhs.split(".(", 1)
        arg_text = [recv] + ([x for x in _split(rest[:-1])] if rest[:-1].strip() else [])
    else:
        arg_text = _split(lhs) if lhs else []
    args = tuple(_type(a) for a in arg_text)
    result = _type(res)
    names: set[str] = set()
    for a in (*args, result):
        t.params_in(a, names)
    FUNCTIONS.setdefault(name, []).append(Overload(oid, args, result, member, tuple(sorted(names))))


def _split(s: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _table(name: str, rows: str) -> None:
    for line in rows.strip().splitlines():
        oid, sig = line.split(":", 1)
        _add(name, oid.strip(), sig.strip())


# --- standard library -------------------------------------------------------------------------------
_table("_?_:_", "conditional: bool, A, A -> A")
_table("_&&_", "logical_and: bool, bool -> bool")
_table("_||_", "logical_or: bool, bool -> bool")
_table("!_", "logical_not: bool -> bool")
_table("@not_strictly_false", "not_strictly_false: bool -> bool")
_table("__not_strictly_false__", "__not_strictly_false__: bool -> bool")
_table("_==_", "equals: A, A -> bool")
_table("_!=_", "not_equals: A, A -> bool")
_table(
    "_+_",
    """
add_bytes: bytes, bytes -> bytes
add_double: double, double -> double
add_duration_duration: duration, duration -> duration
add_duration_timestamp: duration, timestamp -> timestamp
add_timestamp_duration: timestamp, duration -> timestamp
add_int64: int, int -> int
add_list: list(A), list(A) -> list(A)
add_string: string, string -> string
add_uint64: uint, uint -> uint
""",
)
_table(
    "_/_",
    "divide_double: double, double -> double\ndivide_int64: int, int -> int\ndivide_uint64: uint, uint -> uint",
)
_table("_%_", "modulo_int64: int, int -> int\nmodulo_uint64: uint, uint -> uint")
_table(
    "_*_",
    "multiply_double: double, double -> double\nmultiply_int64: int, int -> int\nmultiply_uint64: uint, uint -> uint",
)
_table("-_", "negate_double: double -> double\nnegate_int64: int -> int")
_table(
    "_-_",
    """
subtract_double: double, double -> double
subtract_duration_duration: duration, duration -> duration
subtract_int64: int, int -> int
subtract_timestamp_duration: timestamp, duration -> timestamp
subtract_timestamp_timestamp: timestamp, timestamp -> duration
subtract_uint64: uint, uint -> uint
""",
)
for _op, _pre in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
    _table(
        _op,
        f"""
{_pre}_bool: bool, bool -> bool
{_pre}_int64: int, int -> bool
{_pre}_int64_double: int, double -> bool
{_pre}_int64_uint64: int, uint -> bool
{_pre}_uint64: uint, uint -> bool
{_pre}_uint64_double: uint, double -> bool
{_pre}_uint64_int64: uint, int -> bool
{_pre}_double: double, double -> bool
{_pre}_double_int64: double, int -> bool
{_pre}_double_uint64: double, uint -> bool
{_pre}_string: string, string -> bool
{_pre}_bytes: bytes, bytes -> bool
{_pre}_timestamp: timestamp, timestamp -> bool
{_pre}_duration: duration, duration -> bool
""",
    )
_table(
    "_[_]",
    """
index_list: list(A), int -> A
index_map: map(A, B), A -> B
optional_list_index_int: opt(list(V)), int -> opt(V)
optional_map_index_value: opt(map(K, V)), K -> opt(V)
""",
)
for _in in ("@in", "_in_", "in"):
    _table(_in, "in_list: A, list(A) -> bool\nin_map: A, map(A, B) -> bool")
_table(
    "size",
    """
size_bytes: bytes -> int
bytes_size: bytes.() -> int
size_list: list(A) -> int
list_size: list(A).() -> int
size_map: map(A, B) -> int
map_size: map(A, B).() -> int
size_string: string -> int
string_size: string.() -> int
""",
)
_table("type", "type: A -> type(A)")
_table("bool", "bool_to_bool: bool -> bool\nstring_to_bool: string -> bool")
_table("bytes", "bytes_to_bytes: bytes -> bytes\nstring_to_bytes: string -> bytes")
_table(
    "double",
    "double_to_double: double -> double\nint64_to_double: int -> double\nstring_to_double: string -> double\n"
    "uint64_to_double: uint -> double",
)
_table(
    "duration",
    "duration_to_duration: duration -> duration\nint64_to_duration: int -> duration\n"
    "string_to_duration: string -> duration",
)
_table("dyn", "to_dyn: A -> dyn")
_table(
    "int",
    """
int64_to_int64: int -> int
double_to_int64: double -> int
duration_to_int64: duration -> int
string_to_int64: string -> int
timestamp_to_int64: timestamp -> int
uint64_to_int64: uint -> int
""",
)
_table(
    "string",
    """
string_to_string: string -> string
bool_to_string: bool -> string
bytes_to_string: bytes -> string
double_to_string: double -> string
duration_to_string: duration -> string
int64_to_string: int -> string
timestamp_to_string: timestamp -> string
uint64_to_string: uint -> string
ip_to_string: IP -> string
cidr_to_string: CIDR -> string
""",
)
_table(
    "timestamp",
    "timestamp_to_timestamp: timestamp -> timestamp\nint64_to_timestamp: int -> timestamp\n"
    "string_to_timestamp: string -> timestamp",
)
_table(
    "uint",
    "uint64_to_uint64: uint -> uint\ndouble_to_uint64: double -> uint\nint64_to_uint64: int -> uint\n"
    "string_to_uint64: string -> uint",
)
_table("contains", "contains_string: string.(string) -> bool")
_table("endsWith", "ends_with_string: string.(string) -> bool")
_table("startsWith", "starts_with_string: string.(string) -> bool")
_table("matches", "matches: string, string -> bool\nmatches_string: string.(string) -> bool")
for _fn, _oid in (
    ("getFullYear", "timestamp_to_year"),
    ("getMonth", "timestamp_to_month"),
    ("getDayOfYear", "timestamp_to_day_of_year"),
    ("getDayOfMonth", "timestamp_to_day_of_month"),
    ("getDate", "timestamp_to_day_of_month_1_based"),
    ("getDayOfWeek", "timestamp_to_day_of_week"),
    ("getHours", "timestamp_to_hours"),
    ("getMinutes", "timestamp_to_minutes"),
    ("getSeconds", "timestamp_to_seconds"),
    ("getMilliseconds", "timestamp_to_milliseconds"),
):
    _add(_fn, _oid, "timestamp.() -> int")
    _add(_fn, _oid + ("_tz" if _fn == "getSeconds" else "_with_tz"), "timestamp.(string) -> int")
    if _fn in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
        _add(_fn, "duration_to_" + _fn[3:].lower(), "duration.() -> int")

# --- optional types -----------------------------------------------------------------------------------
_table("optional.of", "optional_of: V -> opt(V)")
_table("optional.ofNonZeroValue", "optional_ofNonZeroValue: V -> opt(V)")
_table("optional.none", "optional_none:  -> opt(V)")
_table("value", "optional_value: opt(V).() -> V")
_table("hasValue", "optional_hasValue: opt(V).() -> bool")
_table("or", "optional_or_optional: opt(V).(opt(V)) -> opt(V)")
_table("orValue", "optional_orValue_value: opt(V).(V) -> V")
_table("_?._", "select_optional_field: dyn, string -> opt(V)")
_table(
    "_[?_]",
    """
list_optindex_optional_int: list(V), int -> opt(V)
optional_list_optindex_optional_int: opt(list(V)), int -> opt(V)
map_optindex_optional_value: map(K, V), K -> opt(V)
optional_map_optindex_optional_value: opt(map(K, V)), K -> opt(V)
""",
)
_table("last", "list_last: list(V).() -> opt(V)")
_table("first", "list_first: list(V).() -> opt(V)")
_table("optional.unwrap", "optional_unwrap: list(opt(V)) -> list(V)")
_table("unwrapOpt", "optional_unwrapOpt: list(opt(V)).() -> list(V)")

# --- ext strings v2 --------------------------------------------------------------------------------------
_table("charAt", "string_char_at_int: string.(int) -> string")
_table(
    "indexOf",
    "string_index_of_string: string.(string) -> int\nstring_index_of_string_int: string.(string, int) -> int\n"
    "list_a_index_of_int: list(A).(A) -> int",
)
_table(
    "lastIndexOf",
    "string_last_index_of_string: string.(string) -> int\n"
    "string_last_index_of_string_int: string.(string, int) -> int\nlist_a_last_index_of_int: list(A).(A) -> int",
)
_table("lowerAscii", "string_lower_ascii: string.() -> string")
_table(
    "replace",
    "string_replace_string_string: string.(string, string) -> string\n"
    "string_replace_string_string_int: string.(string, string, int) -> string",
)
_table(
    "split",
    "string_split_string: string.(string) -> list(string)\n"
    "string_split_string_int: string.(string, int) -> list(string)",
)
_table(
    "substring",
    "string_substring_int: string.(int) -> string\nstring_substring_int_int: string.(int, int) -> string",
)
_table("trim", "string_trim: string.() -> string")
_table("upperAscii", "string_upper_ascii: string.() -> string")
_table("format", "string_format: string.(list(dyn)) -> string")
_table("strings.quote", "strings_quote: string -> string")
_table("join", "list_join: list(string).() -> string\nlist_join_string: list(string).(string) -> string")

# --- sets, ext lists v3, comprehensions -------------------------------------------------------------------
for _fn in ("contains", "equivalent", "intersects"):
    _table(f"sets.{_fn}", f"list_sets_{_fn}_list: list(T), list(T) -> bool")
_table("slice", "list_slice: list(T).(int, int) -> list(T)")
_table("flatten", "list_flatten: list(list(T)).() -> list(T)\nlist_flatten_int: list(dyn).(int) -> list(dyn)")
_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
_RUNTIME_NAME = {"duration": "google.protobuf.Duration", "timestamp": "google.protobuf.Timestamp"}
for _c in _COMPARABLE:
    _add("sort", f"list_{_RUNTIME_NAME.get(_c, _c)}_sort", f"list({_c}).() -> list({_c})")
for _c in _COMPARABLE:
    _add(
        "@sortByAssociatedKeys",
        f"list_{_RUNTIME_NAME.get(_c, _c)}_sortByAssociatedKeys",
        f"list(T).(list({_c})) -> list(T)",
    )
_table("lists.range", "lists_range: int -> list(int)")
_table("reverse", "list_reverse: list(T).() -> list(T)")
_table("distinct", "list_distinct: list(T).() -> list(T)")
_table(
    "cel.@mapInsert",
    "@mapInsert_map_key_value: map(K, V), K, V -> map(K, V)\n@mapInsert_map_map: map(K, V), map(K, V) -> map(K, V)",
)

# --- Kubernetes libraries ----------------------------------------------------------------------------------
_table("url", "string_to_url: string -> URL")
for _fn, _oid in (
    ("getScheme", "url_get_scheme"),
    ("getHost", "url_get_host"),
    ("getHostname", "url_get_hostname"),
    ("getPort", "url_get_port"),
    ("getEscapedPath", "url_get_escaped_path"),
):
    _add(_fn, _oid, "URL.() -> string")
_table("getQuery", "url_get_query: URL.() -> map(string, list(string))")
_table("isURL", "is_url_string: string -> bool")
_table("find", "string_find_string: string.(string) -> string")
_table(
    "findAll",
    "string_find_all_string: string.(string) -> list(string)\n"
    "string_find_all_string_int: string.(string, int) -> list(string)",
)
_LIST_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
for _c in _LIST_COMPARABLE:
    _add("isSorted", f"list_{_c}_is_sorted_bool", f"list({_c}).() -> bool")
for _c in ("int", "uint", "double", "duration"):
    _add("sum", f"list_{_c}_sum_{_c}", f"list({_c}).() -> {_c}")
for _c in _LIST_COMPARABLE:
    _add("max", f"list_{_c}_max_{_c}", f"list({_c}).() -> {_c}")
for _c in _LIST_COMPARABLE:
    _add("min", f"list_{_c}_min_{_c}", f"list({_c}).() -> {_c}")
_table("path", "authorizer_path: Authorizer.(string) -> PathCheck")
_table("group", "authorizer_group: Authorizer.(string) -> GroupCheck")
_table("serviceAccount", "authorizer_serviceaccount: Authorizer.(string, string) -> Authorizer")
_table("resource", "groupcheck_resource: GroupCheck.(string) -> ResourceCheck")
_table("subresource", "resourcecheck_subresource: ResourceCheck.(string) -> ResourceCheck")
_table("namespace", "resourcecheck_namespace: ResourceCheck.(string) -> ResourceCheck")
_table("name", "resourcecheck_name: ResourceCheck.(string) -> ResourceCheck")
_table(
    "check",
    "pathcheck_check: PathCheck.(string) -> Decision\nresourcecheck_check: ResourceCheck.(string) -> Decision",
)
_table("errored", "decision_errored: Decision.() -> bool")
_table("error", "decision_error: Decision.() -> string")
_table("allowed", "decision_allowed: Decision.() -> bool")
_table("reason", "decision_reason: Decision.() -> string")
_table("fieldSelector", "authorizer_fieldselector: ResourceCheck.(string) -> ResourceCheck")
_table("labelSelector", "authorizer_labelselector: ResourceCheck.(string) -> ResourceCheck")
_table("quantity", "string_to_quantity: string -> Quantity")
_table("isQuantity", "is_quantity_string: string -> bool")
_table("sign", "quantity_sign: Quantity -> int")
_table("isGreaterThan", "quantity_is_greater_than: Quantity.(Quantity) -> bool")
_table("isLessThan", "quantity_is_less_than: Quantity.(Quantity) -> bool")
_table("compareTo", "quantity_compare_to: Quantity.(Quantity) -> int")
_table("asApproximateFloat", "quantity_get_float: Quantity.() -> double")
_table("asInteger", "quantity_get_int: Quantity.() -> int")
_table("isInteger", "quantity_is_integer: Quantity.() -> bool")
_table("add", "quantity_add: Quantity.(Quantity) -> Quantity\nquantity_add_int: Quantity.(int) -> Quantity")
_table("sub", "quantity_sub: Quantity.(Quantity) -> Quantity\nquantity_sub_int: Quantity.(int) -> Quantity")
_table("ip", "string_to_ip: string -> IP\ncidr_ip: CIDR.() -> IP")
_table("family", "ip_family: IP.() -> int")
_table("ip.isCanonical", "ip_is_canonical: string -> bool")
_table("isUnspecified", "ip_is_unspecified: IP.() -> bool")
_table("isLoopback", "ip_is_loopback: IP.() -> bool")
_table("isLinkLocalMulticast", "ip_is_link_local_multicast: IP.() -> bool")
_table("isLinkLocalUnicast", "ip_is_link_local_unicast: IP.() -> bool")
_table("isGlobalUnicast", "ip_is_global_unicast: IP.() -> bool")
_table("isIP", "is_ip: string -> bool")
_table("cidr", "string_to_cidr: string -> CIDR")
_table("containsIP", "cidr_contains_ip_string: CIDR.(string) -> bool\ncidr_contains_ip_ip: CIDR.(IP) -> bool")
_table(
    "containsCIDR",
    "cidr_contains_cidr_string: CIDR.(string) -> bool\ncidr_contains_cidr: CIDR.(CIDR) -> bool",
)
_table("prefixLength", "cidr_prefix_length: CIDR.() -> int")
_table("masked", "cidr_masked: CIDR.() -> CIDR")
_table("isCIDR", "is_cidr: string -> bool")
_table("validate", "format-validate: Format.(string) -> opt(list(string))")
_table("format.named", "format-named: string -> opt(Format)")
NAMED_FORMATS = (
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
)
for _f in NAMED_FORMATS:
    _add("format." + _f, "format." + _f, " -> Format")
_table("semver", "string_to_semver: string -> Semver\nstring_bool_to_semver: string, bool -> Semver")
_table("isSemver", "is_semver_string: string -> bool\nis_semver_string_bool: string, bool -> bool")
_table("isGreaterThan", "semver_is_greater_than: Semver.(Semver) -> bool")
_table("isLessThan", "semver_is_less_than: Semver.(Semver) -> bool")
_table("compareTo", "semver_compare_to: Semver.(Semver) -> int")
_table("major", "semver_major: Semver.() -> int")
_table("minor", "semver_minor: Semver.() -> int")
_table("patch", "semver_patch: Semver.() -> int")

INCLUDES = Overload("dra_includes_dyn_dyn", (t.DYN_T, t.DYN_T), t.BOOL_T, True, ())

# Type identifiers (type(T) values): the standard types plus the types the libraries register.
TYPE_IDENTS: dict[str, Type] = {
    "bool": t.BOOL_T,
    "bytes": t.BYTES_T,
    "double": t.DOUBLE_T,
    "google.protobuf.Duration": t.DURATION_T,
    "int": t.INT_T,
    "list": t.list_of(t.param("A")),
    "map": t.map_of(t.param("A"), t.param("B")),
    "null_type": t.NULL_T,
    "string": t.STRING_T,
    "google.protobuf.Timestamp": t.TIMESTAMP_T,
    "type": t.TYPE_T,
    "uint": t.UINT_T,
    "optional_type": t.optional_of(t.param("T")),
    "net.IP": t.IP_T,
    "net.CIDR": t.CIDR_T,
}


def device_type(*, list_attributes: bool, consumable_capacity: bool) -> dict[str, Type]:
    """The fields of `kubernetes.DRADevice` as the environment declares them for these feature gates."""
    attr = t.DYN_T if list_attributes else t.ANY_T
    fields = {
        "driver": t.STRING_T,
        "attributes": t.map_of(t.STRING_T, t.map_of(t.STRING_T, attr)),
        "capacity": t.map_of(t.STRING_T, t.map_of(t.STRING_T, t.QUANTITY_T)),
    }
    if consumable_capacity:
        fields["allowMultipleAllocations"] = t.BOOL_T
    return fields


DEVICE_T = t.struct("kubernetes.DRADevice")
