"""Compile DRA CEL selectors like the API server does: length, syntax and types, the `device` fields,
a bool result and the cost limit. Results are cached per (expression, feature flags).

    compile_selector("device.driver == 'gpu.example.com'", list_attributes=False, consumable_capacity=True)
    -> Compiled (use .evaluate(device)) | CompileError (kind + message in apiserver wording)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from webhook.cel import netlib, pystrings
from webhook.cel.checked import Checked, Node, parse_checked
from webhook.cel.k8slib import K8sLibrary
from webhook.cel.legacy_cost import estimate_cost

MAX_EXPRESSION_BYTES = 10 * 1024  # CELSelectorExpressionMaxLength
MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost

# Kubernetes base-library functions we do not implement. An expression that fails to compile only
# because it calls one of them is accepted unchecked (we must not reject what the API server accepts).
UNIMPLEMENTED_FUNCTIONS = frozenset(
    {
        "url",
        "isURL",
        "image",
        "isImage",
        "format.dns1123Label",
        "format.dns1123Subdomain",
        "format.dns1035Label",
        "format.qualifiedName",
        "format.dns1123LabelPrefix",
        "format.dns1123SubdomainPrefix",
        "format.dns1035LabelPrefix",
        "format.labelValue",
        "format.uri",
        "format.uuid",
        "format.byte",
        "format.date",
        "format.datetime",
        "format.named",
        # two-variable comprehension macros (cel-expr-python parses only the one-variable forms)
        "all",
        "exists",
        "existsOne",
        "exists_one",
        "transformList",
        "transformMap",
        "transformMapEntry",
    }
)

_STATUS = re.compile(r"^[A-Z_]+: |\s*\[[A-Z_]+\]$")
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'")


@dataclass(frozen=True)
class CompileError:
    """Why an expression is rejected. kind: "TooLong" | "Invalid" | "Forbidden" (apiserver error types)."""

    kind: str
    message: str  # the detail: "must have at most 10240 bytes", "compilation failed: ...", ...


@dataclass
class Compiled:
    """A selector that passed compilation. `unchecked`: it uses a library we do not implement."""

    expression: str
    list_attributes: bool
    consumable_capacity: bool
    cost: int
    program: Any = None
    attribute_domains: frozenset[str] = frozenset()
    capacity_domains: frozenset[str] = frozenset()
    unchecked: bool = False
    _env: Any = field(default=None, repr=False)
    checked: Checked | None = field(default=None, repr=False, compare=False)

    def evaluate(self, device: dict[str, Any]) -> bool:
        """Evaluate against a normalised device (see `webhook.cel.activation`). Raises `EvaluationError`."""
        from webhook.cel.activation import EvaluationError, to_cel

        if self.unchecked or self.program is None:
            raise EvaluationError("expression uses a Kubernetes CEL library that draguard does not implement")
        data = to_cel(device, self)
        try:
            value = self.program.eval(data={"device": data})
        except RuntimeError as e:  # e.g. the engine's iteration budget
            raise EvaluationError(_clean(str(e))) from None
        if value.type() == cel.Type.ERROR:
            raise EvaluationError(_clean(str(value.value())))
        result = value.value()
        if not isinstance(result, bool):
            raise EvaluationError(
                f"CEL result of type {value.type().name().lower()} could not be converted to bool"
            )
        return result


def _clean(msg: str) -> str:
    return _STATUS.sub("", msg.strip())


@lru_cache(maxsize=4)
def _env(list_attributes: bool, python_strings: bool = False) -> Any:
    """The DRA environment. `python_strings`: the strings extension in Python plus the list
    `indexOf`/`lastIndexOf` (the native strings extension owns those names; see pystrings)."""
    if python_strings:
        lib = K8sLibrary(list_attributes, netlib.FUNCTIONS + pystrings.FUNCTIONS, "_pystrings")
        return cel.NewEnv(
            variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
            extensions=[lib, ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
        )
    return cel.NewEnv(
        variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
        extensions=[
            K8sLibrary(list_attributes, netlib.FUNCTIONS),
            ext_optional.ExtOptional(),
            ext_strings.ExtStrings(),
            ext_bindings.ExtBindings(),
        ],
    )


_LIST_INDEX = re.compile(r"found no matching overload for '(?:last)?[iI]ndexOf' applied to '\((?:list|dyn)")
_ORDERING = {"_<_", "_<=_", "_>_", "_>=_", "_+_", "_-_", "_*_", "_/_", "_%_", "-_"}
_STATIC_KINDS = {
    "semver": "kubernetes.Semver",
    "quantity": "kubernetes.Quantity",
    "add": "kubernetes.Quantity",
    "sub": "kubernetes.Quantity",
    "ip": "net.IP",
    "cidr": "net.CIDR",
    "masked": "net.CIDR",
}


def _static_kind(n: Node) -> str:
    """kubernetes.Semver/Quantity, net.IP/CIDR when the API server's checker knows it statically."""
    if n.kind == "call" and n.value in _STATIC_KINDS:
        if n.value in ("add", "sub", "masked") and n.target is None:
            return ""
        if n.value == "ip" and n.target is not None:
            return "net.IP"
        return _STATIC_KINDS[n.value]
    if n.kind == "select" and not n.test_only and n.target is not None:
        if _device_map(n.target, frozenset()) == "" and _capacity_domain(n.target):
            return "kubernetes.Quantity"
    if n.kind == "call" and n.value == "_[_]" and len(n.args) == 2 and _capacity_domain(n.args[0]):
        return "kubernetes.Quantity"
    return ""


def _capacity_domain(n: Node) -> bool:
    """`device.capacity[<domain>]` (any index expression)."""
    if n.kind == "call" and n.value == "_[_]" and len(n.args) == 2:
        return _device_map(n.args[0], frozenset()) == "capacity"
    if n.kind == "select" and not n.test_only and n.target is not None:
        return _device_map(n.target, frozenset()) == "capacity"
    return False


def _operator_errors(checked: Checked, expression: str) -> list[str]:
    """Ordering/arithmetic operators on values the API server types as Semver/Quantity/IP/CIDR find no
    overload at compile time there (our `device` is map(string, dyn), so the checker cannot see it)."""
    errors: list[str] = []

    def visit(n: Node) -> None:
        if n.kind == "call" and n.value in _ORDERING and n.target is None:
            kinds = [_static_kind(a) for a in n.args]
            if any(kinds):
                names = ", ".join(k or a.type for k, a in zip(kinds, n.args, strict=True))
                line, col = checked.location(n.id)
                errors.append(
                    f"ERROR: <input>:{line}:{col}: found no matching overload for '{n.value}' applied to "
                    f"'({names})'" + _snippet(expression, line, col)
                )
        for c in n.children():
            visit(c)

    visit(checked.root)
    return errors


def _any_range_errors(checked: Checked, expression: str) -> list[str]:
    """Without DRAListTypeAttributes an attribute value has the type `any` for new expressions, which a
    comprehension cannot range over (cel-go's checker); with the gate it is `dyn`."""
    errors: list[str] = []

    def visit(n: Node) -> None:
        rng = n.iter_range if n.kind == "comprehension" else None
        if (
            rng is not None
            and _inner_map_type(_attribute_value_parent(rng), frozenset()) == "map(string, any)"
        ):
            line, col = checked.location(rng.id)
            errors.append(
                f"ERROR: <input>:{line}:{col}: expression of type 'google.protobuf.Any' cannot be range of a "
                "comprehension (must be list, map, or dynamic)" + _snippet(expression, line, col)
            )
        for c in n.children():
            visit(c)

    visit(checked.root)
    return errors


def _attribute_value_parent(n: Node) -> Node:
    """For `m.id` / `m[key]` the map `m` (else a node no map type is known for)."""
    if n.kind == "select" and not n.test_only and n.target is not None:
        return n.target
    if n.kind == "call" and n.value in ("_[_]", "_[?_]") and len(n.args) == 2:
        return n.args[0]
    return Node(-1, "const")


def _snippet(expression: str, line: int, col: int) -> str:
    text = expression.split("\n")[line - 1] if expression else ""
    return f"\n | {text}\n | {'.' * (col - 1)}^"


def _device_fields(consumable_capacity: bool) -> frozenset[str]:
    base = {"driver", "attributes", "capacity"}
    return frozenset(base | {"allowMultipleAllocations"} if consumable_capacity else base)


def _walk_device(
    checked: Checked, expression: str, fields: frozenset[str]
) -> tuple[list[str], set[str], set[str]]:
    """Errors for unknown `device` fields; the literal domains used with attributes/capacity."""
    errors: list[str] = []
    attr_domains: set[str] = set()
    cap_domains: set[str] = set()

    def visit(n: Node, bound: frozenset[str]) -> None:
        if n.kind == "select" and n.target is not None and n.target.kind == "ident":
            if n.target.value == "device" and "device" not in bound and n.value not in fields:
                line, col = checked.location(n.id)
                errors.append(
                    f"ERROR: <input>:{line}:{col}: undefined field '{n.value}'"
                    + _snippet(expression, line, col)
                )
        if n.kind == "call" and n.value in ("_[_]", "_[?_]") and len(n.args) == 2:
            which = _device_map(n.args[0], bound)
            key = n.args[1]
            map_type = _MAP_TYPES.get(which) or _inner_map_type(n.args[0], bound)
            if map_type and key.kind == "const" and key.type in _NON_STRING_KEYS:
                line, col = checked.location(n.id)
                errors.append(
                    f"ERROR: <input>:{line}:{col}: found no matching overload for '{n.value}' applied to "
                    f"'({map_type}, {key.type})'" + _snippet(expression, line, col)
                )
            if which and key.kind == "const" and isinstance(key.value, str):
                (attr_domains if which == "attributes" else cap_domains).add(key.value)
        if n.kind == "select" and n.target is not None and not n.test_only:
            which = _device_map(n.target, bound)
            if which:
                (attr_domains if which == "attributes" else cap_domains).add(n.value)
        if n.kind == "comprehension":
            inner = bound | {n.iter_var, n.iter_var2, n.accu_var} - {""}
            for part in (n.iter_range, n.accu_init):
                if part is not None:
                    visit(part, bound)
            for part in (n.loop_condition, n.loop_step, n.result):
                if part is not None:
                    visit(part, inner if part is not n.result else bound | {n.accu_var})
            return
        for c in n.children():
            visit(c, bound)

    visit(checked.root, frozenset())
    return errors, attr_domains, cap_domains


# The declared types of `device.attributes` / `device.capacity` (cel-go names them in overload errors).
_MAP_TYPES = {
    "attributes": "map(string, map(string, any))",
    "capacity": "map(string, map(string, kubernetes.Quantity))",
}
_INNER_MAP_TYPES = {"attributes": "map(string, any)", "capacity": "map(string, kubernetes.Quantity)"}
_NON_STRING_KEYS = frozenset({"bool", "int", "uint", "double", "bytes", "null_type"})


def _inner_map_type(n: Node, bound: frozenset[str]) -> str:
    """The type of `device.attributes[<domain>]` / `device.capacity[<domain>]` (a map keyed by string)."""
    if n.kind == "call" and n.value in ("_[_]", "_[?_]") and len(n.args) == 2:
        return _INNER_MAP_TYPES.get(_device_map(n.args[0], bound), "")
    if n.kind == "select" and not n.test_only and n.target is not None:
        return _INNER_MAP_TYPES.get(_device_map(n.target, bound), "")
    return ""


def _is_device_field(n: Node | None, bound: frozenset[str]) -> bool:
    return n is not None and n.kind == "ident" and n.value == "device" and "device" not in bound


def _device_map(n: Node, bound: frozenset[str]) -> str:
    """'attributes' / 'capacity' if `n` is `device.attributes` / `device.capacity`."""
    if n.kind == "select" and n.value in ("attributes", "capacity") and _is_device_field(n.target, bound):
        return str(n.value)
    return ""


_RESULT_TYPES = {
    "quantity": "kubernetes.Quantity",
    "add": "kubernetes.Quantity",
    "sub": "kubernetes.Quantity",
}
_RESULT_TYPES["semver"] = "kubernetes.Semver"


def _result_type(root: Node) -> str:
    """The result type as the API server's checker would see it, where we can tell."""
    if root.type not in ("dyn", "bool"):
        return root.type
    if root.kind == "select" and _is_device_field(root.target, frozenset()):
        return {
            "driver": "string",
            "attributes": "map(string, map(string, any))",
            "capacity": "map(string, map(string, kubernetes.Quantity))",
        }.get(root.value, root.type)
    if (
        root.kind == "call"
        and root.value in ("_[_]",)
        and _device_map(root.args[0], frozenset()) == "capacity"
    ):
        return "map(string, kubernetes.Quantity)"
    if (
        root.kind == "call"
        and root.value in ("_[_]",)
        and _device_map(root.args[0], frozenset()) == "attributes"
    ):
        return "map(string, any)"
    if root.kind == "call" and root.value in _RESULT_TYPES:
        return _RESULT_TYPES[root.value]
    return root.type


def _compile_program(expression: str, list_attributes: bool) -> Any:
    """The engine program; list `indexOf`/`lastIndexOf` need the Python-strings environment."""
    try:
        return _env(list_attributes).compile(expression)
    except RuntimeError as e:
        if not _LIST_INDEX.search(str(e)):
            raise
        try:
            return _env(list_attributes, True).compile(expression)
        except RuntimeError:
            raise e from None


@lru_cache(maxsize=4096)
def compile_selector(
    expression: str, *, list_attributes: bool, consumable_capacity: bool, check_cost: bool = True
) -> Compiled | CompileError:
    """Compile one selector expression in the DRA environment (see module docstring).
    `check_cost=False`: no estimated-cost limit, as when the scheduler compiles stored expressions."""
    if len(expression.encode()) > MAX_EXPRESSION_BYTES:
        return CompileError("TooLong", f"must have at most {MAX_EXPRESSION_BYTES} bytes")
    try:
        program = _compile_program(expression, list_attributes)
    except RuntimeError as e:
        msg = _clean(str(e))
        names = set(_UNDECLARED.findall(msg))
        if names & UNIMPLEMENTED_FUNCTIONS:  # other names may be its member functions
            return Compiled(expression, list_attributes, consumable_capacity, 0, unchecked=True)
        return CompileError("Invalid", "compilation failed: " + msg)
    checked = parse_checked(program.serialize())
    errors, attr_domains, cap_domains = _walk_device(checked, expression, _device_fields(consumable_capacity))
    errors += _operator_errors(checked, expression)
    if not list_attributes:
        errors += _any_range_errors(checked, expression)
    if errors:
        return CompileError("Invalid", "compilation failed: " + "\n".join(errors))
    result = _result_type(checked.root)
    if result not in ("bool", "dyn", "any"):
        return CompileError("Invalid", f"must evaluate to bool or the unknown type, not {result}")
    cost = estimate_cost(checked.root)
    if check_cost and cost > MAX_COST:
        return CompileError("Forbidden", "too complex, exceeds cost limit")
    return Compiled(
        expression,
        list_attributes,
        consumable_capacity,
        cost,
        program,
        frozenset(attr_domains),
        frozenset(cap_domains),
        checked=checked,
    )


class _LegacyProgram:
    """Transitional runtime for `webhook.cel.compiler.Compiled`: the native engine (removed with it)."""

    def __init__(self, compiled: Any) -> None:
        self.native = compile_selector(
            compiled.expression,
            list_attributes=compiled.list_attributes,
            consumable_capacity=compiled.consumable_capacity,
            check_cost=False,
        )

    def evaluate(self, device: dict[str, Any]) -> bool:
        if isinstance(self.native, CompileError):
            from webhook.cel.activation import EvaluationError

            raise EvaluationError(self.native.message)
        return self.native.evaluate(device)


def legacy_planner(compiled: Any) -> _LegacyProgram:
    return _LegacyProgram(compiled)
