"""Claim preparation: requests and subrequests with their class, selectors and gate checks (upstream
validateDeviceRequest), constraints, and the feature set of the profile."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webhook.engine.outcome import ErrorKind
from webhook.model.errors import DraguardError
from webhook.model.quantity import Quantity
from webhook.model.records import qty
from webhook.state.view import ClusterView

MAX_RESULTS = 32  # AllocationResultsMaxSize


class EngineError(DraguardError):
    """An upstream allocation *error* (not "does not fit"): it aborts scheduling of the Pod."""

    def __init__(self, message: str, kind: ErrorKind = "invalid", claim: str | None = None) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.claim = claim  # "ns/name" of the one claim the error is about, when the message starts with it

    def within(self, where: str) -> EngineError:
        """The same error, its message prefixed with where it happened."""
        return EngineError(f"{where}: {self}", self.kind)


@dataclass(frozen=True)
class Features:
    prioritized_list: bool
    admin_access: bool
    partitionable: bool
    consumable_capacity: bool
    taints: bool
    binding: bool
    list_attributes: bool
    groups: bool
    node_operations: bool

    @classmethod
    def of(cls, state: ClusterView) -> Features:
        on = state.enabled
        return cls(
            prioritized_list=on("DRAPrioritizedList"),
            admin_access=on("DRAAdminAccess"),
            partitionable=on("DRAPartitionableDevices"),
            consumable_capacity=on("DRAConsumableCapacity"),
            taints=on("DRADeviceTaints"),
            binding=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"),
            list_attributes=on("DRAListTypeAttributes"),
            groups=on("DRADeviceCompatibilityGroups") and on("DRAPartitionableDevices"),
            node_operations=on("DRAOptionalNodeOperations"),
        )


@dataclass(eq=False, slots=True)
class Alt:
    """One request without subrequests, or one subrequest (`parent` set)."""

    claim_index: int
    request_index: int
    sub_index: int
    name: str
    parent: str | None
    class_name: str
    device_class: dict[str, Any]
    class_selectors: tuple[str, ...]
    selectors: tuple[str, ...]
    all_mode: bool
    count: int
    admin: bool
    tolerations: list[dict[str, Any]]
    capacity: dict[str, Quantity] | None
    signature: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    @property
    def ref(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def base(self) -> str:
        return self.parent or self.name


@dataclass(eq=False, slots=True)
class Req:
    name: str
    alts: list[Alt]
    is_parent: bool  # has firstAvailable subrequests


@dataclass(frozen=True)
class ConstraintSpec:
    kind: str  # "match" | "distinct"
    attribute: str
    requests: frozenset[str]


@dataclass(eq=False, slots=True)
class PreparedClaim:
    claim: dict[str, Any]
    namespace: str | None
    name: str | None
    requests: list[Req]
    constraints: list[ConstraintSpec]
    config: list[dict[str, Any]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else str(self.name)


def _selectors(v: Any) -> tuple[str, ...]:
    out = []
    for sel in v or []:
        cel = (sel or {}).get("cel") if isinstance(sel, dict) else None
        if not isinstance(cel, dict):
            raise EngineError("CEL expression empty (unsupported selector type?)")
        out.append(str(cel.get("expression") or ""))
    return tuple(out)


def _alt(
    state: ClusterView,
    f: Features,
    label: str,
    idx: tuple[int, int, int],
    name: str,
    r: dict[str, Any],
    parent: str | None,
) -> Alt:
    ci, ri, si = idx
    where = f"claim {label}, {'subrequest' if parent else 'request'} {name}"
    try:
        sels = _selectors(r.get("selectors"))
    except EngineError as e:
        raise e.within(where) from None
    admin = r.get("adminAccess") is True
    if admin and not f.admin_access:
        raise EngineError(f"{where}: admin access is requested, but the feature is disabled")
    caps = (r.get("capacity") or {}).get("requests") if isinstance(r.get("capacity"), dict) else None
    if r.get("capacity") is not None and not f.consumable_capacity:
        raise EngineError(
            f"{where}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
        )
    cname = str(r.get("deviceClassName") or "")
    if not cname:
        raise EngineError(f"{where}: missing device class name (unsupported request type?)")
    cls = state.device_class(cname)
    if cls is None:
        raise EngineError(
            f"{where}: could not retrieve device class {cname}: "
            f'deviceclass.resource.k8s.io "{cname}" not found',
            "waits",
        )
    try:
        class_sels = _selectors((cls.get("spec") or {}).get("selectors"))
    except EngineError as e:
        raise e.within(f"class {cname}") from None
    mode = r.get("allocationMode") or "ExactCount"
    if mode not in ("ExactCount", "All"):
        raise EngineError(f"{where}: unsupported count mode {mode}")
    count = int(r.get("count") or 1) if mode == "ExactCount" else 0
    return Alt(
        claim_index=ci,
        request_index=ri,
        sub_index=si,
        name=name,
        parent=parent,
        class_name=cname,
        device_class=cls,
        class_selectors=class_sels,
        selectors=sels,
        all_mode=mode == "All",
        count=count,
        admin=admin,
        tolerations=[t for t in (r.get("tolerations") or []) if isinstance(t, dict)],
        capacity={str(k): qty(v) for k, v in caps.items()} if isinstance(caps, dict) else None,
        signature=(class_sels, sels),
    )


def prepare(
    state: ClusterView, claims: list[dict[str, Any]], f: Features, tick: Callable[[], None] | None = None
) -> list[PreparedClaim]:
    """Check every claim as upstream does before searching; raise `EngineError` on upstream errors.
    `tick` is called per claim (a budget's clock)."""
    out = []
    for ci, claim in enumerate(claims):
        if tick is not None:
            tick()
        meta = claim.get("metadata") or {}
        devices = (claim.get("spec") or {}).get("devices") or {}
        pc = PreparedClaim(claim, meta.get("namespace"), meta.get("name"), [], [])
        for ri, r in enumerate(devices.get("requests") or []):
            name = str(r.get("name") or "")
            subs = r.get("firstAvailable") or []
            if subs:
                if not f.prioritized_list:
                    raise EngineError(
                        f"claim {pc.label}, request {name}: has subrequests, but the DRAPrioritizedList "
                        "feature is disabled"
                    )
                alts = [
                    _alt(state, f, pc.label, (ci, ri, si), str(s.get("name") or ""), s, name)
                    for si, s in enumerate(subs)
                ]
                pc.requests.append(Req(name, alts, True))
            else:
                alt = _alt(state, f, pc.label, (ci, ri, 0), name, r.get("exactly") or {}, None)
                pc.requests.append(Req(name, [alt], False))
        for i, c in enumerate(devices.get("constraints") or []):
            reqs = frozenset(str(x) for x in (c.get("requests") or []))
            if c.get("matchAttribute"):
                pc.constraints.append(ConstraintSpec("match", str(c["matchAttribute"]), reqs))
            elif c.get("distinctAttribute"):
                pc.constraints.append(ConstraintSpec("distinct", str(c["distinctAttribute"]), reqs))
            else:
                raise EngineError(
                    f"claim {pc.label}, constraint #{i}: empty constraint (unsupported constraint type?)"
                )
        pc.config = [c for c in (devices.get("config") or []) if isinstance(c, dict)]
        low = sum(min(a.count for a in r.alts) for r in pc.requests)  # "All" counts 0 here, per node later
        if low > MAX_RESULTS:
            raise EngineError(
                f"claim {pc.label}: number of requested devices {low} exceeds the claim limit of {MAX_RESULTS}",
                claim=pc.label,
            )
        out.append(pc)
    return out


def tolerates(tol: dict[str, Any], taint: dict[str, Any]) -> bool:
    """resourceclaim.ToleratesTaint."""
    if tol.get("key") and tol.get("key") != taint.get("key"):
        return False
    if tol.get("effect") and tol.get("effect") != taint.get("effect"):
        return False
    op = tol.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (tol.get("value") or "") == (taint.get("value") or "")
    return False


def blocking_taint(
    taints: tuple[dict[str, Any], ...], tolerations: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The first NoSchedule/NoExecute taint no toleration covers (None and unknown effects are ignored)."""
    for t in taints:
        if t.get("effect") in ("NoSchedule", "NoExecute") and not any(tolerates(x, t) for x in tolerations):
            return t
    return None
