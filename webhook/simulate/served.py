"""Why an infeasible Pod (or group of claims) might have fitted: objects left out of the simulation that
would have served it — a DeviceClass its claims or extended resources name, ResourceSlices whose devices
an allocation with them included uses. Each such note names the object, its file:line and the rule that
kept it out."""

from __future__ import annotations

import re
from typing import Any

from webhook.config.context import Context
from webhook.engine import Budget, allocate
from webhook.model.budget import Deadline, OutOfBudget
from webhook.model.plain import as_dict, as_list
from webhook.model.text import listing
from webhook.simulate import extended as ext
from webhook.simulate.leftout import LeftOut
from webhook.simulate.load import Inputs
from webhook.state import ClusterState

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
DRIVER_LITERAL = re.compile(r"device\.driver\s*==\s*[\"']|[\"']\s*==\s*device\.driver")


def class_names(claims: list[dict[str, Any]]) -> set[str]:
    """The DeviceClass names the claims' requests and subrequests use."""
    out: set[str] = set()
    for claim in claims:
        for r in as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")):
            r = as_dict(r)
            for sub in [as_dict(r.get("exactly")), *map(as_dict, as_list(r.get("firstAvailable")))]:
                name = sub.get("deviceClassName")
                if isinstance(name, str) and name:
                    out.add(name)
    return out


def serves(lo: LeftOut) -> set[str]:
    """The extended resource names a left-out DeviceClass would serve (its implicit one, and its
    `extendedResourceName` when it could be decoded)."""
    ern = as_dict(as_dict(lo.obj).get("spec")).get("extendedResourceName") if lo.obj else None
    return {IMPLICIT_PREFIX + lo.name} | ({ern} if isinstance(ern, str) else set())


def _cel(selector: Any) -> str:
    expr = as_dict(as_dict(selector).get("cel")).get("expression")
    return expr if isinstance(expr, str) else ""


def _may_match(raw: dict[str, Any] | None, selectors: list[str]) -> bool:
    """Whether a slice that could not be decoded may hold devices for these selectors: its driver is
    named in one of them, or none of them compares `device.driver` with a name (nothing rules it out)."""
    driver = as_dict(as_dict(raw).get("spec")).get("driver")
    if not isinstance(driver, str) or not driver:
        return True
    if any(f'"{driver}"' in t or f"'{driver}'" in t for t in selectors):
        return True
    return not any(DRIVER_LITERAL.search(t) for t in selectors)


def _slice_pool(obj: dict[str, Any]) -> tuple[str, str]:
    spec = as_dict(obj.get("spec"))
    return str(spec.get("driver") or ""), str(as_dict(spec.get("pool")).get("name") or "")


class LeftOutNotes:
    """Notes for infeasible answers of one run about the objects it left out (see the module docstring).
    The states it tries alternatives on are built once, when first needed."""

    def __init__(self, data: Inputs, ctx: Context, budget: Budget, deadline: Deadline) -> None:
        self.data, self.ctx, self.budget, self.deadline = data, ctx, budget, deadline
        self.classes = {lo.name: lo for lo in data.left_out if lo.kind == "DeviceClass"}
        self.slices = [lo for lo in data.left_out if lo.kind == "ResourceSlice"]
        self._trial: ClusterState | None = None
        self._applied = 0

    def unserved(
        self, pod: dict[str, Any], mapping: dict[str, str], nodes: list[dict[str, Any]]
    ) -> str | None:
        """Why the Pod cannot be scheduled when it requests an extended resource that no DeviceClass of
        the simulation serves, only a left-out one would, and no Node's allocatable provides (device
        plugins); None otherwise."""
        if not self.classes:
            return None
        for resource in sorted(ext.requested_resources(pod) - set(mapping)):
            lo = next((c for c in self.classes.values() if resource in serves(c)), None)
            if lo is None:
                continue
            if nodes and not all(
                resource in ext.node_variant({resource}, {resource: lo.name}, n).dra for n in nodes
            ):
                continue  # some node's device plugin provides it
            return (
                f"extended resource {resource}: no DeviceClass of the simulation serves it and no node's "
                f"allocatable has it; left out of the simulation, and it could have served this: {lo.label()}, "
                f"which serves its extended resource ({lo.why})"
            )
        return None

    def note(
        self,
        pod: dict[str, Any] | None,
        claims: list[dict[str, Any]],
        pins: list[dict[str, Any]],
        committed: list[dict[str, Any]],
    ) -> str:
        """`; left out of the simulation: ...` for an infeasible answer, or "" when nothing left out
        could have changed it."""
        if not self.classes and not self.slices:
            return ""
        found: list[str] = []
        for name in sorted(class_names(claims)):
            lo = self.classes.get(name)
            if lo is not None:
                found.append(f"{lo.label()}, which its claims use ({lo.why})")
        if pod is not None and self.classes:
            wanted = ext.requested_resources(pod)
            for lo in self.classes.values():
                if wanted & serves(lo):
                    found.append(f"{lo.label()}, which serves its extended resource ({lo.why})")
        if self.slices:
            found.extend(self._slices(pod, claims, pins, committed))
        if not found:
            return ""
        return "; left out of the simulation, and it could have served this: " + listing(found, "; ")

    def _slices(
        self,
        pod: dict[str, Any] | None,
        claims: list[dict[str, Any]],
        pins: list[dict[str, Any]],
        committed: list[dict[str, Any]],
    ) -> list[str]:
        decoded = [lo for lo in self.slices if lo.obj is not None]
        helped: list[LeftOut] = []
        if decoded and claims:
            trial = self._trial_state(committed)
            if trial is not None:
                outcome = allocate(
                    trial, claims, pod=pod, budget=self.budget, deadline=self.deadline, node_selectors=pins
                )
                if outcome.feasible:
                    used = {(r.driver, r.pool) for c in outcome.claims for r in c.results}
                    helped = [lo for lo in decoded if lo.obj is not None and _slice_pool(lo.obj) in used]
        if helped:
            return [f"{lo.label()}: with it the Pod fits ({lo.why})" for lo in helped]
        texts = self._selectors(claims)
        unknown = [lo for lo in self.slices if lo.obj is None and _may_match(lo.raw, texts)]
        return [
            f"{lo.label()}, whose devices are unknown: it could not be decoded ({lo.why})" for lo in unknown
        ]

    def _selectors(self, claims: list[dict[str, Any]]) -> list[str]:
        """The CEL expressions that choose devices for `claims`: their classes' and their requests'."""
        wanted = class_names(claims)
        classes = [c for c in self.data.classes if as_dict(c.get("metadata")).get("name") in wanted]
        classes += [lo.obj for lo in self.classes.values() if lo.obj is not None and lo.name in wanted]
        out = [_cel(sel) for c in classes for sel in as_list(as_dict(c.get("spec")).get("selectors"))]
        for claim in claims:
            for r in as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")):
                r = as_dict(r)
                for sub in [as_dict(r.get("exactly")), *map(as_dict, as_list(r.get("firstAvailable")))]:
                    out.extend(_cel(sel) for sel in as_list(sub.get("selectors")))
        return [t for t in out if t]

    def _trial_state(self, committed: list[dict[str, Any]]) -> ClusterState | None:
        """The run's state with the decodable left-out slices added (and this run's allocations)."""
        if self._trial is None:
            extra = [lo.obj for lo in self.slices if lo.obj is not None]
            try:
                self._trial = ClusterState.from_objects(
                    self.data.state + extra, self.ctx.profile, self.deadline
                )
            except OutOfBudget:
                return None
        for claim in committed[self._applied :]:
            self._trial.apply(claim)
        self._applied = len(committed)
        return self._trial
