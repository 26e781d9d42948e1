"""The smallest changes that would make a Pending Pod fit, each verified by scheduling the Pod again with
the change applied (`Trial`): tolerate a device taint, drop one term of a request's selector (a selector
`a && b` is tried without each term), drop one claim constraint, lower a request's count (the largest
count that fits), or release another claim's allocation (one claim at a time, the cheapest first). Only
changes the allocator verified are reported, the smallest first (`Change.cost`).

Bounded like the rest of the engine: at most `runs` allocator runs, each within the Pod's budget, all
within the run's deadline; a run that is undecided never counts as a fit. The search report says what
was tried and, when the bound, the deadline or a budget cut it short, how much was left."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from webhook.cel.conjuncts import conjuncts, without
from webhook.config.context import Context
from webhook.engine import Budget
from webhook.model.budget import SEARCH_RUNS, Deadline
from webhook.model.plain import as_dict, as_list, deep_copy, record_json
from webhook.simulate.run import PodRun, PodSimulation, World
from webhook.simulate.served import LeftOutNotes
from webhook.simulate.subjects import Origin
from webhook.state import ClusterState

ClaimKey = tuple[str, str]
AltAt = tuple[int, int | None]  # (request index, subrequest index or None) in a claim's spec.devices
ChangeKind = Literal[
    "tolerate-taint", "drop-selector-term", "drop-constraint", "lower-count", "release-claim"
]
KIND_ORDER: dict[str, int] = {
    "tolerate-taint": 0,
    "drop-selector-term": 1,
    "drop-constraint": 2,
    "lower-count": 3,
    "release-claim": 4,
}


class Trial:
    """The Pod scheduled again on the cluster as it is, or with claims, templates or one allocation
    changed: never written to the cluster, nothing else scheduled."""

    def __init__(
        self,
        pod: dict[str, Any],
        origin: Origin,
        world: World,
        state: ClusterState,
        ctx: Context,
        budget: Budget,
        deadline: Deadline,
    ) -> None:
        self.pod, self.origin, self.world, self.state = pod, origin, world, state
        self.ctx, self.budget, self.deadline = ctx, budget, deadline

    def run(
        self,
        claims: Mapping[ClaimKey, dict[str, Any]] | None = None,
        templates: Mapping[ClaimKey, dict[str, Any]] | None = None,
        *,
        empty: bool = False,
        notes: LeftOutNotes | None = None,
    ) -> PodSimulation:
        """The Pod's answer with `claims` / `templates` in place of those of the same names; `empty`: on
        the same cluster with nothing allocated and device taints ignored."""
        world = self.world
        if claims or templates:
            world = replace(
                world,
                claims=ChainMap(dict(claims or {}), dict(world.claims)),
                templates=ChainMap(dict(templates or {}), dict(world.templates)),
                generated=None,  # claims generated from templates are looked up again among the new ones
                owned=None,  # and a namespace's claims
            )
        run = PodRun(
            world,
            self.state,
            self.ctx,
            self.budget,
            self.deadline,
            commit=False,
            empty_cluster=empty,
            notes=notes,
        )
        return run.guarded_pod(self.pod, self.origin)

    def mapping(self) -> dict[str, str]:
        """The extended resources DeviceClasses serve (empty when DRAExtendedResource is off)."""
        return PodRun(self.world, self.state, self.ctx, self.budget, self.deadline, commit=False).mapping

    @contextmanager
    def released(self, claim: dict[str, Any]) -> Iterator[None]:
        """The cluster with `claim`'s allocation (and reservations) gone, for the time of the block."""
        free = deep_copy(claim)
        status = as_dict(free.get("status"))
        status.pop("allocation", None)
        status.pop("reservedFor", None)
        self.state.apply(free)
        try:
            yield
        finally:
            self.state.apply(claim)


@dataclass
class Editable:
    """One of the Pod's claims a change may edit: the claim as the Pod would use it, and where an edit
    goes — the ResourceClaimTemplate it is generated from, else the ResourceClaim itself (a claim's spec
    cannot be updated: it is created again with the change). `exists`: the claim exists (a change is
    tried on it), or is still to be generated from its template (the change is tried on the template)."""

    claim: dict[str, Any]
    key: ClaimKey
    template: ClaimKey | None = None
    exists: bool = True

    @property
    def label(self) -> str:
        return f"{self.key[0]}/{self.key[1]}"

    def target(self) -> str:
        if self.template is not None:
            return f'ResourceClaimTemplate "{self.template[0]}/{self.template[1]}"'
        return f'ResourceClaim "{self.label}"'

    def overrides(
        self, edit: Callable[[dict[str, Any]], None], world: World
    ) -> tuple[dict[ClaimKey, dict[str, Any]], dict[ClaimKey, dict[str, Any]]]:
        """(claims, templates) to run with: this claim's spec after `edit`."""
        changed = deep_copy(self.claim)
        edit(changed)
        if self.exists or self.template is None:
            return {self.key: changed}, {}
        template = deep_copy(world.templates[self.template])
        template.setdefault("spec", {})["spec"] = changed.get("spec") or {}
        return {}, {self.template: template}


@dataclass
class Change:
    """A change verified to make the Pod fit: `node` is where it then fits."""

    kind: ChangeKind
    claim: str  # the claim changed ("ns/name"), or the claim released
    request: str | None  # the request or "request/subrequest" changed (None: the whole claim)
    target: str  # the object to edit (`ResourceClaimTemplate "ns/name"`), or the claim to release
    description: str
    detail: dict[str, Any]
    cost: tuple[int, int, int]  # (changes the Pod's own claims: 0, or releases another's: 1; size; 0)
    node: str | None = None

    def rank(self) -> tuple[Any, ...]:
        return (*self.cost, KIND_ORDER[self.kind], self.description)

    def to_dict(self) -> dict[str, Any]:
        """Its fields and, beside them, what it changes (`detail`)."""
        return {**record_json(self, {"detail": None, "cost": None}), **self.detail}


@dataclass
class SearchReport:
    tried: int = 0  # allocator runs made
    fits: int = 0  # changes verified to make the Pod fit
    undecided: int = 0  # runs without an answer (budget)
    untried: int = 0  # candidate changes never tried (the bound or the deadline came first)
    cut_short: str | None = None  # why not every candidate got an answer


@dataclass
class Candidate:
    """A change to try: `edit` of one claim's copy, or the release of `releases` (an allocated claim)."""

    change: Change
    owner: Editable | None = None
    edit: Callable[[dict[str, Any]], None] | None = None
    releases: dict[str, Any] | None = None


@dataclass
class CountSearch:
    """Lowering one request's count: the largest count below the current one that fits."""

    owner: Editable
    request: str
    path: AltAt  # (request index, subrequest index or None)
    count: int


@dataclass
class Hints:
    """What the explanation found, to choose and order candidates: the requests that fail (claim, request),
    the untolerated taints per (claim, request), and the claims holding devices, cheapest first."""

    failing: set[tuple[str, str]] = field(default_factory=set)
    taints: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    holders: list[dict[str, Any]] = field(default_factory=list)  # allocated claims, cheapest first
    # no request fails on its own (constraints or combinations fail, or an allocation error such as a CEL
    # runtime error left no explanation): every request's selector terms and count are candidates
    every_request: bool = False
    complete: bool = True  # False: the holders and taints were not all found (the budget ran out)


def _alternatives(claim: dict[str, Any]) -> Iterator[tuple[str, AltAt, dict[str, Any]]]:
    """Each request without subrequests and each subrequest: (its ref, (request, subrequest) index, it)."""
    requests = as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests"))
    for i, r in enumerate(requests):
        r = as_dict(r)
        subs = as_list(r.get("firstAvailable"))
        if subs:
            for k, s in enumerate(subs):
                yield f"{r.get('name')}/{as_dict(s).get('name')}", (i, k), as_dict(s)
        else:
            yield str(r.get("name") or ""), (i, None), as_dict(r.get("exactly"))


def _at(claim: dict[str, Any], path: AltAt) -> dict[str, Any]:
    """The request (its `exactly`) or subrequest of `claim` at `path`, in place."""
    request = claim["spec"]["devices"]["requests"][path[0]]
    return request["exactly"] if path[1] is None else request["firstAvailable"][path[1]]


def candidates(pod_claims: Sequence[Editable], hints: Hints) -> tuple[list[Candidate], list[CountSearch]]:
    """The changes worth trying, most promising first: tolerations of the taints found (in the request
    it blocks, and in every request of the claim it blocks when there are several), selector terms and
    counts of the failing requests (of every request when none fails on its own), claim constraints,
    then releases of the holders found."""
    tolerations: list[Candidate] = []
    terms: list[Candidate] = []
    counts: list[CountSearch] = []
    constraints: list[Candidate] = []
    for owner in pod_claims:
        blocked: dict[str, tuple[dict[str, Any], list[tuple[str, AltAt]]]] = {}
        for ref, path, alt in _alternatives(owner.claim):
            for t in hints.taints.get((owner.label, ref), []):
                tolerations.append(_toleration(owner, [(ref, path)], t))
                blocked.setdefault(_shown(t), (t, []))[1].append((ref, path))
            if (owner.label, ref) in hints.failing or hints.every_request:
                terms += _term_drops(owner, ref, path, alt)
                count = alt.get("count")
                exact = alt.get("allocationMode", "ExactCount") == "ExactCount"
                if exact and isinstance(count, int) and count > 1:
                    counts.append(CountSearch(owner, ref, path, count))
        tolerations += [_toleration(owner, where, t) for t, where in blocked.values() if len(where) > 1]
        devices = as_dict(as_dict(owner.claim.get("spec")).get("devices"))
        constraints += [
            _drop_constraint(owner, c, as_dict(x)) for c, x in enumerate(as_list(devices.get("constraints")))
        ]
    releases = [_release(h) for h in hints.holders]
    return tolerations + terms + constraints + releases, counts


def _term_drops(owner: Editable, ref: str, path: AltAt, alt: dict[str, Any]) -> list[Candidate]:
    """Each term of each of the request's selectors dropped in turn."""
    out = []
    for s, sel in enumerate(as_list(alt.get("selectors"))):
        expr = as_dict(as_dict(sel).get("cel")).get("expression")
        if isinstance(expr, str):
            parts = conjuncts(expr)
            out += [_drop_term(owner, ref, path, s, term, without(parts, j)) for j, term in enumerate(parts)]
    return out


def _shown(taint: dict[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"


def _toleration(owner: Editable, where: list[tuple[str, AltAt]], taint: dict[str, Any]) -> Candidate:
    """Tolerate `taint` in the requests `where` (refs and paths): exactly it (Equal, or Exists when it
    has no value), with its effect."""
    tol: dict[str, Any] = {"key": taint.get("key"), "operator": "Equal", "value": taint.get("value") or ""}
    if not taint.get("value"):
        tol = {"key": taint.get("key"), "operator": "Exists"}
    tol["effect"] = taint.get("effect")

    def edit(claim: dict[str, Any]) -> None:
        for _, path in where:
            alt = _at(claim, path)
            alt["tolerations"] = [*as_list(alt.get("tolerations")), tol]

    refs = [ref for ref, _ in where]
    what = f"request {refs[0]}" if len(refs) == 1 else f"requests {', '.join(refs)}"
    change = Change(
        "tolerate-taint",
        owner.label,
        refs[0] if len(refs) == 1 else None,
        owner.target(),
        f"tolerate the device taint {_shown(taint)} in {what}",
        {"taint": taint, "toleration": tol, "requests": refs},
        (0, len(refs), 0),
    )
    return Candidate(change, owner, edit)


def _drop_term(owner: Editable, ref: str, path: AltAt, index: int, term: str, rest: str) -> Candidate:
    def edit(claim: dict[str, Any]) -> None:
        alt = _at(claim, path)
        selectors = list(as_list(alt.get("selectors")))
        if rest:
            selectors[index] = {"cel": {"expression": rest}}
        else:
            del selectors[index]
        if selectors:
            alt["selectors"] = selectors
        else:
            alt.pop("selectors", None)

    what = f"the selector term `{term}`" if rest else f"selector #{index} (`{term}`)"
    change = Change(
        "drop-selector-term",
        owner.label,
        ref,
        owner.target(),
        f"drop {what} from request {ref}",
        {"selector": index, "term": term, "expression": rest or None},
        (0, 1, 0),
    )
    return Candidate(change, owner, edit)


def _drop_constraint(owner: Editable, index: int, constraint: dict[str, Any]) -> Candidate:
    kind = "matchAttribute" if constraint.get("matchAttribute") else "distinctAttribute"
    attribute = constraint.get(kind)

    def edit(claim: dict[str, Any]) -> None:
        devices = claim["spec"]["devices"]
        kept = [c for i, c in enumerate(devices["constraints"]) if i != index]
        if kept:
            devices["constraints"] = kept
        else:
            del devices["constraints"]

    change = Change(
        "drop-constraint",
        owner.label,
        None,
        owner.target(),
        f"drop constraint #{index} ({kind} {attribute}) of claim {owner.label}",
        {"constraint": index, "constraintKind": kind, "attribute": attribute},
        (0, 1, 0),
    )
    return Candidate(change, owner, edit)


def held_devices(claim: dict[str, Any]) -> int:
    """The devices an allocated claim holds (its allocation's results)."""
    status = as_dict(claim.get("status"))
    return len(as_list(as_dict(as_dict(status.get("allocation")).get("devices")).get("results")))


def reserved_for(claim: dict[str, Any]) -> list[str]:
    """The consumers a claim is reserved for: "Pod ns/name" (other resources by their kind)."""
    ns = as_dict(claim.get("metadata")).get("namespace") or "default"
    out = []
    for ref in as_list(as_dict(claim.get("status")).get("reservedFor")):
        ref = as_dict(ref)
        resource = ref.get("resource") or "pods"
        kind = "Pod" if resource == "pods" and not ref.get("apiGroup") else str(resource)
        out.append(f"{kind} {ns}/{ref.get('name')}")
    return out


def release_cost(claim: dict[str, Any]) -> tuple[int, int]:
    """Cheapest to release first: fewest consumers reserving it (none: nothing running uses it), then
    fewest devices held."""
    return len(reserved_for(claim)), held_devices(claim)


def _release(claim: dict[str, Any]) -> Candidate:
    meta = as_dict(claim.get("metadata"))
    label = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
    users, devices = release_cost(claim)
    by = reserved_for(claim)
    whom = (
        f"; reserved for {', '.join(by[:3])}{' and more' if len(by) > 3 else ''}"
        if by
        else "; reserved for nothing"
    )
    change = Change(
        "release-claim",
        label,
        None,
        f'ResourceClaim "{label}"',
        f"release claim {label} ({devices} device{'s' if devices != 1 else ''}{whom})",
        {"devices": devices, "reservedFor": by},
        (1, users, devices),
    )
    return Candidate(change, releases=claim)


def search(
    trial: Trial, found: list[Candidate], counts: list[CountSearch], runs: int = SEARCH_RUNS
) -> tuple[list[Change], SearchReport]:
    """Try the candidates in order, then the count searches, within `runs` allocator runs and the
    trial's deadline; the changes that fit, smallest first."""
    report = SearchReport()
    fits: list[Change] = []
    left = [runs]

    def attempt(candidate: Candidate) -> PodSimulation | None:
        """The Pod's answer with the candidate applied; None when the bound or the deadline is reached."""
        if left[0] <= 0 or trial.deadline.expired():
            return None
        left[0] -= 1
        report.tried += 1
        if candidate.releases is not None:
            with trial.released(candidate.releases):
                sim = trial.run()
        else:
            assert candidate.owner is not None and candidate.edit is not None
            claims, templates = candidate.owner.overrides(candidate.edit, trial.world)
            sim = trial.run(claims, templates)
        if sim.feasible is None:
            report.undecided += 1
        elif sim.feasible:
            candidate.change.node = sim.node
        return sim

    done = 0
    for candidate in found:
        sim = attempt(candidate)
        if sim is None:
            break
        done += 1
        if sim.feasible:
            fits.append(candidate.change)
    if done == len(found):
        for cs in counts:
            got = _lower(cs, attempt)
            if got is None:
                break
            done += 1
            if isinstance(got, Change):
                fits.append(got)
    report.untried = len(found) + len(counts) - done
    report.fits = len(fits)
    if report.untried:
        why = (
            "the deadline of the run passed"
            if trial.deadline.expired()
            else f"the bound of {runs} allocator runs was reached"
        )
        report.cut_short = f"{why}; {report.untried} candidate change(s) not tried"
    elif report.undecided:
        report.cut_short = f"{report.undecided} run(s) undecided within the allocator budget"
    fits.sort(key=Change.rank)
    return fits, report


def _lower(cs: CountSearch, attempt: Callable[[Candidate], PodSimulation | None]) -> Change | bool | None:
    """The largest count below `cs.count` that fits (a verified Change): one fewer first, then a binary
    search below it. False when none fits, None when the bound or the deadline came first with nothing
    found. Fitting is monotone in the count in practice (fewer devices of the same request); the count
    reported is one the allocator verified, whatever the others did."""

    def candidate(n: int) -> Candidate:
        def edit(claim: dict[str, Any]) -> None:
            _at(claim, cs.path)["count"] = n

        change = Change(
            "lower-count",
            cs.owner.label,
            cs.request,
            cs.owner.target(),
            f"lower the count of request {cs.request} from {cs.count} to {n}",
            {"from": cs.count, "to": n},
            (0, cs.count - n, 0),
        )
        return Candidate(change, cs.owner, edit)

    best: Change | None = None
    lo, hi = 1, cs.count - 1
    probe = hi  # one fewer first: the common answer, in one run
    while lo <= hi:
        c = candidate(probe)
        sim = attempt(c)
        if sim is None:
            return best
        if sim.feasible:
            best = c.change
            lo = probe + 1
        else:
            hi = probe - 1
        probe = (lo + hi) // 2
    return best if best is not None else False
