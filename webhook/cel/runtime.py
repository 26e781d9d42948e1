"""Evaluate DRA CEL selectors against API devices: our own evaluator (webhook.cel.program), bounded in time
(Kubernetes' runtime cost limit) and memory, with result sharing and caches bounded by bytes.

    ev = SelectorEvaluator(list_attributes=..., consumable_capacity=...)
    ev.matches(expression, device_key, driver, device) -> bool      # raises CelRuntimeError
    ev.cost_used                                                    # actual CEL cost of all evaluations run

Errors (`CelRuntimeError`, `phase` "compile" or "runtime"): a compile error of the stored expression,
"no such key: x", a non-bool result, "no such overload", the runtime cost limit ("operation cancelled:
actual cost limit exceeded"), the size limit, attribute values upstream refuses. The allocator treats
every one as an error of the claim, never as "no match".

Result sharing: results are cached per (expression, device_key), and per (expression, projection) where
the projection is the device's values of exactly what the selector reads with literal keys (see
`_analyse`), so identical devices share one evaluation. Every cache is a ByteLRU; an evaluation keeps
nothing but its boolean result (or error text).

Budget: `cost_used` grows by the actual cost (cel-go's runtime cost) of every evaluation this evaluator
runs (cached results cost nothing); the allocator charges it against its step budget.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from webhook.cel import ast as A
from webhook.cel.activation import DeviceInput
from webhook.cel.program import COST_LIMIT, PlanError, Program, plan
from webhook.cel.values import CelError, EvaluationStopped, type_name
from webhook.model.cache import ByteLRU, approx_size

# Upstream's allocator (cel.EnhanceRuntimeError) appends this to a "no such key" error.
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has()"
    " for optional fields"
)
PROJECTION_CACHE_BYTES = 16 << 20
DEVICE_CACHE_BYTES = 32 << 20
SELECTOR_CACHE_BYTES = 16 << 20


class CelRuntimeError(Exception):
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


# A read: ("driver",) | ("allowMultipleAllocations",) | ("attributes"|"capacity", domain, id)
#       | ("attributes"|"capacity", domain)  (the whole domain map)
Read = tuple[str, ...]


_ENTRY_BYTES = 400  # a DeviceInput and its dict, beyond the API device it points to


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
    reads: tuple[Read, ...] | None  # None: not projectable (reads a whole map or `device` itself)


def _runtime_detail(e: CelError) -> str:
    msg = e.message
    if msg.startswith("no such key: "):
        return msg + NO_SUCH_KEY_HINT
    return msg


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
            if self._devices.get(key) is not None:
                self._devices.put(key, _Entry(None), _ENTRY_BYTES)

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
        self._selectors.put(expression, sel, 64 * len(expression) + 512)
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
        entry.nbytes += 120 + len(expression) // 4  # expressions are shared strings: count a pointer + slot
        self._devices.put(device_key, entry, entry.nbytes + approx_size(device_key))
        return result

    def _run(self, sel: _Selector, entry: DeviceInput) -> bool | _Failure:
        self.evaluations += 1
        try:
            value, cost = sel.program.evaluate(device=entry, limit=self.max_cost)
        except CelError as e:
            self.cost_used += getattr(e, "cost", 0)
            return _Failure(_runtime_detail(e))
        except EvaluationStopped as e:
            self.cost_used += getattr(e, "cost", 0)
            return _Failure(e.message)
        self.cost_used += cost
        if value is True or value is False:
            return value
        return _Failure(f"CEL result of type {type_name(value)} could not be converted to bool")


# ---- compiling stored expressions -----------------------------------------------------------------------


def compile_stored(expression: str) -> _Selector | _Failure:
    """Compile as the scheduler compiles stored expressions (every field and function of the version,
    whatever the gates say; no estimated-cost limit) and plan the program."""
    root = None
    try:
        from webhook.cel import compiler
    except ImportError:  # the front end is being replaced: parse only
        compiler = None  # type: ignore[assignment]
    if compiler is not None and hasattr(compiler, "set_planner"):
        compiled = compiler.compile_selector(
            expression, list_attributes=True, consumable_capacity=True, check_cost=False
        )
        if isinstance(compiled, compiler.CompileError):
            return _Failure(compiled.message, "compile")
        root = compiled.ast.expr
    if root is None:
        from webhook.cel.errors import render
        from webhook.cel.parser import parse

        parsed = parse(expression)
        if parsed.expr is None:
            return _Failure("compilation failed: " + render(parsed.issues, expression), "compile")
        root = parsed.expr.expr
    try:
        program = plan(root, device="device")
    except PlanError as e:
        return _Failure(f"program instantiation failed: {e}", "compile")
    return _Selector(program, _analyse(root))


# ---- what a selector reads -------------------------------------------------------------------------------

_INDEX = ("_[_]", "_[?_]", "_?._")
_DEVICE_MAPS = ("attributes", "capacity")


def _literal_key(n: A.Expr) -> tuple[A.Expr, str] | None:
    """(operand, key) for `t.key`, `t[lit]`, `t[?lit]`, `t.?key` and `has(t.key)`."""
    if isinstance(n, A.Select):
        return n.operand, n.field
    if isinstance(n, A.Call) and n.function in _INDEX and len(n.args) == 2:
        key = n.args[1]
        if isinstance(key, A.Const) and isinstance(key.value, str):
            return n.args[0], key.value
    return None


def _analyse(root: A.Expr) -> tuple[Read, ...] | None:
    """The reads of one expression, or None when it looks at `device`, `device.attributes` or
    `device.capacity` as a whole (iteration, `in`, `size`, computed keys): no projection then."""
    reads: set[Read] = set()
    stack: list[tuple[A.Expr, frozenset[str]]] = [(root, frozenset())]
    while stack:
        n, bound = stack.pop()
        if isinstance(n, A.Ident):
            if n.name == "device" and "device" not in bound:
                return None
            continue
        if isinstance(n, A.Comprehension):
            inner = bound | {v for v in (n.iter_var, n.iter_var2, n.accu_var) if v}
            stack += [(n.iter_range, bound), (n.accu_init, bound)]
            stack += [(n.loop_condition, inner), (n.loop_step, inner), (n.result, bound | {n.accu_var})]
            continue
        read = _device_read(n, bound)
        if read is not None:
            reads.add(read)
            if isinstance(n, A.Call):  # a computed key still needs looking at
                stack += [(a, bound) for a in n.args[1:]]
            continue
        stack += [(c, bound) for c in A.children(n)]
    return tuple(sorted(reads))


def _is_device(n: A.Expr, bound: frozenset[str]) -> bool:
    return isinstance(n, A.Ident) and n.name == "device" and "device" not in bound


def _device_read(n: A.Expr, bound: frozenset[str]) -> Read | None:
    """The read `n` is, when it is `device.<field>`, `device.<map>[lit]` or `device.<map>[lit][lit]`."""
    hit = _literal_key(n)
    if hit is None:
        return None
    operand, key = hit
    if isinstance(n, A.Select) and n.test_only:
        inner = _literal_key(operand)
        if inner is not None and _is_device_map(inner[0], bound):
            return (_map_name(inner[0]), inner[1], key)
        return None
    if _is_device(operand, bound) and isinstance(n, A.Select):
        return None if key in _DEVICE_MAPS else (key,)
    if _is_device_map(operand, bound):
        return (_map_name(operand), key)
    inner = _literal_key(operand)
    if (
        inner is not None
        and _is_device_map(inner[0], bound)
        and not (isinstance(operand, A.Select) and operand.test_only)
    ):
        return (_map_name(inner[0]), inner[1], key)
    return None


def _is_device_map(n: A.Expr, bound: frozenset[str]) -> bool:
    return (
        isinstance(n, A.Select)
        and not n.test_only
        and n.field in _DEVICE_MAPS
        and _is_device(n.operand, bound)
    )


def _map_name(n: A.Expr) -> str:
    assert isinstance(n, A.Select)
    return n.field
