"""The policy in force: rule severities, admission-time feasibility modes per kind and namespace, tenant
entries; and how several policies combine into it.

What one policy sets is a `PolicySpec` (read from a plain policy file, `webhook.config.filepolicy`, or a
DraguardPolicy object, `webhook.config.policyobject`); `combine(specs)` makes the `Policy` admission and
validation read. Combining is deterministic and order-independent: the most restrictive setting wins.

- a rule: the strictest severity any policy sets for it (error > warning > info > off); a rule no policy
  names keeps its own severity;
- feasibility: for each kind and namespace, each policy's own answer (its most specific setting:
  namespace and kind, namespace, kind, default), then the strictest of those (enforce > warn > off);
  `warn` when no policy sets anything that applies;
- tenants: every entry of every policy applies, each under its id `<policy>/<tenant>`;
- driver schemas: every policy's apply; parameters must fit each schema given for their driver and kind.
- taints (a DeviceTaintRule's blast radius): the smallest `maxDevices` and `maxPods` any policy sets; a
  rule above them needs every policy's acknowledgement annotation set to "true".
- rbac: `enforceNodeBoundStatus` is on when any policy turns it on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from webhook.config.driverschemas import DriverSchema
from webhook.config.tenants import Tenant
from webhook.model.violation import Severity, Violation

FEASIBILITY_MODES = ("enforce", "warn", "off")
FEASIBILITY_KINDS = ("ResourceClaim", "Pod")
DEFAULT_FEASIBILITY_MODE = "warn"
ALL_KINDS = "*"  # a namespace's mode for every kind

RuleSetting = Literal["off", "info", "warning", "error"]
RULE_SETTINGS: tuple[RuleSetting, ...] = ("off", "info", "warning", "error")  # weakest first
_RULE_RANK = {s: i for i, s in enumerate(RULE_SETTINGS)}
_MODE_RANK = {"off": 0, "warn": 1, "enforce": 2}


def _lookup(
    namespaces: Mapping[str, Mapping[str, str]],
    kinds: Mapping[str, str],
    default: str | None,
    kind: str,
    namespace: str | None,
) -> str | None:
    """The most specific setting: namespace and kind, namespace, kind, default."""
    per_ns = namespaces.get(namespace or "")
    if per_ns is not None:
        found = per_ns.get(kind) or per_ns.get(ALL_KINDS)
        if found is not None:
            return found
    return kinds.get(kind, default)


@dataclass(frozen=True)
class FeasibilityPolicy:
    """Admission-time feasibility per kind and namespace: `enforce` denies unsatisfiable requests and
    warns on busy ones, `warn` warns on both, `off` does not run the allocator. The most specific
    setting wins: namespace and kind, namespace, kind, default."""

    default: str = DEFAULT_FEASIBILITY_MODE
    kinds: Mapping[str, str] = field(default_factory=dict)
    # namespace -> mode for every kind, or {kind: mode}
    namespaces: Mapping[str, str | Mapping[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        spaces = {
            ns: ({ALL_KINDS: m} if isinstance(m, str) else dict(m)) for ns, m in self.namespaces.items()
        }
        modes = [self.default, *self.kinds.values(), *(m for per in spaces.values() for m in per.values())]
        bad = [m for m in modes if m not in FEASIBILITY_MODES]
        if bad:
            raise ValueError(f"feasibility mode {bad[0]!r} is not one of {', '.join(FEASIBILITY_MODES)}")
        object.__setattr__(self, "namespaces", spaces)

    def mode(self, kind: str, namespace: str | None) -> str:
        spaces: Mapping[str, Mapping[str, str]] = self.namespaces  # type: ignore[assignment]
        return _lookup(spaces, self.kinds, self.default, kind, namespace) or self.default


@dataclass(frozen=True)
class FeasibilitySettings:
    """What one policy sets of feasibility: only what it names (`default` None: not set)."""

    default: str | None = None
    kinds: Mapping[str, str] = field(default_factory=dict)
    namespaces: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # ns -> {kind | "*": mode}

    def mode(self, kind: str, namespace: str | None) -> str | None:
        """This policy's answer for a kind in a namespace, None when it sets nothing that applies."""
        return _lookup(self.namespaces, self.kinds, self.default, kind, namespace)

    @property
    def empty(self) -> bool:
        return self.default is None and not self.kinds and not self.namespaces


DEFAULT_ACKNOWLEDGE = "draguard.io/acknowledge-blast-radius"


@dataclass(frozen=True)
class TaintSettings:
    """What one policy sets of DeviceTaintRules' blast radius (None: no limit)."""

    max_devices: int | None = None
    max_pods: int | None = None
    acknowledge_annotation: str = DEFAULT_ACKNOWLEDGE


@dataclass(frozen=True)
class TaintPolicy:
    """The limits in force: a DeviceTaintRule tainting more than `max_devices` devices or evicting more
    than `max_pods` Pods is denied unless it carries each of `acknowledge` with the value "true"."""

    max_devices: int | None = None
    max_pods: int | None = None
    acknowledge: tuple[str, ...] = ()

    def over(self, devices: int, pods: int) -> list[str]:
        """The limits exceeded, as text (empty: within them)."""
        out = []
        if self.max_devices is not None and devices > self.max_devices:
            out.append(f"{devices} devices > maxDevices {self.max_devices}")
        if self.max_pods is not None and pods > self.max_pods:
            out.append(f"{pods} evicted Pods > maxPods {self.max_pods}")
        return out


def _least(values: Iterable[int | None]) -> int | None:
    given = [v for v in values if v is not None]
    return min(given) if given else None


def _taints(settings: Sequence[TaintSettings]) -> TaintPolicy:
    used = [s for s in settings if s.max_devices is not None or s.max_pods is not None]
    return TaintPolicy(
        _least(s.max_devices for s in used),
        _least(s.max_pods for s in used),
        tuple(sorted({s.acknowledge_annotation for s in used})),
    )


@dataclass(frozen=True)
class RbacPolicy:
    """`rbac:`: with `enforce_node_bound_status`, the webhook holds node-bound service accounts' ResourceClaim
    status updates to the node-aware rule of granular status authorization (webhook/admission/statusauthz.py)."""

    enforce_node_bound_status: bool = False


@dataclass(frozen=True)
class PolicySpec:
    """What one policy sets: its name ("" for a plain policy file), rule settings, feasibility, tenants."""

    name: str = ""
    rules: Mapping[str, RuleSetting] = field(default_factory=dict)
    feasibility: FeasibilitySettings = field(default_factory=FeasibilitySettings)
    tenants: tuple[Tenant, ...] = ()
    driver_schemas: tuple[DriverSchema, ...] = ()  # `driverSchemas`: opaque config parameters' schemas
    taints: TaintSettings | None = None
    rbac: RbacPolicy | None = None


@dataclass(frozen=True)
class Policy:
    disabled: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    feasibility: FeasibilityPolicy = field(default_factory=FeasibilityPolicy)
    tenants: tuple[Tenant, ...] = ()  # every tenant entry in force, by id
    sources: tuple[str, ...] = ()  # the names of the DraguardPolicies combined into this one
    driver_schemas: tuple[DriverSchema, ...] = ()  # every policy's; for one key, all of them apply
    taints: TaintPolicy = field(default_factory=TaintPolicy)
    rbac: RbacPolicy = field(default_factory=RbacPolicy)

    def enabled(self, rule_id: str) -> bool:
        return rule_id not in self.disabled

    def apply(self, violations: list[Violation]) -> list[Violation]:
        """Drop disabled rules' violations and re-grade the rest."""
        if not self.disabled and not self.severity:
            return violations
        out = []
        for v in violations:
            if v.rule in self.disabled:
                continue
            sev = self.severity.get(v.rule)
            out.append(v if sev is None or sev is v.severity else replace(v, severity=sev))
        return out


def strictest_mode(modes: Iterable[str | None]) -> str | None:
    """enforce > warn > off; None when no mode is given."""
    given = [m for m in modes if m is not None]
    return max(given, key=_MODE_RANK.__getitem__) if given else None


def strictest_setting(settings: Iterable[RuleSetting]) -> RuleSetting:
    return max(settings, key=_RULE_RANK.__getitem__)


def _feasibility(settings: Sequence[FeasibilitySettings]) -> FeasibilityPolicy:
    used = [s for s in settings if not s.empty]
    if not used:
        return FeasibilityPolicy()
    if len(used) == 1:  # one policy: its own settings, as written
        (one,) = used
        return FeasibilityPolicy(
            one.default or DEFAULT_FEASIBILITY_MODE, dict(one.kinds), dict(one.namespaces)
        )

    def strictest(kind: str, namespace: str | None) -> str:
        return strictest_mode(s.mode(kind, namespace) for s in used) or DEFAULT_FEASIBILITY_MODE

    # every kind the webhook checks, in every namespace some policy names and elsewhere: each value is the
    # strictest of the policies' own answers there, so `mode()` gives exactly that
    spaces = sorted({ns for s in used for ns in s.namespaces})
    return FeasibilityPolicy(
        strictest_mode(s.default for s in used) or DEFAULT_FEASIBILITY_MODE,
        {k: strictest(k, None) for k in FEASIBILITY_KINDS},
        {ns: {k: strictest(k, ns) for k in FEASIBILITY_KINDS} for ns in spaces},
    )


def combine(specs: Iterable[PolicySpec]) -> Policy:
    """The policy in force when all of `specs` apply: the most restrictive setting wins (module
    docstring). The order of `specs` does not matter."""
    specs = list(specs)
    rules: dict[str, list[RuleSetting]] = {}
    for s in specs:
        for rule_id, setting in s.rules.items():
            rules.setdefault(rule_id, []).append(setting)
    disabled: set[str] = set()
    severity: dict[str, Severity] = {}
    for rule_id in sorted(rules):
        setting = strictest_setting(rules[rule_id])
        if setting == "off":
            disabled.add(rule_id)
        else:
            severity[rule_id] = Severity(setting)
    tenants = sorted((t for s in specs for t in s.tenants), key=lambda t: t.id)
    return Policy(
        frozenset(disabled),
        severity,
        _feasibility([s.feasibility for s in specs]),
        tuple(tenants),
        tuple(sorted({s.name for s in specs if s.name})),
        tuple(sorted((d for s in specs for d in s.driver_schemas), key=lambda d: d.source)),
        _taints([s.taints for s in specs if s.taints is not None]),
        RbacPolicy(any(s.rbac is not None and s.rbac.enforce_node_bound_status for s in specs)),
    )
