"""`validate`'s open world: which of the input's claims and Pods its feasibility checks decide.

A repository holds some of a cluster, rarely all of it: the DeviceClasses may be installed by a driver's
Helm chart elsewhere, the ResourceSlices of one driver may be an example while the others' are not there
at all. Without `--cluster` (or `--feasibility`, which takes the input as the whole cluster), a claim is
decided only when every DeviceClass it names is defined in the input *and* matches at least one device
of the input (on this cluster, with nothing allocated and taints ignored: a class that matches nothing
here describes devices the input does not hold; a class the input also defines with other content, or
invalid, is not known either; nor is a class whose devices come from a driver with an invalid or
incomplete pool in the input: slices of several examples or dumps that share a pool's name do not make
one cluster, and upstream fails `allocationMode: All` and counts on such pools). A Pod or workload is decided only when every claim and
template it names is in the input and decided, and every extended resource it requests that a class of
the input serves is served by such a class; a claim or template left out for its own errors is not in
the input. The rest is counted, never reported as infeasible: a partial repository must not turn red for
what it does not hold."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webhook.engine import Budget, allocate
from webhook.model.budget import Deadline
from webhook.model.plain import as_dict, as_list
from webhook.model.workloads import get_path, template_keys
from webhook.simulate import extended as ext
from webhook.simulate.load import Inputs, Loaded
from webhook.simulate.podclaims import namespace_or_default
from webhook.simulate.served import class_names, serves
from webhook.state import ClusterState

PROBE_BUDGET = Budget(steps=20_000, seconds=0.5)  # one device of one class: a handful of steps


def _name(obj: dict[str, Any]) -> str:
    return str(as_dict(obj.get("metadata")).get("name") or "")


def _probe(name: str) -> dict[str, Any]:
    """A claim for one device of class `name`."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "draguard-class-probe", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "probe",
                        "exactly": {"deviceClassName": name, "allocationMode": "ExactCount", "count": 1},
                    }
                ]
            }
        },
    }


@dataclass
class OpenWorld:
    """A `simulate` scope (see the module docstring); `skipped` are the claims and Pods (and workloads)
    it left undecided, in input order."""

    budget: Budget = PROBE_BUDGET
    skipped: list[Loaded] = field(default_factory=list)
    _served: dict[str, bool] = field(default_factory=dict)

    def __call__(self, data: Inputs, state: ClusterState, deadline: Deadline) -> None:
        # an object also defined with other content is not known: which one the cluster has is not
        conflicts = data.conflicts
        defined = {as_dict(c.get("metadata")).get("name") for c in data.classes}
        defined = {n for n in defined if ("DeviceClass", "", n) not in conflicts}
        # extended resources a class left out (invalid, or a conflicting copy) would serve
        unknown_erns = {ern for lo in data.left_out if lo.kind == "DeviceClass" for ern in serves(lo)}

        broken: set[str] | None = None  # drivers with an invalid or incomplete pool in the input

        def served(name: str) -> bool:
            nonlocal broken
            if name not in defined:
                return False
            if name not in self._served:
                outcome = allocate(
                    state,
                    [_probe(name)],
                    budget=self.budget,
                    deadline=deadline,
                    ignore_allocations=True,
                    ignore_taints=True,
                )
                drivers = {r.driver for c in outcome.claims for r in c.results}
                if broken is None:
                    broken = _broken_drivers(state)
                self._served[name] = outcome.feasible is True and not (drivers & broken)
            return self._served[name]

        def decided(claim: dict[str, Any]) -> bool:
            return all(served(n) for n in class_names([claim]))

        mapping = ext.class_mapping(data.classes)
        pending = [
            item
            for item in data.pending
            if decided(item.obj)
            and ("ResourceClaim", namespace_or_default(item.obj), _name(item.obj)) not in conflicts
        ]
        work = [
            item
            for item in data.work
            if self._pod_decided(item, data, mapping, decided, served, unknown_erns)
        ]
        kept = {id(i) for i in pending} | {id(i) for i in work}
        self.skipped = sorted(
            (i for i in data.pending + data.work if id(i) not in kept), key=lambda i: (i.source, i.line)
        )
        data.pending, data.work = pending, work

    @staticmethod
    def _pod_decided(
        item: Loaded,
        data: Inputs,
        mapping: dict[str, str],
        decided: Callable[[dict[str, Any]], bool],
        served: Callable[[str], bool],
        unknown_erns: set[str],
    ) -> bool:
        """Whether every claim, template and DRA extended resource of the Pod (or workload's Pod
        template) is in the input and decided. A claim or template left out of the simulation for its
        own errors is not: its errors are reported, the Pod's answer would only repeat them."""
        keys = template_keys(item.obj.get("apiVersion"), item.kind) if item.kind != "Pod" else ()
        pod = get_path(item.obj, keys) if keys else item.obj
        if not isinstance(pod, dict):
            return False
        ns = namespace_or_default(item.obj)
        for entry in as_list(as_dict(pod.get("spec")).get("resourceClaims")):
            entry = as_dict(entry)
            claim_name, template_name = entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName")
            if isinstance(claim_name, str):
                claim = data.claims.get((ns, claim_name))
                conflict = ("ResourceClaim", ns, claim_name) in data.conflicts
                if claim is None or conflict or not decided(claim.obj):
                    return False
            elif isinstance(template_name, str):
                template = data.templates.get((ns, template_name))
                if template is None or not decided(
                    {"spec": as_dict(as_dict(template.obj.get("spec")).get("spec"))}
                ):
                    return False
        for resource in ext.requested_resources(pod):
            name = mapping.get(resource)
            if (name is not None and not served(name)) or (name is None and resource in unknown_erns):
                return False
        return True


def _broken_drivers(state: ClusterState) -> set[str]:
    """The drivers of the input's pools that are invalid or incomplete on some node."""
    out: set[str] = set()
    for node in state.candidate_nodes():
        out.update(pool.id[0] for pool in state.pools_for(node) if not pool.usable)
    return out


def skipped_message(skipped: list[Loaded]) -> str:
    """The one info line for what the open world left undecided."""
    claims = sum(1 for i in skipped if i.kind == "ResourceClaim")
    pods = len(skipped) - claims
    parts = []
    if claims:
        parts.append(f"{claims} claim{'s' if claims != 1 else ''}")
    if pods:
        parts.append(f"{pods} Pod{'s' if pods != 1 else ''} or workload{'s' if pods != 1 else ''}")
    return (
        f"{' and '.join(parts)} not checked for feasibility: their DeviceClass or devices (or the claims "
        "they use) are not in the input; pass --cluster DIR with the cluster's DeviceClasses and "
        "ResourceSlices (e.g. `kubectl get deviceclasses,resourceslices,resourceclaims,nodes -o yaml`) to "
        "check them, or --feasibility to take the input as the whole cluster"
    )
