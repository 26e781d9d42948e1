"""Admission-time feasibility of a ResourceClaim or Pod being created, against the cluster snapshot.

The claim (alone, on any node) or the Pod (its claims by name, claims generated from its templates as
the resource claim controller would, extended resources served by DeviceClasses, pinned to the nodes
of its claims that are already allocated) is scheduled as `draguard simulate` does, without writing
anything. The verdict (webhook.simulate.verdict, shared with `simulate`'s claims that no Pod uses):

- `feasible`: it fits now;
- `busy`: it does not fit now, but does on the same cluster with nothing allocated and device taints
  ignored (or it waits for something that may appear: its DeviceClass, a pool being republished);
- `unsatisfiable`: it does not fit even then: the Pod would stay Pending forever on this cluster
  (unless nodes or devices are added: with autoscaled DRA nodes, use `warn`, not `enforce`);
- `undecided`: the budget or the request deadline ran out;
- `skipped`: nothing to decide (no claims, a claim or template that does not exist yet, allocated).
"""

from __future__ import annotations

import copy
import time
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from webhook.admission.config import AdmissionConfig
from webhook.admission.wire import ClusterSnapshot
from webhook.engine import Budget
from webhook.model.budget import Deadline
from webhook.model.errors import DraguardError
from webhook.simulate import extended as ext
from webhook.simulate import feasibility_violations
from webhook.simulate.load import Loaded
from webhook.simulate.podclaims import key_of, resolve_pod_claims
from webhook.simulate.run import PodRun, PodSimulation, World
from webhook.simulate.verdict import decide

SOURCE = "<admission request>"


class FeasibilityCrash(DraguardError):
    """draguard failed while deciding (a bug or a resource limit): handled by the failure mode."""


@dataclass(frozen=True)
class Feasibility:
    verdict: str  # feasible | busy | unsatisfiable | undecided | skipped
    message: str = ""  # one line for the warning or denial ("" when feasible or skipped silently)
    field: str = ""  # where in the object the reason points
    seconds: float = 0.0


def _world(
    snapshot: ClusterSnapshot, templates: Mapping[tuple[str, str], dict[str, Any]] | None = None
) -> World:
    """The snapshot's objects (`Snapshot.objects(kind)`, read-only) as a scheduling run reads them, plus
    `templates` the snapshot does not hold yet. A Pod or claim being created owns no claims yet, so
    there is nothing to find by owner (no index of generated or extended claims)."""
    stored = snapshot.objects("ResourceClaimTemplate")
    return World(
        claims=snapshot.objects("ResourceClaim"),
        # a ChainMap writes only to its first map: the snapshot's read-only one is never changed
        templates=ChainMap(dict(templates), stored) if templates else stored,  # type: ignore[arg-type]
        nodes=snapshot.objects("Node").values(),
        classes=snapshot.objects("DeviceClass").values(),
        generated={},
        owned=lambda namespace: (),
    )


def _with_namespace(obj: dict[str, Any], namespace: str | None) -> dict[str, Any]:
    meta = obj.get("metadata")
    if namespace and isinstance(meta, dict) and not meta.get("namespace"):
        obj = copy.copy(obj)
        obj["metadata"] = {**meta, "namespace": namespace}
    return obj


def _run(
    world: World,
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline,
    item: Loaded,
    empty: bool,
) -> PodSimulation:
    budget: Budget = config.feasibility_budget
    run = PodRun(world, snapshot.state, config.context(), budget, deadline, commit=False, empty_cluster=empty)
    sim = run.guarded(item) if item.kind == "Pod" else run.guarded(None)
    if sim.internal:
        raise FeasibilityCrash(sim.internal)
    return sim


def _field(sim: PodSimulation, kind: str) -> str:
    for subject, violation in feasibility_violations(sim):
        if subject.kind == kind and violation.field:
            return violation.field
    return "spec.devices.requests" if kind == "ResourceClaim" else "spec.resourceClaims"


def _decide(
    world: World,
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline,
    item: Loaded,
    what: str,
) -> Feasibility:
    start = time.monotonic()
    now = _run(world, snapshot, config, deadline, item, empty=False)
    d = decide(now, lambda: _run(world, snapshot, config, deadline, item, empty=True), what, "; admitted")
    seconds = time.monotonic() - start
    if d.verdict == "feasible":
        return Feasibility("feasible", seconds=seconds)
    return Feasibility(d.verdict, d.message, _field(d.sim, item.kind), seconds)


def check_claim(
    claim: dict[str, Any],
    namespace: str | None,
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline,
) -> Feasibility:
    """A ResourceClaim being created (not allocated), alone, on any node."""
    claim = _with_namespace(claim, namespace)
    if isinstance(claim.get("status"), dict) and claim["status"].get("allocation"):
        return Feasibility("skipped")
    ns, name = key_of(claim)
    world = _world(snapshot)
    world.pending = [Loaded(SOURCE, 1, "ResourceClaim", claim)]
    return _decide(world, snapshot, config, deadline, world.pending[0], f'ResourceClaim "{ns}/{name}"')


def check_pod(
    pod: dict[str, Any],
    namespace: str | None,
    snapshot: ClusterSnapshot,
    config: AdmissionConfig,
    deadline: Deadline,
    templates: Mapping[tuple[str, str], dict[str, Any]] | None = None,
) -> Feasibility:
    """A Pod being created: its claims together, as the scheduler would place it (`templates`: ones
    the snapshot does not hold yet, by (namespace, name))."""
    pod = _with_namespace(pod, namespace)
    world = _world(snapshot, templates)
    has_claims = bool((pod.get("spec") or {}).get("resourceClaims"))
    extended = config.profile.enabled("DRAExtendedResource") and ext.needs_special_claim(
        pod, ext.class_mapping(world.classes)
    )
    if not has_claims and not extended:
        return Feasibility("skipped")
    problems = [pc for pc in resolve_pod_claims(pod, world.claims, world.templates, {}, {}) if pc.problem]
    if problems:  # a claim or template that does not exist (yet): pod.unknown-claim says so
        return Feasibility("skipped")
    ns, name = key_of(pod)
    return _decide(world, snapshot, config, deadline, Loaded(SOURCE, 1, "Pod", pod), f'Pod "{ns}/{name}"')
