"""Tenant device policies offline (`draguard validate --policy FILE` with `spec.tenants[]`): the checks of
the admission webhook (`webhook.simulate.tenants`) on the input's claims, templates, Pods and workloads'
Pod templates, as findings at their field paths.

The input stands for the cluster: its Namespaces give the labels the entries select on (a namespace the
input does not define is covered only by entries whose selectors read no label but
`kubernetes.io/metadata.name`), its claims and templates are what Pods refer to, its DeviceClasses serve
extended resources, and its devices (slices, with its Nodes) are what `allocationMode: All` would take.
With `--cluster DIR` the cluster's objects count too; findings are reported on the input's objects only.

Severity by the entry's mode: Enforce error, Warn warning, Audit info; a count draguard cannot tell is a
warning (info in Audit); a required selector the mutating webhook would add on create (mode Enforce,
enforcement Mutate) is an info saying so, an error only when adding it would make more than 32 selectors. A policy's `rules:` can turn a tenant rule off; its mode, not `rules:`, decides the
severity. `draguard.io/ignore` silences them on one object like any rule.
"""

from __future__ import annotations

from typing import Any

from webhook.config.policy import Policy
from webhook.config.profile import Profile
from webhook.engine.allcount import all_mode_count
from webhook.model.budget import Deadline, OutOfBudget
from webhook.model.plain import as_dict
from webhook.model.violation import Violation
from webhook.model.workloads import WORKLOAD_KINDS
from webhook.simulate.leftout import rejection
from webhook.simulate.podclaims import namespace_or_default
from webhook.simulate.tenants import CLAIM_KINDS, TenantWorld, check_object, covering
from webhook.state import ClusterState
from webhook.validate import Checked, Loaded

SUBJECT_KINDS = (*CLAIM_KINDS, "Pod", *WORKLOAD_KINDS)
STATE_KINDS = ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "Node")


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    labels = as_dict(as_dict(obj.get("metadata")).get("labels"))
    return {k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)}


def _name(obj: dict[str, Any]) -> str:
    name = as_dict(obj.get("metadata")).get("name")
    return name if isinstance(name, str) else ""


class _InputWorld(TenantWorld):
    """The input as the checks read it; the cluster state for `allocationMode: All` is built on first use."""

    def __init__(
        self, state_objects: list[dict[str, Any]], profile: Profile, deadline: Deadline | None, **kw: Any
    ):
        super().__init__(**kw)
        self._objects = state_objects
        self._profile = profile
        self._deadline = deadline
        self._state: ClusterState | None | bool = False
        self.all_count = self._all

    def _all(self, request: dict[str, Any]) -> int | None:
        if self._state is False:
            try:
                self._state = ClusterState.from_objects(self._objects, self._profile, self._deadline)
            except OutOfBudget:
                self._state = None
        if not isinstance(self._state, ClusterState):
            return None
        return all_mode_count(self._state, request, deadline=self._deadline)


def add_tenant_findings(
    checked: Checked, policy: Policy, profile: Profile, deadline: Deadline | None = None
) -> None:
    """Check the input's objects kept in `checked` (every file's: `keep="all"`) against `policy.tenants`
    and add the findings to their results."""
    if not policy.tenants:
        return
    items: list[Loaded] = [i for fr in checked.results for i in fr.kept if i is not None]
    namespaces: dict[str, dict[str, str]] = {}
    claims: dict[tuple[str, str], dict[str, Any]] = {}
    templates: dict[tuple[str, str], dict[str, Any]] = {}
    classes: list[dict[str, Any]] = []
    state: list[dict[str, Any]] = []
    subjects: list[Loaded] = []
    for item in items:
        obj = item.obj
        if item.kind == "Namespace":
            namespaces.setdefault(_name(obj), _labels(obj))
            continue
        if not item.decoded:
            continue
        valid = not rejection(item.result)
        if item.kind == "ResourceClaim":
            claims.setdefault((namespace_or_default(obj), _name(obj)), obj)
        elif item.kind == "ResourceClaimTemplate":
            templates.setdefault((namespace_or_default(obj), _name(obj)), obj)
        elif item.kind in STATE_KINDS and valid:
            state.append(obj)
            if item.kind == "DeviceClass":
                classes.append(obj)
        if item.kind in SUBJECT_KINDS and item.result is not None and item.source not in checked.cluster:
            subjects.append(item)
    world = _InputWorld(state, profile, deadline, claims=claims, templates=templates, classes=classes)
    for item in subjects:
        if deadline is not None and deadline.expired():
            return
        ns = namespace_or_default(item.obj)
        tenants = covering(policy.tenants, ns, namespaces.get(ns))
        if not tenants:
            continue
        assert item.result is not None
        for f in check_object(item.obj, ns, tenants, world, mutated=True):
            if policy.enabled(f.rule):
                item.result.violations.append(Violation(f.rule, f.severity, f.field, f.text()))
