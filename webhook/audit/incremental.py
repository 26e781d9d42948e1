"""The audit run again and again on a cluster that changes a little between runs (the server's background
audit): what a run judged is kept and judged again only when it may have changed.

- Each object's own validation (`webhook.simulate.load.check_object`: schema, defaults, its object rules)
  is kept by (kind, namespace, name) with the object it judged, and re-done only for objects added or
  changed since (a deleted object's is dropped). The results are merged as the one file a full load makes
  of the same objects (`merge_results`), so the cross-object (inventory) rules then run over all of them
  exactly as in a full audit: cheap beside the per-object validation.
- Each object's ratcheting (`webhook.audit.ratchet.judge`, an UPDATE sent through admission, whose
  cross-object part reads other objects) is kept with the object and its findings, and dropped when a
  change may reach it (`depends_on` / `marks`, conservative: a slice's pool and the Nodes; a claim's,
  template's or class's DeviceClasses; an object's Namespace; a DeviceTaintRule: any change).
- The cluster states the ratcheting and the pending Pods' explanations read are kept and updated with
  the objects that changed (`webhook.state.StateStore` apply/delete), not built again.
- Pending Pods are explained again on every run (something changed, or there is no run): they are
  bounded by `max_pending_pods`.

A change of the options (the policies in force above all) drops everything kept. `counts` says what the
last run re-did ("checked": objects validated, "judged": objects ratcheted, "explained": Pods)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from webhook.audit.ratchet import Judged
from webhook.audit.results import AuditReport
from webhook.audit.run import AuditOptions, ObjKey, audit
from webhook.config.profile import Profile
from webhook.model.budget import Deadline
from webhook.model.plain import as_dict
from webhook.model.violation import Violation
from webhook.simulate.leftout import CLUSTER_SCOPED
from webhook.simulate.load import check_object, merge_results, sort_loaded
from webhook.state import ClusterState
from webhook.validate import FileResult, Loaded, assemble
from webhook.validate.ignores import suppress

Mark = tuple[str, ...]  # what a change touches: ("any",), ("kind", K), ("ns", N), ("pool", driver, pool)
ANY: Mark = ("any",)


def object_key(obj: Mapping[str, Any]) -> ObjKey:
    meta = as_dict(obj.get("metadata"))
    kind = str(obj.get("kind") or "")
    ns = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or "default")
    return (kind, ns, str(meta.get("name") or ""))


def _pool(obj: Mapping[str, Any] | None) -> Mark:
    spec = as_dict(obj.get("spec")) if obj is not None else {}
    return ("pool", str(spec.get("driver") or ""), str(as_dict(spec.get("pool")).get("name") or ""))


def marks(obj: Mapping[str, Any]) -> set[Mark]:
    """What a change (add, update, delete) of `obj` touches."""
    kind, ns, name = object_key(obj)
    out: set[Mark] = {ANY, ("kind", kind)}
    if kind == "Namespace":
        out.add(("ns", name))
    elif kind == "ResourceSlice":
        out.add(_pool(obj))
    return out


def depends_on(key: ObjKey, obj: Mapping[str, Any] | None) -> frozenset[Mark]:
    """What the ratcheting of `obj` reads besides itself and its findings: admission's cross-object rules
    (`webhook.rules.crossobject`: a slice's pool, a claim's or class's classes) and the Namespace's labels."""
    kind, ns, _ = key
    out: set[Mark] = {("ns", ns)} if ns else set()
    if kind == "ResourceSlice":
        out |= {_pool(obj), ("kind", "Node")}
    elif kind in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"):
        out.add(("kind", "DeviceClass"))
    elif kind not in ("Pod",):
        out.add(ANY)  # a DeviceTaintRule, or anything else: any change
    return frozenset(out)


@dataclass
class _Checked:
    obj: dict[str, Any]  # the object as the watch gave it
    result: FileResult
    loaded: list[Loaded | None]


@dataclass
class _Judged:
    obj: dict[str, Any] | None
    found: list[Violation]
    deps: frozenset[Mark]
    judged: Judged


class _State:
    """A cluster state kept equal to a list of objects by applying what changed."""

    def __init__(self, profile: Profile) -> None:
        self.state = ClusterState(profile)
        self.held: dict[ObjKey, dict[str, Any]] = {}

    def sync(self, objs: Sequence[dict[str, Any]], deadline: Deadline) -> ClusterState:
        now = {object_key(o): o for o in objs}
        store = self.state.store
        for key in [k for k in self.held if k not in now]:
            kind, ns, name = key
            store.delete(kind, ns or None, name)
            del self.held[key]
        for key, obj in now.items():
            if self.held.get(key) is not obj:
                store.apply(obj)
                self.held[key] = obj
        store.publish(deadline)
        return self.state


class IncrementalAudit:
    """`run()` audits the objects as `webhook.audit.run.audit` would after `load_objects` (the same
    report), re-doing only what the objects changed since the previous run may have changed."""

    def __init__(self) -> None:
        self._options: AuditOptions | None = None
        self._checked: dict[ObjKey, _Checked] = {}
        self._judged: dict[ObjKey, _Judged] = {}
        self._states: dict[str, _State] = {}
        self._profile: Profile | None = None
        self.counts: Counter[str] = Counter()  # what the last run re-did

    def _reset(self, options: AuditOptions) -> None:
        self._options = options
        self._checked.clear()
        self._judged.clear()
        self._states.clear()

    def run(
        self,
        objects: Sequence[dict[str, Any]],
        options: AuditOptions,
        deadline: Deadline,
        pods: Mapping[tuple[str, str], dict[str, Any]] | None = None,
    ) -> AuditReport:
        """Audit `objects` (every object of the cluster, in a stable order: a full audit of the same list
        gives the same report); `pods`: every Pod in short (what claims are reserved for)."""
        self.counts = Counter()
        if options != self._options:
            self._reset(options)
        ctx = options.context(deadline)
        self._profile = ctx.profile
        policy = options.policy
        touched: set[Mark] = set()
        parts: list[FileResult] = []
        loaded: list[Loaded | None] = []
        now: dict[ObjKey, _Checked] = {}
        for obj in objects:
            key = object_key(obj)
            got = self._checked.get(key)
            if got is None or (got.obj is not obj and got.obj != obj):
                if got is not None:
                    touched |= marks(got.obj)
                touched |= marks(obj)
                result, items = check_object(obj, ctx, policy)
                self.counts["checked"] += 1
                got = _Checked(obj, result, items)
            if not got.result.not_checked:  # what the deadline cut is checked again next time
                now[key] = got
            parts.append(got.result)
            loaded.extend(got.loaded)
        for key, gone in self._checked.items():
            if key not in now:
                touched |= marks(gone.obj)
        self._checked = now
        self._judged = {k: j for k, j in self._judged.items() if k in now and not (j.deps & touched)}
        merged = merge_results(parts)
        copies = {
            id(a): b for a, b in zip((o for fr in parts for o in fr.objects), merged.objects, strict=True)
        }
        items = [
            None
            if item is None
            else Loaded(
                item.source,
                item.line,
                item.kind,
                item.obj,
                copies.get(id(item.result)) if item.result is not None else None,
                item.decoded,
            )
            for item in loaded
        ]
        report = assemble([merged], ctx, policy)
        suppress(report)
        data = sort_loaded(report, items, policy)
        out = audit(data, options, deadline, live=True, pods=pods, kept=self)
        self.counts["explained"] = out.explained
        return out

    # Kept (webhook.audit.run)
    def judged(
        self, key: ObjKey, obj: dict[str, Any] | None, found: list[Violation], judge: Callable[[], Judged]
    ) -> Judged:
        got = self._judged.get(key)
        if got is not None and (got.obj is obj or got.obj == obj) and got.found == found:
            return got.judged
        judged = judge()
        self.counts["judged"] += 1
        self._judged[key] = _Judged(obj, list(found), depends_on(key, obj), judged)
        return judged

    def state(self, name: str, objs: list[dict[str, Any]], deadline: Deadline) -> ClusterState:
        assert self._profile is not None
        kept = self._states.get(name)
        if kept is None:
            kept = self._states[name] = _State(self._profile)
        try:
            return kept.sync(objs, deadline)
        except BaseException:
            del self._states[name]  # half updated: built again next time
            raise
