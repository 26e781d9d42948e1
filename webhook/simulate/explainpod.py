"""`draguard explain pod NS/NAME`: why the scheduler cannot place one Pod on DRA grounds. The cluster is
read as stored (`--cluster` files, or the objects a live listing returned) and nothing else is
scheduled: the Pod is tried as it is (webhook/simulate/run.py, the engine's own explanation per request
and node), then on the same cluster with every device free and untainted (busy or unsatisfiable, as
admission decides: webhook/simulate/verdict.py). Per claim and (sub)request: unsatisfiable, busy (the
claims holding its devices and what they are reserved for: webhook/engine/blockers.py), tainted (the
taints it does not tolerate) or fitting on its own; the objects left out; and the smallest changes that
make it fit, each verified by the allocator (webhook/simulate/podchanges.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from webhook.config.context import Context
from webhook.config.driverschemas import NONE as NO_EXTRA_SCHEMAS
from webhook.config.driverschemas import with_extra
from webhook.config.profile import load_profile
from webhook.engine import Budget
from webhook.engine.blockers import blockers
from webhook.model.budget import SEARCH_RUNS, Deadline, OutOfBudget, check_seconds
from webhook.model.errors import UsageError
from webhook.model.plain import as_dict, as_list, record_json
from webhook.simulate.extended import needs_special_claim
from webhook.simulate.leftout import LeftOut
from webhook.simulate.load import Inputs, load
from webhook.simulate.podchanges import (
    Change,
    Editable,
    Hints,
    SearchReport,
    Trial,
    candidates,
    release_cost,
    reserved_for,
    search,
)
from webhook.simulate.podclaims import PodClaim, index_generated, key_of, resolve_pod_claims
from webhook.simulate.run import DEADLINE_PASSED, PodSimulation, World, origin_of
from webhook.simulate.served import LeftOutNotes
from webhook.simulate.verdict import Verdict, decide
from webhook.state import ClusterState
from webhook.validate import InputOptions, Loaded
from webhook.validate.clusterinput import ClusterInput, stored_context

Status = Literal["fits", "does-not-fit", "undecided", "not-pending", "no-dra", "left-out"]
RequestVerdict = Literal["fits-alone", "busy", "tainted", "unsatisfiable"]
EXIT_FITS, EXIT_DOES_NOT_FIT, EXIT_UNDECIDED = 0, 1, 3
EXIT_CODES: dict[Status, int] = {
    "fits": EXIT_FITS,
    "not-pending": EXIT_FITS,
    "no-dra": EXIT_FITS,
    "does-not-fit": EXIT_DOES_NOT_FIT,
    "left-out": EXIT_DOES_NOT_FIT,
    "undecided": EXIT_UNDECIDED,
}
# what keeps a device from a request and goes away when other claims release theirs
ALLOCATION_BLOCKERS = ("in use", "capacity", "counters", "groups")
RUN_SECONDS = 60.0
SCHEMA_VERSION = 1


@dataclass(frozen=True, kw_only=True)
class ExplainOptions(InputOptions):
    budget: Budget = field(default_factory=Budget)  # each allocator run
    deadline_seconds: float = RUN_SECONDS  # the whole command: loading, the verdict, the search
    search_runs: int = SEARCH_RUNS  # allocator runs the search for changes may make (0: none)
    jobs: int | None = 1  # worker processes for loading files

    def __post_init__(self) -> None:
        object.__setattr__(self, "deadline_seconds", check_seconds(self.deadline_seconds, "deadline seconds"))

    def context(self, deadline: Deadline) -> Context:
        """The cluster is stored state: read as `--cluster` reads it."""
        return stored_context(
            Context(
                profile=load_profile(self.version, dict(self.gates)),
                deadline=deadline,
                as_stored=True,
                runtime_config=self.runtime_config,
                whole_cluster=True,
                driver_schemas=with_extra(
                    NO_EXTRA_SCHEMAS, self.policy.driver_schemas if self.policy else ()
                ),
            )
        )


def load_files(paths: Sequence[str], options: ExplainOptions, deadline: Deadline) -> Inputs:
    """The cluster's objects from files and directories (`--cluster`), loaded and validated."""
    files = ClusterInput.of([], paths).files
    ctx = options.context(deadline)
    return load(
        list(files), ctx, options.jobs, options.policy, None, options.max_bytes, None, files, options.exclude
    )


def load_objects(objects: Sequence[dict[str, Any]], options: ExplainOptions, deadline: Deadline) -> Inputs:
    """The cluster's objects as a live listing returned them, loaded and validated."""
    return load(list(objects), options.context(deadline), 1, options.policy, max_bytes=options.max_bytes)


@dataclass
class Holder:
    claim: str  # "ns/name"
    devices: int  # its devices (or shares) that keep the request's devices from it on this node
    reserved_for: list[str]  # "Pod ns/name (Running on node-a)"


@dataclass
class NodeReport:
    node: str | None
    matching: int
    left: int
    fits: bool
    blocked: dict[str, int]
    held_by: list[Holder] = field(default_factory=list)
    taints: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RequestReport:
    request: str
    device_class: str
    needs: int | str  # "all" for allocationMode All
    verdict: RequestVerdict
    cause: str
    nodes: list[NodeReport]


@dataclass
class ClaimReport:
    claim: str  # "ns/name" (a generated claim not created yet: the name the controller would give it)
    pod_claim: str  # the Pod's spec.resourceClaims entry ("" for the claim of its extended resources)
    template: str | None  # "ns/name" of the ResourceClaimTemplate it is generated from
    exists: bool  # False: generated from the template when the Pod is scheduled
    allocated: bool
    problem: str = ""
    requests: list[RequestReport] = field(default_factory=list)

    def origin(self) -> str:
        if not self.pod_claim:
            return "the scheduler's claim for the Pod's extended resources"
        if self.template is None:
            return "ResourceClaim"
        if self.exists:
            return f"generated from ResourceClaimTemplate {self.template}"
        return f"from ResourceClaimTemplate {self.template}, not created yet"


@dataclass
class LeftOutReport:
    label: str  # `Kind "ns/name"`
    kind: str
    namespace: str | None
    name: str
    source: str | None  # the file (None: a live object)
    line: int | None
    why: str


JSON_NAMES: dict[str, str | None] = {
    "device_class": "class",
    "reason_on_empty": "reasonOnEmptyCluster",
    "label": None,
}


@dataclass
class PodExplanation:
    pod: str
    status: Status
    verdict: Verdict | None = None
    node: str | None = None
    summary: str = ""
    reason: str = ""
    reason_on_empty: str | None = None  # why not even with every device free and untainted
    claims: list[ClaimReport] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    search: SearchReport | None = None
    left_out: list[LeftOutReport] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def to_dict(self) -> dict[str, Any]:
        """The JSON answer (docs/explain-pod.schema.json)."""
        return {"schemaVersion": SCHEMA_VERSION, **record_json(self, JSON_NAMES)}


@dataclass(frozen=True)
class Prepared:
    """What explaining a Pod reads of a loaded cluster besides the Pod, built once to explain many
    (`draguard audit`): the cluster state and the world of claims, templates, nodes and classes."""

    state: ClusterState
    world: World
    pods: Mapping[tuple[str, str], Loaded]  # the loaded Pods by (namespace, name)
    pod_objects: Mapping[tuple[str, str], dict[str, Any]]  # the same, their objects

    @classmethod
    def of(
        cls, data: Inputs, options: ExplainOptions, deadline: Deadline, state: ClusterState | None = None
    ) -> Prepared:
        """Raises `OutOfBudget` when `deadline` passes while the state is built (`state`: one holding
        `data.state` already, kept up to date by the caller). The world's indexes (claims by pod-claim
        annotation, by namespace) are built here once, not per Pod."""
        if state is None:
            state = ClusterState.from_objects(data.state, options.context(deadline).profile, deadline)
        world = World.of(data)
        spaces: dict[str, list[dict[str, Any]]] = {}
        for (ns, _), claim in world.claims.items():
            spaces.setdefault(ns, []).append(claim)
        world = dataclasses.replace(
            world,
            generated=index_generated(world.claims.values()),
            owned=lambda ns: spaces.get(ns, ()),
        )
        pods = {key_of(p.obj): p for p in data.pods}
        return cls(state, world, pods, {k: p.obj for k, p in pods.items()})


def _left_out(lo: LeftOut, live: bool) -> LeftOutReport:
    if live:  # no file: the reason without the in-memory document's position
        why = lo.why.split(": ", 1)[1] if lo.why.startswith(f"{lo.source}:") else lo.why
        return LeftOutReport(lo.label(), lo.kind, lo.namespace, lo.name, None, None, why)
    return LeftOutReport(lo.label(), lo.kind, lo.namespace, lo.name, lo.source, lo.line, lo.why)


def explain_pod(
    data: Inputs,
    namespace: str,
    name: str,
    options: ExplainOptions,
    deadline: Deadline,
    *,
    live: bool = False,
    pods: Mapping[tuple[str, str], dict[str, Any]] | None = None,
    prepared: Prepared | None = None,
) -> PodExplanation:
    """Explain Pod `namespace/name` of the loaded cluster `data` (see the module docstring). `pods`: the
    cluster's Pods by (namespace, name), to say what the claims holding devices are reserved for (by
    default the loaded ones); `live`: the objects came from an API server, not files; `prepared`: the
    state and world already built from `data` (built here when None). Raises
    `UsageError` when the cluster has no such Pod."""
    label = f"{namespace}/{name}"
    left_out = [_left_out(lo, live) for lo in data.left_out]
    out = PodExplanation(label, "undecided", left_out=left_out)
    if data.report.not_checked:
        out.summary = f"undecided: {DEADLINE_PASSED} while the cluster was loaded and validated"
        return out
    if prepared is not None:
        item = prepared.pods.get((namespace, name))
    else:
        item = next((p for p in data.pods if key_of(p.obj) == (namespace, name)), None)
    if item is None:
        lo = next(
            (x for x in left_out if x.kind == "Pod" and (x.namespace, x.name) == (namespace, name)), None
        )
        if lo is None:
            where = "in the cluster" if live else "in the --cluster files"
            raise UsageError(f'Pod "{label}" not found {where}: check the namespace and name (NS/NAME)')
        out.status = "left-out"
        out.summary = f"Pod {label} is invalid, draguard cannot use it: {lo.why}"
        return out
    pod = item.obj
    bound = as_dict(pod.get("spec")).get("nodeName")
    phase = as_dict(pod.get("status")).get("phase")
    if bound or phase in ("Running", "Succeeded", "Failed"):
        out.status = "not-pending"
        where = f"bound to node {bound}" if bound else "not waiting for the scheduler"
        out.summary = f"Pod {label} is not pending: it is {where}" + (f" (phase {phase})" if phase else "")
        return out
    ctx = options.context(deadline)
    if prepared is None:
        try:
            prepared = Prepared.of(data, options, deadline)
        except OutOfBudget:
            out.summary = f"undecided: {DEADLINE_PASSED} while the cluster state was built"
            return out
    state, world = prepared.state, prepared.world
    trial = Trial(pod, origin_of(item), world, state, ctx, options.budget, deadline)
    resolved = resolve_pod_claims(pod, world.claims, world.templates, world.invalid)
    if not resolved and not needs_special_claim(pod, trial.mapping()):
        out.status = "no-dra"
        out.summary = (
            f"Pod {label} uses no DRA: no resourceClaims, and no extended resource a DeviceClass serves; "
            "DRA does not hold it back (see its events: kubectl describe pod)"
        )
        return out
    problems = [pc.problem for pc in resolved if pc.problem]
    if problems:  # the scheduler does not try the Pod until every claim it names exists
        out.status, out.verdict = "does-not-fit", "busy"
        out.claims = _claims(resolved, PodSimulation(label, False), pod)
        out.reason = "; ".join(problems)
        out.summary = f"Pod {label} waits for the claims it names to exist before the scheduler tries it"
        return out
    now = trial.run(notes=LeftOutNotes(data, ctx, options.budget, deadline))
    return _answer(out, trial, now, resolved, options, pods if pods is not None else prepared.pod_objects)


def _answer(
    out: PodExplanation,
    trial: Trial,
    now: PodSimulation,
    resolved: list[PodClaim],
    options: ExplainOptions,
    pods: Mapping[tuple[str, str], dict[str, Any]],
) -> PodExplanation:
    out.claims = _claims(resolved, now, trial.pod)
    out.reason = now.reason
    if now.feasible:
        out.status, out.verdict, out.node = "fits", "feasible", now.node
        where = f"on node {now.node}" if now.node else "on any node (its devices are not bound to one)"
        out.summary = (
            f"Pod {out.pod} fits now: {where}, the first node in name order where its claims can be allocated"
        )
        return out
    if now.feasible is None:
        out.summary = f"undecided: {now.undecided_by or now.reason}"
        return out
    empty: list[PodSimulation] = []

    def on_empty() -> PodSimulation:
        empty.append(trial.run(empty=True))
        return empty[0]

    decision = decide(now, on_empty, f"Pod {out.pod}")
    out.verdict = decision.verdict
    if decision.verdict == "undecided":
        out.summary = decision.message
        return out
    out.status = "does-not-fit"
    if decision.verdict == "unsatisfiable":
        out.reason_on_empty = empty[0].reason if empty else None
        out.summary = (
            f"Pod {out.pod} can never be scheduled on this cluster as it is written, not even with every "
            "device free and untainted (unsatisfiable)"
        )
    _verdicts(out, now, empty[0] if empty else None)
    if decision.verdict == "busy":
        out.summary = _busy(out, now)
    pending = _pending(resolved)
    hints = _hints(out, trial, [pc.claim for pc in pending if pc.claim is not None], options, pods)
    if decision.verdict == "unsatisfiable":  # not even free and untainted: no release or toleration helps
        hints.holders, hints.taints = [], {}
    if options.search_runs > 0:
        editable = [
            Editable(pc.claim, key_of(pc.claim), _template(trial.pod, pc), exists=not pc.generated)
            for pc in pending
            if pc.claim is not None
        ]
        found, counts = candidates(editable, hints)
        out.changes, out.search = search(trial, found, counts, options.search_runs)
        if not hints.complete:
            partly = "the claims holding devices and the taints were found only in part (the budget ran out)"
            out.search.cut_short = f"{out.search.cut_short}; {partly}" if out.search.cut_short else partly
    return out


def _busy(out: PodExplanation, now: PodSimulation) -> str:
    """The summary of a busy Pod: what it waits for."""
    if now.waits:
        return f"Pod {out.pod} cannot be scheduled now and waits for the cluster to change: {now.reason}"
    verdicts = {r.verdict for c in out.claims for r in c.requests}
    if {"busy", "tainted"} <= verdicts:
        what = "other claims hold some of the devices it needs, and others carry taints it does not tolerate"
    elif "tainted" in verdicts:
        what = "the devices it could use carry device taints it does not tolerate"
    elif "busy" in verdicts:
        what = "the devices it could use are allocated to other claims"
    else:
        what = "each request fits on its own, but not together on the devices left free"
    return f"Pod {out.pod} cannot be scheduled now: {what}; with every device free and untainted it would fit (busy)"


def _claims(resolved: list[PodClaim], now: PodSimulation, pod: dict[str, Any]) -> list[ClaimReport]:
    """The Pod's claims in spec order (each claim once), then the claim of its extended resources."""
    out: list[ClaimReport] = []
    seen: set[str] = set()
    for pc in resolved:
        if pc.claim is None:
            out.append(ClaimReport("", pc.name, None, False, False, pc.problem))
            continue
        ns, name = key_of(pc.claim)
        label = f"{ns}/{name}"
        if label in seen:
            continue
        seen.add(label)
        template = _template(pod, pc)
        allocated = bool(as_dict(as_dict(pc.claim.get("status")).get("allocation")))
        shown = f"{template[0]}/{template[1]}" if template is not None else None
        out.append(ClaimReport(label, pc.name, shown, not pc.generated, allocated))
    extra = [e["claim"] for e in now.explanation if e.get("claim") not in seen]
    for label in dict.fromkeys(extra):
        out.append(ClaimReport(label, "", None, False, False))
    return out


def _verdicts(out: PodExplanation, now: PodSimulation, empty: PodSimulation | None) -> None:
    """Each (sub)request's verdict and nodes, from the explanation now and on the empty cluster."""
    on_empty = {(e.get("claim"), e.get("request")): e for e in (empty.explanation if empty else [])}
    by_claim = {c.claim: c for c in out.claims}
    for e in now.explanation:
        report = by_claim.get(e.get("claim", ""))
        if report is None:
            continue
        nodes = [
            NodeReport(
                n.get("node"),
                n.get("matching", 0),
                n.get("left", 0),
                bool(n.get("fits")),
                dict(n.get("blocked") or {}),
            )
            for n in e.get("perNode") or []
        ]
        cause = str(e.get("cause") or "")
        other = on_empty.get((e.get("claim"), e.get("request")))
        verdict: RequestVerdict
        if not cause:
            verdict = "fits-alone"
        elif other is not None and other.get("cause"):
            verdict, cause = "unsatisfiable", str(other["cause"])
        else:
            busy = any(n.blocked.get(b) for n in nodes for b in ALLOCATION_BLOCKERS)
            tainted = any(n.blocked.get("tainted") for n in nodes)
            verdict = "tainted" if tainted and not busy else "busy"
        report.requests.append(
            RequestReport(
                str(e.get("request")), str(e.get("class")), e.get("needs", 1), verdict, cause, nodes
            )
        )


def _hints(
    out: PodExplanation,
    trial: Trial,
    claims: list[dict[str, Any]],
    options: ExplainOptions,
    pods: Mapping[tuple[str, str], dict[str, Any]],
) -> Hints:
    """Who holds the devices of the requests that wait for them, and the taints they do not tolerate,
    on the nodes the explanation lists (for the Pod's `claims` not allocated yet: the scheduler's claim
    for extended resources is not looked into); filled into the report and returned to guide the
    search."""
    hints = Hints()
    requests = [(c, r) for c in out.claims for r in c.requests]
    hints.failing = {(c.claim, r.request) for c, r in requests if r.verdict != "fits-alone"}
    hints.every_request = not hints.failing
    waiting = [(c, r) for c, r in requests if r.verdict in ("busy", "tainted") or hints.every_request]
    own = {c.claim for c in out.claims}
    nodes = sorted({n.node for _, r in waiting for n in r.nodes}, key=lambda n: n or "")
    if not waiting or not claims or not nodes:
        return hints
    found = blockers(trial.state, claims, nodes, budget=options.budget, deadline=trial.deadline)
    hints.complete = found.complete
    at = {(b.claim, b.request, b.node): b for b in found.found}
    held: dict[str, dict[str, Any]] = {}
    for c, r in waiting:
        for n in r.nodes:
            b = at.get((c.claim, r.request, n.node))
            if b is None:
                continue
            n.taints = list(b.taints)
            if b.taints:
                hints.taints.setdefault((c.claim, r.request), [])
                for t in b.taints:
                    if t not in hints.taints[(c.claim, r.request)]:
                        hints.taints[(c.claim, r.request)].append(t)
            for holder, count in b.held.items():
                claim = trial.world.claims.get(_key(holder))
                users = _users(claim, pods) if claim is not None else []
                n.held_by.append(Holder(holder, count, users))
                if claim is not None and holder not in own:
                    held[holder] = claim
    hints.holders = [held[k] for k in sorted(held, key=lambda k: (release_cost(held[k]), k))]
    return hints


def _pending(resolved: list[PodClaim]) -> list[PodClaim]:
    """The Pod's claims not allocated yet (each once), as the scheduler would allocate them."""
    out: dict[tuple[str, str], PodClaim] = {}
    for pc in resolved:
        if pc.claim is not None and not as_dict(as_dict(pc.claim.get("status")).get("allocation")):
            out.setdefault(key_of(pc.claim), pc)
    return list(out.values())


def _users(claim: dict[str, Any], pods: Mapping[tuple[str, str], dict[str, Any]]) -> list[str]:
    """What the claim is reserved for, each Pod with its phase and node when the cluster has it."""
    out = []
    for user in reserved_for(claim):
        kind, _, ref = user.partition(" ")
        pod = pods.get(_key(ref)) if kind == "Pod" else None
        if pod is not None:
            phase = as_dict(pod.get("status")).get("phase") or "Pending"
            node = as_dict(pod.get("spec")).get("nodeName")
            user += f" ({phase}{' on node ' + node if node else ''})"
        out.append(user)
    return out


def _key(label: str) -> tuple[str, str]:
    ns, _, name = label.partition("/")
    return ns, name


def _template(pod: dict[str, Any], pc: PodClaim) -> tuple[str, str] | None:
    """The ResourceClaimTemplate the Pod's claim entry names, if it names one."""
    entries = as_list(as_dict(pod.get("spec")).get("resourceClaims"))
    name = as_dict(entries[pc.index]).get("resourceClaimTemplateName") if pc.index < len(entries) else None
    return (key_of(pod)[0], name) if isinstance(name, str) else None
