"""Fast evaluation of DRA CEL selectors against API devices, with compile, activation and result caches.

Errors (both raised by `SelectorEvaluator.matches`; the allocator treats either as an error of the claim,
never as "no match"):

    CelRuntimeError            compile error of a stored expression, missing attribute key ("no such
     |                         key: <id>"), non-bool result, no such overload, cost/iteration limit,
     |                         attribute values upstream refuses (list attributes without the gate)
     +-- CelUnsupportedError   the expression uses a Kubernetes CEL library draguard does not implement
                               (url, format.*, two-variable comprehensions): the answer is unknown

Caches: (1) compiled selectors per expression (the flags are fixed per evaluator); (2) per device_key
the converted `device` value and its engine activation, with an empty map for every domain that any
selector names literally (Kubernetes returns an empty map for an unknown domain), rebuilt lazily when a
new selector names a new domain; (3) results per (expression, device_key), and per (expression,
projection) where the projection is the device's values of the literal (domain, id) pairs the selector
reads, so identical devices share one evaluation.

Divergences from Kubernetes (documented in webhook/cel/ENGINES.md): the runtime cost limit is the
engine's fixed cap of 10,000 comprehension iterations per evaluation (reported with the Kubernetes
wording "operation cancelled: actual cost limit exceeded"); expressions whose *estimated* cost is within
`max_cost` can never exceed the real limit. In an expression that also inspects `device.attributes`
or `device.capacity` as a whole (iteration, `in`, `size`, computed keys), a lookup of an absent domain
fails with "no such key" instead of yielding an empty map.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel

from webhook.cel.activation import EvaluationError, device_input
from webhook.cel.legacy_compiler import Compiled, CompileError, _env, compile_selector
from webhook.cel.legacy_reads import Read, Reads, analyse, attribute_ranges

MAX_PROJECTIONS = 500_000  # the shared projection cache is cleared when it grows past this
_MISSING = ("\x00missing",)
_STATUS = re.compile(r"^[A-Z_]+: |\s*\[[A-Z_]+\]$")
_NO_KEY = re.compile(r'^Key not found in map : "(.*)"$', re.S)
_NO_OVERLOAD = "No matching overloads found : "
# Upstream's allocator (cel.EnhanceRuntimeError) appends this to a "no such key" error.
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has()"
    " for optional fields"
)
_CEL_TYPE_NAMES = {"STRING": "string", "INT": "int", "UINT": "uint", "DOUBLE": "double", "BYTES": "bytes"}


class CelRuntimeError(Exception):
    """A selector could not be evaluated. `phase`: "compile" or "runtime"; `detail`: why."""

    def __init__(self, expression: str, detail: str, phase: str = "runtime") -> None:
        self.expression = expression
        self.detail = detail
        self.phase = phase
        shown = expression if len(expression) <= 200 else expression[:197] + "..."
        super().__init__(f"CEL {phase} error: {detail} (expression: {shown})")


class CelUnsupportedError(CelRuntimeError):
    """The expression calls a Kubernetes CEL library function draguard does not implement."""


@dataclass(frozen=True)
class _Failure:
    """A cached error, raised anew on every lookup."""

    detail: str
    phase: str = "runtime"
    unsupported: bool = False

    def error(self, expression: str) -> CelRuntimeError:
        cls = CelUnsupportedError if self.unsupported else CelRuntimeError
        return cls(expression, self.detail, self.phase)


@dataclass
class _Selector:
    compiled: Compiled
    reads: Reads
    seeded: bool  # evaluate on the activation with empty maps for named domains


@dataclass
class _Device:
    data: dict[str, Any] | None
    failure: _Failure | None = None
    activation: Any = None
    epoch: int = -1
    plain_activation: Any = None
    expressions: list[str] = field(default_factory=list)


def _hashable(v: Any) -> Hashable:
    t = type(v)
    if t is str or t is int:
        return v  # type: ignore[no-any-return]
    if t is bool:
        return ("b", v)
    if t is dict:
        return ("m", *sorted((k, _hashable(x)) for k, x in v.items()))
    if t is list:
        return ("l", *(_hashable(x) for x in v))
    return ("?", repr(v))


def _runtime_detail(message: str) -> str:
    """cel-expr-python's runtime error text in the wording of cel-go / Kubernetes where we know it."""
    msg = _STATUS.sub("", message.strip())
    m = _NO_KEY.match(msg)
    if m:
        return f"no such key: {m.group(1)}{NO_SUCH_KEY_HINT}"
    if msg.startswith(_NO_OVERLOAD):
        return "no such overload: " + msg[len(_NO_OVERLOAD) :]
    if "Iteration budget exceeded" in msg:
        return "operation cancelled: actual cost limit exceeded"
    if msg == "divide by zero":
        return "division by zero"
    return msg


_GO_TYPES = {bool: "types.Bool", int: "types.Int", str: "types.String", float: "types.Double"}


def _not_iterable(sel: _Selector, entry: _Device) -> str:
    """cel-go's wording for a comprehension over a scalar attribute value."""
    assert sel.compiled.checked is not None and entry.data is not None
    for domain, ident in attribute_ranges(sel.compiled.checked.root):
        value = entry.data["attributes"].get(domain, {}).get(ident)
        go = _GO_TYPES.get(type(value))
        if go:
            return f"got '{go}', expected iterable type"
    return ""


class SelectorEvaluator:
    """Evaluates DRA selectors for one feature-gate combination (see the module docstring)."""

    def __init__(
        self, *, list_attributes: bool, consumable_capacity: bool, max_cost: int = 1_000_000
    ) -> None:
        self.list_attributes = list_attributes
        self.consumable_capacity = consumable_capacity
        self.max_cost = max_cost
        self.evaluations = 0  # engine evaluations actually run (for benchmarks and tests)
        self._env = _env(True)
        self._selectors: dict[str, _Selector | _Failure] = {}
        self._devices: dict[Hashable, _Device] = {}
        self._results: dict[tuple[str, Hashable], bool | _Failure] = {}
        self._projections: dict[tuple[str, tuple[Hashable, ...]], bool | _Failure] = {}
        self._attr_seed: dict[str, dict[str, Any]] = {}
        self._cap_seed: dict[str, dict[str, Any]] = {}
        self._epoch = 0

    # ---- public interface ------------------------------------------------------------------------

    def matches(self, expression: str, device_key: Hashable, driver: str, device: dict[str, Any]) -> bool:
        """Evaluate a DRA CEL selector against one API device (the `spec.devices[i]` dict of a
        ResourceSlice of `driver`). Cached by (expression, device_key): the caller guarantees that
        device_key changes whenever the device's content changes. Compile errors and runtime errors
        raise CelRuntimeError, never a silent False."""
        result = self._results.get((expression, device_key))
        if result is None:
            result = self._evaluate(expression, device_key, driver, device)
        if result is True or result is False:
            return result
        raise result.error(expression)

    def forget(self, device_keys: Iterable[Hashable]) -> None:
        """Drop the activations and results of removed or changed devices."""
        for key in device_keys:
            entry = self._devices.pop(key, None)
            if entry is not None:
                for expression in entry.expressions:
                    self._results.pop((expression, key), None)

    def check(self, expression: str) -> None:
        """Compile `expression` now (raises CelRuntimeError for a compile error)."""
        sel = self._selector(expression)
        if isinstance(sel, _Failure):
            raise sel.error(expression)

    # ---- caches ---------------------------------------------------------------------------------

    def _selector(self, expression: str) -> _Selector | _Failure:
        sel = self._selectors.get(expression)
        if sel is not None:
            return sel
        # The scheduler compiles stored expressions: every `device` field and function of the version
        # exists whatever the gates say (upstream StoredExpressions; version skew).
        compiled = compile_selector(
            expression, list_attributes=True, consumable_capacity=True, check_cost=False
        )
        if isinstance(compiled, CompileError):
            sel = _Failure(compiled.message, "compile")
        elif compiled.unchecked or compiled.program is None or compiled.checked is None:
            sel = _Failure(
                "the expression uses a Kubernetes CEL library that draguard does not implement",
                "runtime",
                unsupported=True,
            )
        else:
            reads = analyse(compiled.checked.root)
            sel = _Selector(compiled, reads, not reads.whole_map)
            if sel.seeded:
                self._seed(compiled)
        self._selectors[expression] = sel
        return sel

    def _seed(self, compiled: Compiled) -> None:
        new_attr = compiled.attribute_domains - self._attr_seed.keys()
        new_cap = compiled.capacity_domains - self._cap_seed.keys()
        if new_attr or new_cap:
            self._attr_seed.update({d: {} for d in new_attr})
            self._cap_seed.update({d: {} for d in new_cap})
            self._epoch += 1

    def _device(self, device_key: Hashable, driver: str, device: dict[str, Any]) -> _Device:
        entry = self._devices.get(device_key)
        if entry is None:
            try:
                data = device_input(device, driver, list_attributes=True, consumable_capacity=True)
                entry = _Device(data)
            except EvaluationError as e:
                entry = _Device(None, _Failure(str(e)))
            self._devices[device_key] = entry
        return entry

    def _activation(self, entry: _Device, seeded: bool) -> Any:
        data = entry.data
        assert data is not None
        if not seeded:
            if entry.plain_activation is None:
                entry.plain_activation = self._env.Activation({"device": data})
            return entry.plain_activation
        if entry.epoch != self._epoch:
            seeded_data = dict(data)
            seeded_data["attributes"] = {**self._attr_seed, **data["attributes"]}
            seeded_data["capacity"] = {**self._cap_seed, **data["capacity"]}
            entry.activation = self._env.Activation({"device": seeded_data})
            entry.epoch = self._epoch
        return entry.activation

    # ---- evaluation -----------------------------------------------------------------------------

    def _evaluate(
        self, expression: str, device_key: Hashable, driver: str, device: dict[str, Any]
    ) -> bool | _Failure:
        sel = self._selector(expression)
        if isinstance(sel, _Failure):
            return sel  # not cached per device: the selector cache holds it
        entry = self._device(device_key, driver, device)
        result: bool | _Failure
        if entry.failure is not None:
            result = entry.failure
        elif sel.reads.projectable:
            assert entry.data is not None
            pkey = (expression, self._project(entry.data, sel.reads.reads))
            cached = self._projections.get(pkey)
            if cached is None:
                if len(self._projections) >= MAX_PROJECTIONS:
                    self._projections.clear()
                cached = self._projections[pkey] = self._run(sel, entry)
            result = cached
        else:
            result = self._run(sel, entry)
        self._results[(expression, device_key)] = result
        entry.expressions.append(expression)
        return result

    @staticmethod
    def _project(data: dict[str, Any], reads: tuple[Read, ...]) -> tuple[Hashable, ...]:
        out: list[Hashable] = []
        for r in reads:
            if len(r) == 1:
                out.append(_hashable(data[r[0]]) if r[0] in data else _MISSING)
                continue
            domain = data[r[0]].get(r[1])
            if len(r) == 3:
                v = _MISSING if domain is None or r[2] not in domain else _hashable(domain[r[2]])
            else:
                v = _hashable(domain or {})
            out.append(v)
        return tuple(out)

    def _run(self, sel: _Selector, entry: _Device) -> bool | _Failure:
        self.evaluations += 1
        activation = self._activation(entry, sel.seeded)
        try:
            value = sel.compiled.program.eval(activation)
        except RuntimeError as e:  # the engine's iteration budget, internal errors
            return _Failure(_runtime_detail(str(e)))
        kind = value.type()
        if kind == cel.Type.ERROR:
            detail = _runtime_detail(str(value.value()))
            if "<iter_range>" in detail:
                detail = _not_iterable(sel, entry) or detail
            return _Failure(detail)
        result = value.value()
        if not isinstance(result, bool):
            name = kind.name()
            name = _CEL_TYPE_NAMES.get(name, name.split("<")[0].lower())
            return _Failure(f"CEL result of type {name} could not be converted to bool")
        return result
