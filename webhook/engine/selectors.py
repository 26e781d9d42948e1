"""Selector results per slice (class selectors AND request selectors), cached in the ClusterView.

Results are computed for a whole slice at once and kept until the slice changes. A CEL runtime error is
recorded on its device and raised only when the search reaches that device, which is when upstream
would have evaluated it (errors abort the allocation; a device is never silently skipped).

Selector work counts against the allocate() call's budget (`Meter`): every evaluation the evaluator
actually runs (not a cache hit) charges `evaluation_steps()` steps and reads the clock, and compiling a
new expression charges `compile_steps()`. The cost hook is the evaluator's optional `last_cost`
attribute: the CEL cost units its most recent `matches()` call spent (0 for a cached answer). Without
it, one step per evaluation the evaluator ran (its `evaluations` counter), or per call.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from webhook.cel.runtime import CelRuntimeError
from webhook.engine.celerrors import runtime_error
from webhook.engine.requests import Alt, EngineError, Features, PreparedClaim
from webhook.model.budget import Meter
from webhook.model.records import DeviceRec, SliceRec
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool, device_on_node
from webhook.state.view import ClusterView


class Matcher(Protocol):
    """What the engine calls of a selector evaluator: the shared one (webhook.state.shared) or, under its
    lock, the one inside it (webhook.cel.runtime.SelectorEvaluator)."""

    def matches(self, expression: str, device_key: Hashable, driver: str, device: dict[str, Any]) -> bool: ...


@dataclass(frozen=True, slots=True)
class SelectorError:
    in_class: bool
    index: int
    message: str  # the evaluator's detail
    phase: str = "runtime"
    expression: str = ""


@dataclass(slots=True)
class SliceMatch:
    devices: list[DeviceRec]  # selectable devices (and devices whose evaluation failed), in order
    errors: dict[int, SelectorError]  # device index -> error


@dataclass(slots=True)
class Candidate:
    dev: DeviceRec
    pool: Pool
    error: SelectorError | None = None

    def raise_error(self, pc: PreparedClaim, alt: Alt) -> None:
        e = self.error
        if e is None:
            return
        who = f"class {alt.class_name}" if e.in_class else f"claim {pc.label}"
        raise EngineError(
            runtime_error(who, e.index, "/".join(self.dev.id), e.message, e.expression, e.phase),
            claim=None if e.in_class else pc.label,
        )


COST_UNITS_PER_STEP = 10  # CEL cost units charged as one step (a placement attempt costs about as much)
COMPILE_BYTES_PER_STEP = 16  # expression bytes compiled per step


def evaluation_steps(cost: int | None) -> int:
    """Steps for one selector evaluation the evaluator ran, given its CEL cost when known."""
    if not cost or cost <= COST_UNITS_PER_STEP:
        return 1
    return -(-cost // COST_UNITS_PER_STEP)


def compile_steps(expression: str) -> int:
    return 1 + len(expression) // COMPILE_BYTES_PER_STEP


class _Charger:
    """Charges the meter for the evaluations one evaluator runs (see the module docstring)."""

    __slots__ = ("ev", "meter", "runs", "has_cost")

    def __init__(self, ev: Any, meter: Meter) -> None:  # a Matcher, maybe with last_cost or evaluations
        self.ev = ev
        self.meter = meter
        self.runs: int | None = getattr(ev, "evaluations", None)
        self.has_cost = hasattr(ev, "last_cost")

    def after_call(self) -> None:
        ev = self.ev
        if self.has_cost:
            cost = ev.last_cost
            if cost:
                self.meter.charge(evaluation_steps(cost))
            else:
                self.meter.tick()
            return
        if self.runs is None:
            self.meter.charge(1)
            return
        runs = ev.evaluations
        if runs != self.runs:
            self.runs = runs
            self.meter.charge(1)
        else:
            self.meter.tick()


def precompile(state: ClusterView, expressions: Iterable[str], meter: Meter) -> None:
    """Compile expressions the evaluator has not seen yet, charging the meter. A compile error is not
    raised here: it is reported when a device is evaluated, as upstream does."""
    ev = state.evaluator
    check = getattr(ev, "check", None)
    if check is None:
        return
    known = state.compiled
    for expr in expressions:
        if known.get(expr) is not None:
            continue
        try:
            check(expr)
        except CelRuntimeError:
            pass
        known.put(expr, True, len(expr) + 50)
        meter.charge(compile_steps(expr))


def _eval(
    ev: Matcher, exprs: tuple[str, ...], d: DeviceRec, driver: str, in_class: bool, charger: _Charger
) -> bool | SelectorError:
    for i, expr in enumerate(exprs):
        try:
            ok = ev.matches(expr, d.key, driver, d.raw)
        except CelRuntimeError as e:
            charger.after_call()
            return SelectorError(in_class, i, e.detail, e.phase, expr)
        charger.after_call()
        if not ok:
            return False
    return True


def slice_match(
    state: ClusterView, signature: tuple[tuple[str, ...], tuple[str, ...]], s: SliceRec, meter: Meter
) -> SliceMatch:
    key: tuple[Hashable, int] = (signature, s.serial)
    hit = state.match_cache.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    class_sels, req_sels = signature
    precompile(state, class_sels, meter)
    precompile(state, req_sels, meter)
    ev = state.evaluator
    lock = getattr(ev, "lock", None)
    if lock is None:
        m = _match(ev, class_sels, req_sels, s, meter)
    else:  # an evaluator shared by threads (webhook.state.shared): one slice's evaluations at a time
        with lock:
            m = _match(ev.inner, class_sels, req_sels, s, meter)
    size = 120 + 8 * len(m.devices) + sum(len(e) + 60 for sels in signature for e in sels)
    state.remember_match(key, m, size + 200 * len(m.errors))
    return m


def _match(
    ev: Matcher, class_sels: tuple[str, ...], req_sels: tuple[str, ...], s: SliceRec, meter: Meter
) -> SliceMatch:
    charger = _Charger(ev, meter)
    devices = []
    errors = {}
    for d in s.devices:
        r = _eval(ev, class_sels, d, s.driver, True, charger) if class_sels else True
        if r is True and req_sels:
            r = _eval(ev, req_sels, d, s.driver, False, charger)
        if r is False:
            continue
        if isinstance(r, SelectorError):
            errors[d.index] = r
        devices.append(d)
    return SliceMatch(devices, errors)


def selectable(
    state: ClusterView,
    alt: Alt,
    pools: Sequence[Pool],
    node: NodeInfo,
    f: Features,
    meter: Meter,
    signature: Any = None,
) -> Iterator[tuple[Pool, DeviceRec, SelectorError | None]]:
    """Selectable devices of usable pools for the node, in pool/slice/device order."""
    sig = signature if signature is not None else alt.signature
    tick = meter.tick
    for p in pools:
        if not p.usable:
            continue
        for s in p.slices:
            tick()
            m = slice_match(state, sig, s, meter)
            if not m.devices:
                continue
            per_device = s.per_device
            errors = m.errors
            for d in m.devices:
                if not f.binding and d.binding_conditions:
                    continue
                if per_device and not device_on_node(d, node):
                    continue
                yield p, d, (errors.get(d.index) if errors else None)


def candidates(
    state: ClusterView, alt: Alt, pools: Sequence[Pool], node: NodeInfo, f: Features, meter: Meter
) -> list[Candidate]:
    return [Candidate(d, p, e) for p, d, e in selectable(state, alt, pools, node, f, meter)]
