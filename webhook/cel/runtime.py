"""Evaluate DRA CEL selectors against API devices: our own evaluator (webhook.cel.interpreter.program), bounded in time
(Kubernetes' runtime cost limit) and memory, with result sharing and caches bounded by bytes.

    ev = SelectorEvaluator(list_attributes=..., consumable_capacity=...)
    ev.matches(expression, device_key, driver, device) -> bool      # raises CelRuntimeError
    ev.last_cost / ev.cost_used      # actual CEL cost of the latest matches() / of all evaluations run

Errors (`CelRuntimeError`, `phase` "compile" or "runtime"): a compile error of the stored expression,
"no such key: x", a non-bool result, "no such overload", the runtime cost limit ("operation cancelled:
actual cost limit exceeded"), the size limit, attribute values upstream refuses. The allocator treats
every one as an error of the claim, never as "no match".

Result sharing: results are cached per (expression, device_key), and per (expression, projection) where
the projection is the device's values of exactly what the selector reads with literal keys (see
`webhook.cel.interpreter.reads`), so identical devices share one evaluation. Every cache is a ByteLRU; an evaluation keeps
nothing but its boolean result (or error text).

Budget: `last_cost` is the actual cost (cel-go's runtime cost units, at most `max_cost` per evaluation)
the latest `matches()` spent, 0 when the answer came from a cache; `cost_used` sums it over the
evaluator's life. The allocator charges it against its step budget (webhook.engine.selectors).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from webhook.cel.common.values import CelError, EvaluationStopped, Optional, type_name
from webhook.cel.interpreter.activation import DeviceInput
from webhook.cel.interpreter.program import COST_LIMIT, PlanError, Program, plan
from webhook.cel.interpreter.reads import Read, analyse
from webhook.model.cache import ByteLRU
from webhook.model.errors import DraguardError

# Upstream's allocator (cel.EnhanceRuntimeError) appends this to a "no such key" error.
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has()"
    " for optional fields"
)
PROJECTION_CACHE_BYTES = 16 << 20
DEVICE_CACHE_BYTES = 64 << 20  # ~300 B a device + ~60 B a result: 100,000+ devices
SELECTOR_CACHE_BYTES = 16 << 20


class CelRuntimeError(DraguardError):
    """A selector could not be evaluated. `phase`: "compile" or "runtime"; `detail`: why."""

    def __init__(self, expression: str, detail: str, phase: str = "runtime") -> None:
        self.expression = expression
        self.detail = detail
        self.phase = phase
        shown = expression if len(expression) <= 200 else expression[:197] + "..."
        super().__init__(f"CEL {phase} error: {detail} (expression: {shown})")


@dataclass(frozen=True, slots=True)
class _Failure:
    """A cached error, raised anew on every lookup."""

    detail: str
    phase: str = "runtime"

    def error(self, expression: str) -> CelRuntimeError:
        return CelRuntimeError(expression, self.detail, self.phase)


# What an entry retains beyond the API device it points to (owned by the cluster state): the entry, its
# DeviceInput and results dict, the key tuple; each result adds a dict slot (the expression is shared).
_ENTRY_BYTES = 300
_RESULT_BYTES = 60


class _Entry:
    """What is kept per device_key: its input (None once forgotten) and its results."""

    __slots__ = ("input", "results", "nbytes")

    def __init__(self, dev: DeviceInput | None) -> None:
        self.input = dev
        self.results: dict[str, bool | _Failure] = {}
        self.nbytes = _ENTRY_BYTES


@dataclass(frozen=True, slots=True)
class _Selector:
    program: Program
    nbytes: int
    reads: tuple[Read, ...] | None  # None: not projectable (reads a whole map or `device` itself)


def _runtime_detail(e: CelError) -> str:
    msg = e.message
    if msg.startswith("no such key: "):
        return msg + NO_SUCH_KEY_HINT
    return msg


# cel-go ConvertToNative(bool) errors, which Kubernetes appends to the non-bool result message.
_NATIVE = {
    "int": "unsupported type conversion from 'int' to bool",
    "uint": "unsupported type conversion from 'uint' to bool",
    "double": "type conversion error from Double to 'bool'",
    "string": "unsupported native conversion from string to 'bool'",
    "bytes": "type conversion error from Bytes to 'bool'",
    "list": "type conversion error from list to 'bool'",
    "map": "type conversion error from map to 'bool'",
    "null_type": "type conversion error from 'null_type' to 'bool'",
    "type": "type conversion not supported for 'type'",
    "google.protobuf.Duration": "type conversion error from 'Duration' to 'bool'",
    "google.protobuf.Timestamp": "type conversion error from 'Timestamp' to 'bool'",
}


def not_bool(value: Any) -> str:
    """Kubernetes' error for a selector whose result is not a bool."""
    name = type_name(value)
    if type(value) is Optional:
        why = (
            "optional.none() dereference"
            if not value.has_value()
            else _NATIVE.get(type_name(value.value), "")
        )
    else:
        why = _NATIVE.get(name) or f"type conversion error from '{name.rpartition('.')[2]}' to 'bool'"
    return f"CEL result of type {name} could not be converted to bool" + (f": {why}" if why else "")


class SelectorEvaluator:
    """Evaluates DRA selectors for one feature-gate combination (see the module docstring)."""

    def __init__(
        self, *, list_attributes: bool, consumable_capacity: bool, max_cost: int = COST_LIMIT
    ) -> None:
        self.list_attributes = list_attributes
        self.consumable_capacity = consumable_capacity
        self.max_cost = max_cost
        self.evaluations = 0  # evaluations actually run (for benchmarks and tests)
        self.cost_used = 0  # their summed actual CEL cost
        self.last_cost = 0  # the actual CEL cost the latest matches() call spent (0: a cached answer)
        self._selectors: ByteLRU[str, _Selector | _Failure] = ByteLRU(SELECTOR_CACHE_BYTES)
        # per device_key: its DeviceInput and its results per expression
        self._devices: ByteLRU[Hashable, _Entry] = ByteLRU(DEVICE_CACHE_BYTES)
        self._projections: ByteLRU[tuple[str, tuple[Any, ...]], bool | _Failure] = ByteLRU(
            PROJECTION_CACHE_BYTES
        )

    # ---- public interface ------------------------------------------------------------------------

    def matches(self, expression: str, device_key: Hashable, driver: str, device: dict[str, Any]) -> bool:
        """Evaluate a DRA CEL selector against one API device (the `spec.devices[i]` dict of a
        ResourceSlice of `driver`). Cached by (expression, device_key): the caller guarantees that
        device_key changes whenever the device's content changes. Compile errors and runtime errors
        raise CelRuntimeError, never a silent False."""
        self.last_cost = 0
        entry = self._devices.get(device_key)
        result = entry.results.get(expression) if entry is not None else None
        if result is None:
            result = self._evaluate(expression, device_key, driver, device, entry)
        if result is True or result is False:
            return result
        raise result.error(expression)

    def forget(self, device_keys: Iterable[Hashable]) -> None:
        """Drop the inputs and results of removed or changed devices."""
        for key in device_keys:
            self._devices.discard(key)  # not an empty entry: those filled the cache under churn

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
        sel = compile_stored(expression)
        self._selectors.put(expression, sel, sel.nbytes if isinstance(sel, _Selector) else 300)
        return sel

    # ---- evaluation -----------------------------------------------------------------------------

    def _evaluate(
        self,
        expression: str,
        device_key: Hashable,
        driver: str,
        device: dict[str, Any],
        entry: _Entry | None,
    ) -> bool | _Failure:
        sel = self._selector(expression)
        if isinstance(sel, _Failure):
            return sel  # not cached per device: the selector cache holds it
        if entry is None or entry.input is None:
            entry = _Entry(DeviceInput(device, driver))
        dev = entry.input
        assert dev is not None
        result: bool | _Failure
        if dev.failure is not None:
            result = _Failure(dev.failure)
        elif sel.reads is not None:
            projection = tuple(dev.read(r) for r in sel.reads)
            pkey = (expression, projection)
            cached = self._projections.get(pkey)
            if cached is None:
                cached = self._run(sel, dev)
                self._projections.put(pkey, cached, 64 * len(projection) + 8 * len(expression))
            result = cached
        else:
            result = self._run(sel, dev)
        entry.results[expression] = result
        entry.nbytes += _RESULT_BYTES
        self._devices.put(device_key, entry, entry.nbytes)
        return result

    def _run(self, sel: _Selector, entry: DeviceInput) -> bool | _Failure:
        self.evaluations += 1
        try:
            value, cost = sel.program.evaluate(device=entry, limit=self.max_cost)
        except CelError as e:
            self._spent(e.cost)
            return _Failure(_runtime_detail(e))
        except EvaluationStopped as e:
            self._spent(e.cost)
            return _Failure(e.message)
        self._spent(cost)
        if value is True or value is False:
            return value
        return _Failure(not_bool(value))

    def _spent(self, cost: int) -> None:
        self.last_cost = cost
        self.cost_used += cost


# ---- compiling stored expressions -----------------------------------------------------------------------


def compile_stored(expression: str) -> _Selector | _Failure:
    """Compile as the scheduler compiles stored expressions (every field and function of the version,
    whatever the gates say; no estimated-cost limit) and plan the program."""
    from webhook.cel.compiler import CompileError, compile_selector

    compiled = compile_selector(expression, list_attributes=True, consumable_capacity=True, check_cost=False)
    if isinstance(compiled, CompileError):
        return _Failure(compiled.message, "compile")
    root = compiled.ast.expr
    try:
        program = plan(root, device="device", qualified=compiled.qualified)
    except PlanError as e:
        return _Failure(f"program instantiation failed: {e}", "compile")
    except Exception as e:  # a defect of ours: an error of the selector, never a traceback
        return _Failure(f"internal error planning the expression: {type(e).__name__}: {e}", "compile")
    reads = analyse(root)
    # A whole domain map as the key rarely matches between devices (drivers publish per-device ids):
    # computing it costs more than the evaluation it could save.
    shared = reads.projectable and all(len(r) != 2 for r in reads.reads)
    # closures, their cells and constants: 30-350 bytes per AST node (bench/cel_compile_bench.py measures it)
    nbytes = 2000 + 2 * len(expression) + 350 * compiled.ast.max_id
    return _Selector(program, nbytes, reads.reads if shared else None)
