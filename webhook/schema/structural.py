"""Fast structural check of one object against the committed `schemas/v<version>/<Kind>.json`.

Each schema node is compiled once into a tuple `(allowed python types, content checker | None,
expected type names)`; checkers are closures over dict lookups, so a ResourceSlice with 64 devices
is checked in well under a millisecond. Semantics are those of `jsonschema.Draft202012Validator`
on the generated schemas, with Kubernetes' decoding rules on top:

* a property whose value is `null` counts as absent (optional: fine; required: `schema.required`, with
  upstream's error text from the audit in `webhook.schema.required`);
* `null` as a list item or map value is reported as `schema.null` (rules cannot use such an item);
* a JSON integer must be a Python `int` (not `bool`, not a float such as `1.0`).

Errors are reported at API-server field paths (`spec.devices[0].attributes[model].string`).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from webhook.config.context import FieldValidation
from webhook.config.data import schema_dir
from webhook.model.catalogue import SCHEMA_KINDS as KINDS
from webhook.model.jsontext import json_head
from webhook.model.plain import deep_copy
from webhook.model.quantity import ERR_FORMAT_WRONG, known_quantity, parse_quantity
from webhook.model.text import clip
from webhook.model.violation import Severity, Violation
from webhook.schema.required import absent_message, zero_filled

SCHEMA_DIR = schema_dir()

_NULL_SEEN: Any = ("null-seen",)  # marker: a property was null (not an error)
_ZERO = "zero"  # marker: (_ZERO, path of the object, field, zero value) — decode an absent field as Go does
UNKNOWN = "schema.unknown-field"
DROPPED = "schema.unknown-field-dropped"
TYPE = "schema.type"
REQUIRED = "schema.required"
NULL = "schema.null"
QUANTITY = "schema.quantity"
INT_RANGE = "schema.integer-range"

DEFAULT_VERSION = "1.37"
FATAL_RULES = frozenset((UNKNOWN, TYPE, NULL, QUANTITY, INT_RANGE))


# A lazy field path: None (root) | (parent, "name") property | (parent, int) index | (parent, "key", None) map key.
LazyPath = Any
Errors = list[tuple[Any, ...]]
Checker = Callable[[Any, LazyPath, Errors], None]
Spec = tuple[frozenset[type], Checker | None, str]

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}
_JSON_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


def _format_path(p: LazyPath) -> str:
    parts: list[str] = []
    while p is not None:
        if len(p) == 3:
            parts.append(f"[{clip(p[1])}]")
        elif type(p[1]) is int:
            parts.append(f"[{p[1]}]")
        else:
            parts.append(("." if p[0] is not None else "") + clip(p[1]))
        p = p[0]
    return "".join(reversed(parts))


class _Compiler:
    """Compiles one schema document's nodes into `Spec` tuples (memoised per `$defs` entry)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = doc.get("$defs", {})
        self.done: dict[str, Spec] = {}
        self.busy: dict[str, list[Spec]] = {}
        self.current = ""  # the `$defs` name being compiled (for the audit's absent-field messages)

    def compile(self, node: dict[str, Any], struct: str = "") -> Spec:
        """`struct`: the Go type name of the object holding this node (for decode-error messages)."""
        ref = node.get("$ref")
        if ref is not None:
            return self._ref(ref)
        types = node.get("type")
        names = [types] if isinstance(types, str) else list(types or [])
        py: tuple[type, ...] = ()
        for n in names or _PY_TYPES:  # no `type`: any JSON value (e.g. RawExtension)
            py += _PY_TYPES[n]
        shown = [n for n in names if not (n == "integer" and "number" in names)]
        expected = " or ".join(shown)
        fn: Checker | None = None
        if names == ["object"]:
            if "properties" in node:
                fn = self._object(node, struct)
            elif isinstance(node.get("additionalProperties"), dict):
                fn = self._map(self.compile(node["additionalProperties"], struct))
        elif names == ["array"] and isinstance(node.get("items"), dict):
            fn = self._array(self.compile(node["items"], struct))
        elif names == ["integer"] and node.get("format") in _INT_RANGES:
            fn = _int_range(node["format"], struct)
        return (frozenset(py), fn, expected)

    def _ref(self, ref: str) -> Spec:
        name = ref.rsplit("/", 1)[-1]
        if name in self.done:
            return self.done[name]
        if name == "Quantity":
            quantity: Spec = (frozenset((str, int, float)), _check_quantity, "string or number")
            self.done[name] = quantity
            return quantity
        if name in self.busy:  # a cycle: go through a cell filled in when the definition is done
            cell = self.busy[name]

            def indirect(v: Any, p: LazyPath, errs: Errors) -> None:
                fn = cell[0][1]
                if fn is not None:
                    fn(v, p, errs)

            return (frozenset((dict,)), indirect, "object")
        cell_list: list[Spec] = []
        self.busy[name] = cell_list
        outer, self.current = self.current, name
        spec = self.compile(self.defs[name], _go_type(name))
        self.current = outer
        cell_list.append(spec)
        del self.busy[name]
        self.done[name] = spec
        return spec

    def _object(self, node: dict[str, Any], struct: str) -> Checker:
        owner = self.current
        moved = self._moved(owner)
        props: dict[str, Spec] = {k: self.compile(v, struct) for k, v in node["properties"].items()}
        required = tuple((r, absent_message(owner, r)) for r in node.get("required", ()))
        zeros = tuple((f, _zero_of(props[f][0])) for f in zero_filled(owner) if f in props)
        closed = node.get("additionalProperties") is False
        known = tuple(sorted(props))

        get = props.get

        def check_object(v: dict[str, Any], path: LazyPath, errs: Errors) -> None:
            for k, item in v.items():
                spec = get(k)
                if spec is None:
                    if closed:
                        errs.append((UNKNOWN, (path, k), known, moved.get(k, ""), owner))
                    continue
                if item is None:
                    errs.append(_NULL_SEEN)  # null = absent (required-ness is checked below)
                    continue
                types, fn, expected = spec
                if type(item) in types:
                    if fn is not None:
                        fn(item, (path, k), errs)
                else:
                    errs.append((TYPE, (path, k), expected, item))
            if required:
                for r, message in required:
                    if v.get(r) is None:
                        errs.append((REQUIRED, (path, r), message))
            if zeros:
                for f, zero in zeros:
                    if v.get(f) is None:
                        errs.append((_ZERO, path, f, zero))

        return check_object

    def _moved(self, owner: str) -> dict[str, str]:
        """Fields an object of definition `owner` had in v1beta1 that resource.k8s.io/v1 moved one level
        down, and where: a request's deviceClassName, selectors, count, ... are under `exactly`."""
        target = _MOVED.get(owner)
        if target is None:
            return {}
        definition, under = target
        return {name: under for name in self.defs.get(definition, {}).get("properties", {})}

    def _map(self, spec: Spec) -> Checker:
        types, fn, expected = spec

        def check_map(v: dict[str, Any], path: LazyPath, errs: Errors) -> None:
            for k, item in v.items():
                if type(item) not in types:
                    if item is None:
                        errs.append((NULL, (path, k, None), expected))
                    else:
                        errs.append((TYPE, (path, k, None), expected, item))
                elif fn is not None:
                    fn(item, (path, k, None), errs)

        return check_map

    def _array(self, spec: Spec) -> Checker:
        types, fn, expected = spec

        def check_array(v: list[Any], path: LazyPath, errs: Errors) -> None:
            for i, item in enumerate(v):
                if type(item) not in types:
                    if item is None:
                        errs.append((NULL, (path, i), expected))
                    else:
                        errs.append((TYPE, (path, i), expected, item))
                elif fn is not None:
                    fn(item, (path, i), errs)

        return check_array


_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
# v1 definition -> (the definition its v1beta1 fields moved to, the field they are under)
_MOVED = {"V1DeviceRequest": ("V1ExactDeviceRequest", "exactly")}


def _zero_of(types: frozenset[type]) -> Any:
    """Go's zero value for a field of these JSON types: {} (struct), "" (string) or 0 (integer)."""
    if dict in types:
        return {}
    if str in types:
        return ""
    if int in types:
        return 0
    raise ValueError(f"no zero value for {sorted(t.__name__ for t in types)}")


def _go_type(definition: str) -> str:
    """The Go type name of a schema definition (`V1ResourcePool` -> `ResourcePool`)."""
    for prefix in ("ResourceV1", "CoreV1", "V1"):
        if definition.startswith(prefix) and definition[len(prefix) : len(prefix) + 1].isupper():
            return definition[len(prefix) :]
    return definition


def _int_range(fmt: str, struct: str) -> Checker:
    lo, hi = _INT_RANGES[fmt]

    def check_int(v: int, path: LazyPath, errs: Errors) -> None:
        # Both ends, as written: kubectl would round -2^63-1 through a float64 to -2^63 (a silently
        # different value), the API server rejects the number itself (curl, client libraries).
        if not lo <= v <= hi:
            errs.append((INT_RANGE, path, struct, fmt, v))

    return check_int


def _check_quantity(v: Any, path: LazyPath, errs: Errors) -> None:
    if known_quantity(v):
        return
    try:
        parse_quantity(v)  # memoised: repeated values ("8Gi") cost one lookup
    except (ValueError, OverflowError) as e:  # ValueError also for ints past Python's 4300-digit limit
        text = str(e)
        errs.append(
            (QUANTITY, path, v, text if text.startswith(("quantities", "unable")) else ERR_FORMAT_WRONG)
        )


def schema_path(kind: str, version: str = DEFAULT_VERSION) -> Any:
    """The committed schema file of `kind` in Kubernetes `version` (`schemas/v1.37/Pod.json`)."""
    return SCHEMA_DIR / f"v{version}" / f"{kind}.json"


def served(kind: str, version: str = DEFAULT_VERSION) -> bool:
    """Whether `version` has a schema for `kind`: every kind it serves, DeviceTaintRule included (v1 from
    1.37 on; before, the shape of the v1beta2/v1alpha3 version it serves, which a converted object is
    checked against; whether a version of it is served is `webhook.convert.served`'s business)."""
    return kind in KINDS and schema_path(kind, version).is_file()


@lru_cache(maxsize=128)  # bounded: one per (kind, supported version)
def _root(kind: str, version: str = DEFAULT_VERSION) -> Spec:
    if kind not in KINDS:
        raise ValueError(f"no schema for kind {kind!r}: known kinds are {', '.join(KINDS)}")
    path = schema_path(kind, version)
    if not path.is_file():
        raise ValueError(f"Kubernetes {version} has no schema for kind {kind!r}")
    doc = json.loads(path.read_text(encoding="utf-8"))
    return _Compiler(doc).compile(doc)


def _show(value: Any) -> str:
    if isinstance(value, str):
        text = json.dumps(value[:81], ensure_ascii=False)  # the first 81 characters decide what is shown
    elif isinstance(value, dict | list):
        text = json_head(value, 80, sort_keys=True, separators=(", ", ": "))  # never all of an aliased value
    else:
        text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _json_type(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _type_hint(expected: str, value: Any) -> str:
    if expected in ("string", "integer or string") and type(value) is bool:
        seen = "y, yes, on, true" if value else "n, no, off, false"
        return (
            "YAML 1.1 reads unquoted y, n, yes, no, on, off, true, false as booleans: quote the value "
            f'(it was one of {seen}, e.g. "{"on" if value else "off"}")'
        )
    if expected == "string" and type(value) in (int, float):
        return "quote the value: YAML reads unquoted numbers as numbers (1.10 becomes 1.1, 0755 becomes 493)"
    if expected == "integer" and type(value) is float:
        return "use a whole number without a decimal point"
    if expected == "integer" and type(value) is str and value.strip().lstrip("+-").isdigit():
        return "remove the quotes"
    if expected == "boolean" and type(value) is str and value.lower() in ("true", "false"):
        return "remove the quotes"
    return ""


def _go_fields(p: LazyPath) -> list[str]:
    """Go's decode-error field path: the JSON names of struct fields from the root (no map keys, no
    list indices), e.g. `spec.devices.attributes.int`."""
    names: list[str] = []
    while p is not None:
        if len(p) == 2 and type(p[1]) is str:
            names.append(p[1])
        p = p[0]
    return names[::-1]


def _as_sent(value: int) -> int | None:
    """The integer kubectl sends for a manifest's integer: exact within int64/uint64 (go-yaml reads those
    as integers), else rounded to a float64 (None when that is infinite: kubectl cannot send it)."""
    if -(2**63) <= value < 2**64:
        return value
    try:
        return int(float(value))
    except OverflowError:
        return None


def _number_text(value: int, fmt: str = "int64") -> str:
    """An out-of-range integer as the API server sees it: as kubectl sends it (exact within uint64, else
    as a float64 in Go's encoding), or as written when kubectl's rounding would bring it into range
    (-2^63-1 becomes -2^63: the number written is what is wrong)."""
    sent = _as_sent(value)
    if sent is None:
        return "+Inf" if value > 0 else "-Inf"
    lo, hi = _INT_RANGES[fmt]
    if sent == value or lo <= sent <= hi:
        return str(value)
    f = float(value)
    return f"{f:.0f}" if abs(f) < 1e21 else repr(f)  # Go: 'f' below 1e21, else shortest 'e' (1e+21)


def _did_you_mean(name: str, known: tuple[str, ...]) -> str:
    lower = {k.lower(): k for k in known}
    if name.lower() in lower:
        return lower[name.lower()]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return close[0]
    for k in known:  # `driverName` -> `driver`, `nodeSelectorTerm` -> `nodeSelectorTerms`
        if len(k) >= 4 and (name.startswith(k) or k.startswith(name)) and len(name) >= 4:
            return k
    return ""


# (definition, field) -> what became of a field of an older API that manifests still carry
_REMOVED: dict[tuple[str, str], str] = {
    ("V1PodResourceClaim", "source"): (
        "a Pod's resourceClaims[].source was removed in Kubernetes 1.31 (the classic DRA API): write its "
        "resourceClaimName or resourceClaimTemplateName in the entry itself"
    ),
    ("V1Device", "basic"): (
        "`basic` is resource.k8s.io/v1beta1's wrapper of a device's fields: in resource.k8s.io/v1 (and "
        "v1beta2) attributes, capacity, consumesCounters, ... are set in the device itself: move them up "
        "a level (an object written for v1beta1: give it that apiVersion and `draguard convert --to v1` it)"
    ),
}


def _unknown(path: str, name: str, known: tuple[str, ...], moved: str, owner: str) -> str:
    """Upstream's `unknown field "<path>"`, with where a v1beta1 field moved in v1, what became of a field
    of an older API (`owner`: the object's definition), or a did-you-mean."""
    msg = f'unknown field "{path}"'
    removed = _REMOVED.get((owner, name))
    if removed:
        return f"{msg}: {removed}"
    if moved:
        parent = path[: len(path) - len(name)]
        return (
            f"{msg}: in resource.k8s.io/v1 it is set under `{moved}` (v1beta1 had it here): move it to "
            f"{parent}{moved}.{name}"
        )
    guess = _did_you_mean(name, known)
    return f'{msg}: did you mean "{guess}"?' if guess else msg


def _violation(err: tuple[Any, ...]) -> Violation:
    rule, lazy = err[0], err[1]
    path = _format_path(lazy)
    if rule == UNKNOWN:
        msg = _unknown(path, lazy[1], err[2], err[3], err[4])
    elif rule == TYPE:
        expected, value = err[2], err[3]
        msg = (
            f'Invalid value: "{_json_type(value)}": {path or "<object>"} in body must be of type '
            f"{expected}: {_show(value)}"
        )
        hint = _type_hint(expected, value)
        if hint:
            msg += f": {hint}"
    elif rule == QUANTITY:
        # The API server decodes a Quantity with ParseQuantity and rejects the whole object with its
        # error ("<Kind> in version "v1" cannot be handled as a <Kind>: <error>").
        msg = f"Invalid value: {_show(err[2])}: {err[3]}"
    elif rule == INT_RANGE:
        struct, fmt, value = err[2], err[3], err[4]
        fields = ".".join(_go_fields(lazy))
        msg = (
            f"Invalid value: {_number_text(value, fmt)}: json: cannot unmarshal number {_number_text(value, fmt)} "
            f"into Go struct field {struct}.{fields} of type {fmt}"
        )
    elif rule == REQUIRED:
        msg = err[2]
    else:
        article = "an" if err[2][:1] in ("a", "i", "o") else "a"
        msg = f"Invalid value: null: {path} must be {article} {err[2]}, not null: remove the item or give it a value"
    return Violation(rule, Severity.ERROR, path, msg)


def check(obj: Any, kind: str, version: str = DEFAULT_VERSION) -> tuple[list[Violation], bool]:
    """Structural violations of `obj` as a `kind` of Kubernetes `version`, and whether they are fatal
    (type errors, unknown fields, null items: the API server could not decode the object, so semantic
    rules must not run)."""
    violations, fatal, _ = check_nulls(obj, kind, version)
    return violations, fatal


def check_nulls(obj: Any, kind: str, version: str = DEFAULT_VERSION) -> tuple[list[Violation], bool, bool]:
    """`check`, and whether any property was null (then `strip_nulls` before running rules)."""
    violations, fatal, saw_null, _ = _outcome(_walk(obj, kind, version))
    return violations, fatal, saw_null


def _walk(obj: Any, kind: str, version: str) -> Errors:
    """One pass of the compiled checker over `obj`: its raw findings (null markers and absent zero
    fields included)."""
    types, fn, expected = _root(kind, version)
    errs: Errors = []
    if type(obj) not in types:
        errs.append((TYPE, None, expected, obj))
    elif fn is not None:
        fn(obj, None, errs)
    return errs


def _outcome(errs: Errors) -> tuple[list[Violation], bool, bool, list[tuple[LazyPath, str, Any]]]:
    """(violations, fatal, a property was null, absent fields to fill with their zero) of one walk."""
    saw_null = False
    zeros: list[tuple[LazyPath, str, Any]] = []
    found: Errors = []
    for e in errs:
        if e is _NULL_SEEN:
            saw_null = True
        elif e[0] == _ZERO:
            zeros.append((e[1], e[2], e[3]))
        else:
            found.append(e)
    return [_violation(e) for e in found], any(e[0] in FATAL_RULES for e in found), saw_null, zeros


def _node(obj: Any, p: LazyPath) -> Any:
    steps: list[Any] = []
    while p is not None:
        steps.append(p[1])
        p = p[0]
    for step in reversed(steps):
        obj = obj[step]
    return obj


_MAX_ZERO_ROUNDS = 8  # a zero struct may hold zero-valued fields of its own (spec -> pool -> count)


def prune_unknown(obj: Any, kind: str, version: str = DEFAULT_VERSION) -> tuple[Any, list[Violation]]:
    """`obj` without the fields `version` does not know (a copy; `obj` itself when it has none), and a
    `schema.unknown-field-dropped` warning for each: what the API server stores when the object is
    written with field validation Warn."""
    unknown = [e for e in _walk(obj, kind, version) if e is not _NULL_SEEN and e[0] == UNKNOWN]
    if not unknown:
        return obj, []
    pruned = deep_copy(obj)
    dropped = []
    for e in unknown:
        parent, name = e[1]
        _node(pruned, parent).pop(name, None)
        path = _format_path(e[1])
        guess = "" if e[3] else _did_you_mean(name, e[2])
        msg = (
            f'unknown field "{path}" dropped: Kubernetes {version} has no such field (written by a client '
            "for another version?); the API server stores an object written with its default field "
            "validation, Warn (as a driver's client-go writes), without it: the object is kept, the field "
            "has no effect" + (f'; did you mean "{guess}"?' if guess else "")
        )
        dropped.append(Violation(DROPPED, Severity.WARNING, path, msg))
    return pruned, dropped


def decode(
    obj: Any, kind: str, version: str = DEFAULT_VERSION, field_validation: FieldValidation = "Strict"
) -> tuple[list[Violation], bool, Any]:
    """Structural violations, whether they are fatal, and the object as the API server decodes it:
    null properties removed and absent value fields (audited `zero`) set to their Go zero value, so
    rules see what upstream validates (`pool: {}` -> `resourceSliceCount: 0`). `obj` is not modified.

    `field_validation` is how the object was written: "Strict" (kubectl; an unknown field is an error
    that rejects the object), or "Warn" (client-go's default; stored state): unknown fields are dropped
    with a warning (`prune_unknown`) and the rest is decoded.

    One walk finds both the violations and the absent fields (a null property counts as absent, so the
    same fields are absent once nulls are stripped); the object is walked again only after zero values
    were filled in (they may hold absent fields of their own)."""
    violations, fatal, saw_null, zeros = _outcome(_walk(obj, kind, version))
    if fatal and field_validation == "Warn" and any(v.rule == UNKNOWN for v in violations):
        obj, dropped = prune_unknown(obj, kind, version)
        violations, fatal, decoded = decode(obj, kind, version)
        return dropped + violations, fatal, decoded
    if fatal:
        return violations, fatal, obj
    decoded = strip_nulls(obj) if saw_null else obj
    copied = saw_null
    for _ in range(_MAX_ZERO_ROUNDS):
        if not zeros:
            break
        if not copied:
            decoded = deep_copy(decoded)
            copied = True
        for parent, field, zero in zeros:
            _node(decoded, parent)[field] = deep_copy(zero)
        violations, fatal, _, zeros = _outcome(_walk(decoded, kind, version))
    return violations, fatal, decoded


def strip_nulls(obj: Any) -> Any:
    """A copy of `obj` without null-valued properties (Kubernetes decodes them as absent), so rules
    may use `d.get("x", [])` safely. Null list items are kept (they are reported as `schema.null`).
    An explicit stack: free-form values (opaque parameters) may nest thousands of levels."""
    if not isinstance(obj, dict | list):
        return obj
    top: Any = {} if isinstance(obj, dict) else []
    stack: list[tuple[Any, Any]] = [(obj, top)]
    while stack:
        src, dst = stack.pop()
        items = ((k, v) for k, v in src.items() if v is not None) if isinstance(src, dict) else enumerate(src)
        for k, v in items:
            if isinstance(v, dict | list):
                new: Any = {} if isinstance(v, dict) else []
                stack.append((v, new))
                v = new
            if isinstance(dst, dict):
                dst[k] = v
            else:
                dst.append(v)
    return top
