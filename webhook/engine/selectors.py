"""Selector results per slice (class selectors AND request selectors), cached in the ClusterState.

Results are computed for a whole slice at once and kept until the slice changes. A CEL runtime error is
recorded on its device and raised only when the search reaches that device, which is when upstream
would have evaluated it (errors abort the allocation; a device is never silently skipped).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any

from webhook.cel.runtime import CelRuntimeError
from webhook.engine.requests import Alt, EngineError, Features, PreparedClaim
from webhook.state.cluster import ClusterState
from webhook.state.nodes import NodeInfo
from webhook.state.pools import Pool, device_on_node
from webhook.state.records import DeviceRec, SliceRec


@dataclass(frozen=True, slots=True)
class SelectorError:
    in_class: bool
    index: int
    message: str
    phase: str = "runtime"


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
            f"{who}: selector #{e.index} on device {'/'.join(self.dev.id)}: CEL {e.phase} error: {e.message}"
        )


def _eval(ev: Any, exprs: tuple[str, ...], d: DeviceRec, driver: str, in_class: bool) -> bool | SelectorError:
    for i, expr in enumerate(exprs):
        try:
            if not ev.matches(expr, d.key, driver, d.raw):
                return False
        except CelRuntimeError as e:
            return SelectorError(in_class, i, f"{e.detail} (expression: {expr})", e.phase)
    return True


def slice_match(
    state: ClusterState, signature: tuple[tuple[str, ...], tuple[str, ...]], s: SliceRec
) -> SliceMatch:
    key: tuple[Hashable, int] = (signature, s.serial)
    hit = state.match_cache.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    class_sels, req_sels = signature
    ev = state.evaluator
    devices = []
    errors = {}
    for d in s.devices:
        r = _eval(ev, class_sels, d, s.driver, True)
        if r is True:
            r = _eval(ev, req_sels, d, s.driver, False)
        if r is False:
            continue
        if isinstance(r, SelectorError):
            errors[d.index] = r
        devices.append(d)
    m = SliceMatch(devices, errors)
    state.remember_match(key, m)
    return m


def selectable(
    state: ClusterState, alt: Alt, pools: list[Pool], node: NodeInfo, f: Features, signature: Any = None
) -> Iterator[tuple[Pool, DeviceRec, SelectorError | None]]:
    """Selectable devices of usable pools for the node, in pool/slice/device order."""
    sig = signature if signature is not None else alt.signature
    for p in pools:
        if not p.usable:
            continue
        for s in p.slices:
            m = slice_match(state, sig, s)
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
    state: ClusterState, alt: Alt, pools: list[Pool], node: NodeInfo, f: Features
) -> list[Candidate]:
    return [Candidate(d, p, e) for p, d, e in selectable(state, alt, pools, node, f)]
