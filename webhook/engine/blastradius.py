"""What one DeviceTaintRule would do to the cluster: the devices it taints and, for `NoExecute`, the
allocated claims holding them and the Pods the device taint eviction controller would evict.

Ported from upstream's `pkg/controller/devicetainteviction` (behaviour, not code):

- a rule's `deviceSelector` matches by driver, pool and device name (each unset = any; an empty selector
  `{}` = every device, an absent one = none); devices are those of each pool's newest generation;
- a claim is affected when one of its allocation results names a matching device (adminAccess results
  included: taints do not exempt them); per result, only tolerations with effect `NoExecute` that
  tolerate the taint count: one without `tolerationSeconds` tolerates it forever, else the smallest
  `tolerationSeconds` (negative = 0) delays the eviction; none: evicted at once. A claim is evicted at
  the earliest of its results' times;
- the Pods are the claim's `status.reservedFor` entries of resource `pods`; when the Pod objects are
  known (offline, `--cluster`) a Pod must exist with that uid, be scheduled (`spec.nodeName`) and
  reference the claim. A Pod is evicted at the earliest time over its affected claims.

Only this rule's taint is judged (taints already on the devices are not), from the moment it applies.
Cost: the pools the selector names (`Inventory.pools`), and the claims of those pools through an index
built once per state version (`ClusterView.memo()`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypedDict

from webhook.engine.requests import tolerates
from webhook.model.records import DeviceID, PoolID
from webhook.state.inventory import Inventory
from webhook.state.view import Cache

Outcome = Literal["evicted", "delayed", "tolerating"]
SelectorKind = Literal["absent", "empty", "narrow"]
ObjectMap = Mapping[tuple[str, str], dict[str, Any]]


class ResultRef(NamedTuple):
    """One allocation result of a claim, as the index of the claims by pool keeps it."""

    claim: tuple[str, str]  # (namespace, name)
    position: int  # in the claim's results
    device: str
    tolerations: list[Any] | None  # None: none (a value that is not a list tolerates nothing either)


ClaimsByPool = dict[PoolID, tuple[ResultRef, ...]]  # every allocation result, by pool
SAMPLE = 20  # devices listed by default

EVERY_DEVICE = "an empty deviceSelector taints every device of the cluster"


def outcome(delay: int | None) -> Outcome:
    """`evicted` (now), `delayed` (after tolerationSeconds) or `tolerating` (never)."""
    if delay is None:
        return "tolerating"
    return "evicted" if delay == 0 else "delayed"


@dataclass(frozen=True, slots=True)
class ClaimImpact:
    namespace: str
    name: str
    devices: tuple[DeviceID, ...]  # its results the rule taints
    delay: int | None  # seconds until its Pods are evicted: 0 now, None never


@dataclass(frozen=True, slots=True)
class PodImpact:
    namespace: str
    name: str
    claims: tuple[str, ...]  # its affected claims' names
    delay: int | None

    @property
    def outcome(self) -> Outcome:
        return outcome(self.delay)


class DevicesJSON(TypedDict):
    count: int
    first: list[str]


class ClaimJSON(TypedDict):
    namespace: str
    name: str
    devices: list[str]
    outcome: Outcome
    seconds: int | None


class PodJSON(TypedDict):
    namespace: str
    name: str
    claims: list[str]
    outcome: Outcome
    seconds: int | None


class BlastJSON(TypedDict):
    rule: str
    effect: str
    selector: SelectorKind
    everyDevice: bool
    devices: DevicesJSON
    claims: list[ClaimJSON]
    pods: list[PodJSON]
    counts: dict[str, int]


def device_text(d: DeviceID) -> str:
    return "/".join(d)


@dataclass(frozen=True)
class BlastRadius:
    """The answer for one rule (see the module docstring); `claims` and `pods` only for NoExecute."""

    rule: str
    effect: str
    selector: SelectorKind
    devices: int
    sample: tuple[DeviceID, ...]  # the first devices, in pool order
    claims: tuple[ClaimImpact, ...] = ()
    pods: tuple[PodImpact, ...] = ()

    @property
    def every_device(self) -> bool:
        return self.selector == "empty"

    def pods_with(self, which: Outcome) -> int:
        return sum(1 for p in self.pods if p.outcome == which)

    @property
    def evicted(self) -> int:
        """Pods evicted: at once or after their tolerationSeconds (what a policy's maxPods counts)."""
        return sum(1 for p in self.pods if p.delay is not None)

    def counts(self) -> dict[str, int]:
        return {
            "devices": self.devices,
            "claims": len(self.claims),
            "claimsEvicting": sum(1 for c in self.claims if c.delay is not None),
            "podsEvicted": self.pods_with("evicted"),
            "podsDelayed": self.pods_with("delayed"),
            "podsTolerating": self.pods_with("tolerating"),
        }

    def summary(self) -> str:
        """One line: the counts, the empty selector called out."""
        head = f"DeviceTaintRule {self.rule} ({self.effect or 'no effect'})"
        if self.selector == "absent":
            return f"{head} has no deviceSelector: it taints no device"
        where = (
            f"{EVERY_DEVICE} ({self.devices})" if self.every_device else f"taints {self.devices} device(s)"
        )
        text = f"{head}: {where}"
        if self.effect != "NoExecute":
            return text + (
                "; effect NoSchedule: no Pod is evicted"
                if self.effect == "NoSchedule"
                else "; no Pod is evicted"
            )
        c = self.counts()
        return (
            f"{text}; {c['claims']} allocated claim(s) hold them; Pods evicted: {c['podsEvicted']} at once, "
            f"{c['podsDelayed']} after their tolerationSeconds; {c['podsTolerating']} tolerate it"
        )

    def to_json(self) -> BlastJSON:
        return {
            "rule": self.rule,
            "effect": self.effect,
            "selector": self.selector,
            "everyDevice": self.every_device,
            "devices": {"count": self.devices, "first": [device_text(d) for d in self.sample]},
            "claims": [
                {
                    "namespace": c.namespace,
                    "name": c.name,
                    "devices": [device_text(d) for d in c.devices],
                    "outcome": outcome(c.delay),
                    "seconds": c.delay,
                }
                for c in self.claims
            ],
            "pods": [
                {
                    "namespace": p.namespace,
                    "name": p.name,
                    "claims": list(p.claims),
                    "outcome": p.outcome,
                    "seconds": p.delay,
                }
                for p in self.pods
            ],
            "counts": self.counts(),
        }


Selector = tuple[str | None, str | None, str | None]


def rule_parts(rule: Mapping[str, Any]) -> tuple[str, Selector | None, dict[str, Any]]:
    """A DeviceTaintRule's name, selector (None: absent) and taint."""
    meta = rule.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    spec = rule.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    sel = spec.get("deviceSelector")
    taint = spec.get("taint")
    selector: Selector | None = None
    if isinstance(sel, dict):

        def part(k: str) -> str | None:
            v = sel.get(k)
            return v if isinstance(v, str) and v else None

        selector = (part("driver"), part("pool"), part("device"))
    return (name if isinstance(name, str) else "", selector, dict(taint) if isinstance(taint, dict) else {})


def _pools(inv: Inventory, sel: Selector) -> Iterable[PoolID]:
    driver, pool, _ = sel
    if driver is not None and pool is not None:
        return [(driver, pool)] if (driver, pool) in inv.pools else []
    return sorted(
        p for p in inv.pools if (driver is None or p[0] == driver) and (pool is None or p[1] == pool)
    )


def tainted_devices(inv: Inventory, sel: Selector, limit: int = SAMPLE) -> tuple[int, tuple[DeviceID, ...]]:
    """How many devices the selector matches (each pool's newest generation), and the first `limit`."""
    count = 0
    sample: list[DeviceID] = []
    want = sel[2]
    for pid in _pools(inv, sel):
        members = inv.pool_members(pid)
        if not members:
            continue
        newest = max(s.generation for _, s in members)
        for _, s in members:
            if s.generation != newest:
                continue
            if want is None:
                count += len(s.devices)
                if len(sample) < limit:
                    sample.extend(d.id for d in s.devices[: limit - len(sample)])
            else:
                for d in s.devices:
                    if d.name == want:
                        count += 1
                        if len(sample) < limit:
                            sample.append(d.id)
    return count, tuple(sample)


def _results(claim: Mapping[str, Any]) -> list[dict[str, Any]]:
    status = claim.get("status")
    alloc = status.get("allocation") if isinstance(status, dict) else None
    devices = alloc.get("devices") if isinstance(alloc, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def _result_id(r: Mapping[str, Any]) -> DeviceID:
    return (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""))


def claims_by_pool(claims: ObjectMap) -> ClaimsByPool:
    """The allocation results of every claim by pool (an index of one state version)."""
    out: dict[PoolID, list[ResultRef]] = {}
    for key, claim in claims.items():
        for i, r in enumerate(_results(claim)):
            driver, pool, device = _result_id(r)
            tolerations = r.get("tolerations")
            ref = ResultRef(
                key, i, device, tolerations if isinstance(tolerations, list) and tolerations else None
            )
            out.setdefault((driver, pool), []).append(ref)
    return {p: tuple(entries) for p, entries in out.items()}


def toleration_delay(tolerations: object, taint: Mapping[str, Any]) -> int | None:
    """Seconds until a NoExecute taint evicts a result with these tolerations: 0 now, None never."""
    seconds: int | None = None
    for tol in tolerations if isinstance(tolerations, list) else ():
        if not isinstance(tol, dict) or tol.get("effect") != "NoExecute" or not tolerates(tol, dict(taint)):
            continue
        s = tol.get("tolerationSeconds")
        if not isinstance(s, int) or isinstance(s, bool):
            return None  # tolerated forever
        s = max(s, 0)
        seconds = s if seconds is None else min(seconds, s)
    return 0 if seconds is None else seconds


def _earliest(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


def _uses_claim(pod: Mapping[str, Any], claim: str) -> bool:
    spec = pod.get("spec")
    status = pod.get("status")
    for e in (spec.get("resourceClaims") if isinstance(spec, dict) else None) or ():
        if isinstance(e, dict) and e.get("resourceClaimName") == claim:
            return True
    for e in (status.get("resourceClaimStatuses") if isinstance(status, dict) else None) or ():
        if isinstance(e, dict) and e.get("resourceClaimName") == claim:
            return True
    return False


def _consumers(claim: Mapping[str, Any]) -> list[tuple[str, str]]:
    status = claim.get("status")
    out: list[tuple[str, str]] = []
    for ref in (status.get("reservedFor") if isinstance(status, dict) else None) or ():
        if not isinstance(ref, dict) or ref.get("resource") != "pods" or (ref.get("apiGroup") or ""):
            continue
        name = ref.get("name")
        if isinstance(name, str) and name:
            out.append((name, str(ref.get("uid") or "")))
    return out


def _pod_ok(pod: Mapping[str, Any] | None, uid: str, claim: str) -> bool:
    if pod is None:
        return False
    meta = pod.get("metadata")
    have = str(meta.get("uid") or "") if isinstance(meta, dict) else ""
    if uid and have and uid != have:
        return False
    spec = pod.get("spec")
    if not (isinstance(spec, dict) and spec.get("nodeName")):
        return False
    return _uses_claim(pod, claim)


def blast_radius(
    rule: Mapping[str, Any],
    inventory: Inventory,
    claims: ObjectMap,
    pods: ObjectMap | None = None,
    memo: Cache | None = None,
    limit: int = SAMPLE,
) -> BlastRadius:
    """What `rule` taints on a state whose index is `inventory` and whose ResourceClaims are `claims`
    (by (namespace, name)); `pods`: the Pod objects when known (else reservedFor is taken as is);
    `memo`: the state version's cache for the claims' index."""
    name, sel, taint = rule_parts(rule)
    effect = str(taint.get("effect") or "")
    if sel is None:
        return BlastRadius(name, effect, "absent", 0, ())
    kind: SelectorKind = "empty" if sel == (None, None, None) else "narrow"
    count, sample = tainted_devices(inventory, sel, limit)
    if effect != "NoExecute":
        return BlastRadius(name, effect, kind, count, sample)
    index: ClaimsByPool | None = memo.get("blast-radius:claims-by-pool") if memo is not None else None
    if index is None:
        index = claims_by_pool(claims)
        if memo is not None:
            memo.put("blast-radius:claims-by-pool", index, 200 + 150 * sum(len(v) for v in index.values()))
    driver, pool, want = sel
    hits: dict[tuple[str, str], list[tuple[int, DeviceID, int | None]]] = {}
    for pid, entries in index.items():
        if (driver is not None and pid[0] != driver) or (pool is not None and pid[1] != pool):
            continue
        for key, i, device, tolerations in entries:
            if want is not None and device != want:
                continue
            delay = 0 if tolerations is None else toleration_delay(tolerations, taint)
            hits.setdefault(key, []).append((i, (pid[0], pid[1], device), delay))
    impacts: list[ClaimImpact] = []
    pod_delay: dict[tuple[str, str], tuple[int | None, list[str]]] = {}
    for key in sorted(hits):
        claim = claims.get(key)
        if claim is None:
            continue
        found = sorted(hits[key], key=lambda h: h[0])
        claim_delay: int | None = None  # never, until a result says otherwise
        for h in found:
            claim_delay = _earliest(claim_delay, h[2])
        impact = ClaimImpact(key[0], key[1], tuple(h[1] for h in found), claim_delay)
        impacts.append(impact)
        for pod_name, uid in _consumers(claim):
            pk = (key[0], pod_name)
            if pods is not None and not _pod_ok(pods.get(pk), uid, key[1]):
                continue
            if pk in pod_delay:
                d, names = pod_delay[pk]
                pod_delay[pk] = (_earliest(d, impact.delay), [*names, key[1]])
            else:
                pod_delay[pk] = (impact.delay, [key[1]])
    pod_impacts = tuple(
        PodImpact(ns, pn, tuple(names), d) for (ns, pn), (d, names) in sorted(pod_delay.items())
    )
    return BlastRadius(name, effect, kind, count, sample, tuple(impacts), pod_impacts)
