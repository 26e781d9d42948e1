"""The DRA hardening checks on a cluster's RBAC (kubernetes.io: "Hardening Guide - Dynamic Resource
Allocation", "Good practices for Dynamic Resource Allocation as a Cluster Admin"): who may write
ResourceSlices and DeviceClasses, who may change ResourceClaim status beyond what a node-local driver needs
(the synthetic `resourceclaims/binding` and `resourceclaims/driver` subresources and the
`associated-node:`/`arbitrary-node:` verbs of DRAResourceClaimGranularStatusAuthorization, or plain
`resourceclaims/status` without it), who may write DeviceTaintRules, and who may set or use the
admin-access namespace label. Each finding names the subject, binding, role and rule, and the fix."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from webhook.audit.rbac.authz import ALL, SA_GROUP, Grant, Rbac, Ref, Rule, Subject
from webhook.model.violation import Severity

DRA = "resource.k8s.io"
GRANULAR_GATE = "DRAResourceClaimGranularStatusAuthorization"
ADMIN_LABEL = "resource.kubernetes.io/admin-access"
NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"
WRITE = ("create", "update", "patch", "delete", "deletecollection")
STATUS_WRITE = ("update", "patch")


class Check(StrEnum):
    SLICE_WRITE = "resourceslice.write-any-node"
    CLASS_WRITE = "deviceclass.write"
    STATUS_UNGATED = "claim-status.ungated"
    BINDING = "claim-status.binding"
    DRIVER_ARBITRARY_NODE = "claim-status.driver-arbitrary-node"
    DRIVER_ANY_DRIVER = "claim-status.driver-any-driver"
    TAINT_RULE_WRITE = "devicetaintrule.write"
    ADMIN_LABEL = "admin-access.label"
    ADMIN_USE = "admin-access.use"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class RbacFinding:
    check: Check
    severity: Severity
    subject: Subject
    binding: Ref
    role: Ref
    rule: Rule
    hazard: str
    fix: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check.value,
            "severity": self.severity.value,
            "subject": {
                "kind": self.subject.kind,
                "name": self.subject.name,
                "namespace": self.subject.namespace,
            },
            "binding": {
                "kind": self.binding.kind,
                "name": self.binding.name,
                "namespace": self.binding.namespace,
            },
            "role": {"kind": self.role.kind, "name": self.role.name, "namespace": self.role.namespace},
            "rule": {"index": self.rule.index, "text": self.rule.text()},
            "hazard": self.hazard,
            "fix": self.fix,
        }


@dataclass
class RbacReport:
    granular: bool  # DRAResourceClaimGranularStatusAuthorization on in the target cluster
    findings: list[RbacFinding] = field(default_factory=list)
    built_in: int = 0  # grants to the control plane's own identities, not judged
    admins: list[str] = field(default_factory=list)  # cluster admins (every verb on everything): not judged
    unread: list[str] = field(default_factory=list)  # RBAC objects the API server would reject: not judged

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    @property
    def exit_code(self) -> int:
        """1 when anything is a warning or an error (info: admins, node-bound drivers, listings)."""
        return 1 if self.unread or any(f.severity != Severity.INFO for f in self.findings) else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "granularStatusAuthorization": self.granular,
            "summary": self.counts(),
            "builtInGrantsSkipped": self.built_in,
            "clusterAdmins": self.admins,
            "unread": self.unread,
            "findings": [f.to_dict() for f in self.findings],
        }


# The control plane's identities (bootstrap RBAC and the node authorizer keep them in check upstream).
BUILT_IN_USERS = frozenset({"system:kube-scheduler", "system:kube-controller-manager", "system:apiserver"})
BUILT_IN_GROUPS = frozenset({"system:masters", "system:nodes"})
BROAD_GROUPS = frozenset({"system:authenticated", "system:unauthenticated", SA_GROUP})


def built_in(g: Grant) -> bool:
    s = g.subject
    if s.kind == "User":
        return s.name in BUILT_IN_USERS or s.name.startswith("system:node:")
    if s.kind == "Group":
        return s.name in BUILT_IN_GROUPS
    # kube-controller-manager's controllers: kube-system service accounts under the bootstrap bindings
    return s.namespace == "kube-system" and g.binding.ref.name.startswith("system:")


def broad(s: Subject) -> bool:
    """Everyone, every service account, or every one of a namespace."""
    if s.kind == "Group":
        return s.name in BROAD_GROUPS or s.name.startswith(SA_GROUP + ":")
    return s.kind == "User" and s.name == "system:anonymous"


def _admin(grants: Sequence[Grant]) -> bool:
    """A cluster admin: some rule grants every verb on every resource of every group, cluster-wide."""
    return any(
        not g.binding.namespace
        and g.rule.verbs == (ALL,)
        and ALL in g.rule.api_groups
        and ALL in g.rule.resources
        and not g.rule.resource_names
        for g in grants
    )


CLUSTER_SCOPED = frozenset({"resourceslices", "deviceclasses", "devicetaintrules"})


def _allowed(
    g: Grant, verbs: Iterable[str], resource: str, sub: str = "", name: str | None = None
) -> list[str]:
    """The `verbs` this grant allows on a DRA resource (a namespaced one in the binding's namespace, a
    cluster-scoped one only through a ClusterRoleBinding); `name` None: some name (a rule with
    resourceNames counts), '' none (a rule with resourceNames does not)."""
    some = g.rule.resource_names[0] if name is None and g.rule.resource_names else (name or "")
    ns = "" if resource in CLUSTER_SCOPED else g.binding.namespace
    return [v for v in verbs if g.allows(v, DRA, resource, sub, ns, some)]


def _node_bound(rbac: Rbac) -> set[str]:
    """User names a ValidatingAdmissionPolicy ties to their node for ResourceSlices: bound with the Deny
    action, its rules cover resourceslices, one of its expressions names the user (a quoted
    system:serviceaccount: name), one reads the token's node-name extra — the pattern the
    dra-example-driver, Intel and NVIDIA charts ship. (Its CEL is not evaluated: a policy naming another
    user, as a chart's default can, leaves this one unbound.)"""
    bound_policies = {
        str((o.get("spec") or {}).get("policyName", ""))
        for o in rbac.objects
        if o.get("kind") == "ValidatingAdmissionPolicyBinding"
        and "Deny" in ((o.get("spec") or {}).get("validationActions") or [])
    }
    users: set[str] = set()
    for o in rbac.objects:
        meta = o.get("metadata") or {}
        if o.get("kind") != "ValidatingAdmissionPolicy" or meta.get("name") not in bound_policies:
            continue
        spec = o.get("spec") or {}
        rules = ((spec.get("matchConstraints") or {}).get("resourceRules")) or []
        if not any(
            "resourceslices" in (r.get("resources") or []) or ALL in (r.get("resources") or []) for r in rules
        ):
            continue
        texts = [
            str(c.get("expression", ""))
            for key in ("matchConditions", "validations", "variables")
            for c in spec.get(key) or []
        ]
        if not any(NODE_NAME_EXTRA in t for t in texts):
            continue
        for t in texts:
            users.update(_quoted_users(t))
    return users


def _quoted_users(text: str) -> set[str]:
    out: set[str] = set()
    for quote in ('"', "'"):
        parts = text.split(quote)
        out.update(p for p in parts[1::2] if p.startswith("system:serviceaccount:"))
    return out


def check(rbac: Rbac, granular: bool) -> RbacReport:
    """Every finding of the cluster's RBAC (errors first, then by check, subject, binding: the same
    whatever order the objects came in); `granular`: the target API server
    authorizes status writes per synthetic subresource (1.36+ with the gate on)."""
    report = RbacReport(granular, unread=list(rbac.unread))
    grants = rbac.grants()
    by_subject: dict[Subject, list[Grant]] = {}
    for g in grants:
        by_subject.setdefault(g.subject, []).append(g)
    node_bound = _node_bound(rbac)
    admin_ns = sorted(n for n, labels in rbac.namespaces.items() if labels.get(ADMIN_LABEL) == "true")
    admins = {s for s, mine in by_subject.items() if _admin(mine)}
    seen: set[tuple[Check, Subject, Ref, Ref, int]] = set()
    for g in grants:
        if built_in(g):
            report.built_in += 1
            continue
        if g.subject in admins:
            if str(g.subject) not in report.admins:
                report.admins.append(str(g.subject))
            continue
        mine = by_subject[g.subject]
        for chk, sev, hazard, fix in _judge(g, mine, granular, node_bound, admin_ns):
            key = (chk, g.subject, g.binding.ref, g.role, g.rule.index)
            if key in seen:
                continue
            seen.add(key)
            if broad(g.subject) and sev == Severity.WARNING:
                sev = Severity.ERROR
            report.findings.append(
                RbacFinding(chk, sev, g.subject, g.binding.ref, g.role, g.rule, hazard, fix)
            )
    rank = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    report.findings.sort(
        key=lambda f: (
            rank[f.severity],
            f.check.value,
            str(f.subject),
            str(f.binding),
            str(f.role),
            f.rule.index,
        )
    )
    return report


Judged = tuple[Check, Severity, str, str]


def _person(s: Subject) -> bool:
    return s.kind != "ServiceAccount"


def _judge(
    g: Grant, mine: Sequence[Grant], granular: bool, node_bound: set[str], admin_ns: Sequence[str]
) -> Iterable[Judged]:
    s = g.subject
    yield from _slices(g, node_bound)
    verbs = _allowed(g, WRITE, "deviceclasses")
    if verbs and _person(s):
        yield (
            Check.CLASS_WRITE,
            Severity.WARNING,
            f"may {'/'.join(verbs)} DeviceClasses: what every claim of the cluster selects and the "
            "configuration the drivers get",
            "DeviceClasses are for cluster admins and the DRA drivers' installers (upstream good practice): "
            "drop the DeviceClass write verbs from this role, or bind it to the admins only",
        )
    status = any(_allowed(x, STATUS_WRITE, "resourceclaims", "status") for x in mine)
    if granular:
        if status:
            yield from _synthetic(g)
    else:
        verbs = _allowed(g, STATUS_WRITE, "resourceclaims", "status")
        if verbs:
            yield (
                Check.STATUS_UNGATED,
                Severity.ERROR if _person(s) else Severity.WARNING,
                f"may {'/'.join(verbs)} resourceclaims/status without {GRANULAR_GATE}: status.allocation, "
                "status.reservedFor and status.devices of every driver, for claims on every node"
                + (f" of namespace {g.binding.namespace}" if g.binding.namespace else ""),
                f"on 1.36+ keep {GRANULAR_GATE} on and grant resourceclaims/driver with verbs "
                '["associated-node:update", "associated-node:patch"] and resourceNames [the driver\'s name]; '
                "without it (1.35), turn on draguard's `rbac: {enforceNodeBoundStatus: true}` policy so the "
                "webhook holds node-bound service accounts to claims on their node"
                if not _person(s)
                else "only the scheduler, allocation controllers and the DRA drivers' service accounts update "
                "ResourceClaim status: drop update/patch on resourceclaims/status from this role",
            )
    verbs = _allowed(g, ("create", "update", "patch"), "devicetaintrules")
    if verbs:
        yield (
            Check.TAINT_RULE_WRITE,
            Severity.WARNING,
            f"may {'/'.join(verbs)} DeviceTaintRules: a NoExecute taint evicts every Pod using the devices it "
            "selects, in every namespace",
            "DeviceTaintRule writes only for cluster admins (a health controller that must taint devices: "
            "its own service account, and its role limited to the verbs it uses)",
        )
    yield from _admin_access(g, mine, admin_ns)


def _slices(g: Grant, node_bound: set[str]) -> Iterable[Judged]:
    verbs = _allowed(g, WRITE, "resourceslices")
    if not verbs:
        return
    s = g.subject
    hazard = (
        f"may {'/'.join(verbs)} ResourceSlices for any node: publish, change or remove the devices of every "
        "node and driver (the scheduler allocates what the slices say)"
    )
    if _person(s):
        yield (
            Check.SLICE_WRITE,
            Severity.ERROR,
            hazard,
            "ResourceSlices are for the DRA drivers and cluster admins (upstream good practice): drop the "
            "ResourceSlice write verbs from this role",
        )
    elif s.username() in node_bound:
        yield (
            Check.SLICE_WRITE,
            Severity.INFO,
            hazard + "; a ValidatingAdmissionPolicy ties this service account to its own node's slices",
            "none needed: node-bound by the ValidatingAdmissionPolicy",
        )
    else:
        yield (
            Check.SLICE_WRITE,
            Severity.WARNING,
            hazard,
            "keep ResourceSlice writes to the driver's kubelet-plugin service account and node-bind them: a "
            "ValidatingAdmissionPolicy (and binding) matching this service account's user name that "
            f"requires request.userInfo.extra['{NODE_NAME_EXTRA}'][0] == spec.nodeName (the pattern the "
            "dra-example-driver chart ships); a controller publishing network-attached pools is the one "
            "exception, then with its own service account",
        )


def _synthetic(g: Grant) -> Iterable[Judged]:
    """With granular status authorization: the synthetic subresources a status writer holds."""
    s = g.subject
    verbs = [v for v in STATUS_WRITE if g.allows(v, DRA, "resourceclaims", "binding", "", "")]
    if verbs:
        yield (
            Check.BINDING,
            Severity.ERROR if _person(s) else Severity.WARNING,
            f"may {'/'.join(verbs)} resourceclaims/binding: write status.allocation and status.reservedFor of "
            "any claim (allocate devices and reserve claims past the scheduler)",
            "resourceclaims/binding is for kube-scheduler and custom allocation controllers only: if this "
            "subject is neither, drop the rule; a node-local driver needs resourceclaims/driver with "
            '["associated-node:update", "associated-node:patch"], never binding',
        )
    arbitrary = [v for v in STATUS_WRITE if _allowed(g, ["arbitrary-node:" + v], "resourceclaims", "driver")]
    names = g.rule.resource_names
    which = f"driver{'s' if len(names) > 1 else ''} {', '.join(names)}" if names else "every driver"
    if arbitrary:
        yield (
            Check.DRIVER_ARBITRARY_NODE,
            Severity.ERROR if _person(s) else Severity.WARNING,
            f"may {'/'.join('arbitrary-node:' + v for v in arbitrary)} resourceclaims/driver for {which}: write "
            "status.devices of claims allocated on any node"
            + (f" (the rule's verbs {list(g.rule.verbs)} include it)" if ALL in g.rule.verbs else ""),
            "a node-local driver: grant resourceclaims/driver with verbs "
            '["associated-node:update", "associated-node:patch"] instead'
            + ("" if names else " and resourceNames [the driver's name]")
            + "; arbitrary-node only for a multi-node status controller, with resourceNames [its driver]",
        )
    elif not names and any(
        _allowed(g, ["associated-node:" + v], "resourceclaims", "driver") for v in STATUS_WRITE
    ):
        yield (
            Check.DRIVER_ANY_DRIVER,
            Severity.WARNING,
            "may write status.devices of every driver on its node (resourceclaims/driver without resourceNames)",
            "restrict the rule with resourceNames [the driver's name]",
        )


def _admin_access(g: Grant, mine: Sequence[Grant], admin_ns: Sequence[str]) -> Iterable[Judged]:
    label = [v for v in ("patch", "update") if _namespace_names(g, v)]
    if label:
        names = sorted({n for v in label for n in _namespace_names(g, v)})
        where = (
            "every namespace"
            if names == [ALL]
            else "namespace" + ("s " if len(names) > 1 else " ") + ", ".join(names)
        )
        claims = _may_create_claims(mine, names)
        yield (
            Check.ADMIN_LABEL,
            Severity.WARNING if claims else Severity.INFO,
            f"may {'/'.join(label)} {where}: set the {ADMIN_LABEL}=true label"
            + (
                ", then create claims with adminAccess there (access to devices in use by others)"
                if claims
                else " (no claim creation there through these roles)"
            ),
            f"treat {ADMIN_LABEL} like pod-security.kubernetes.io/enforce: leave namespace update/patch to "
            "cluster admins, or deny changes of that label except from admins with a "
            "ValidatingAdmissionPolicy",
        )
    for ns in admin_ns:
        verbs = [
            f"{v} {r}"
            for r in ("resourceclaims", "resourceclaimtemplates")
            for v in ("create",)
            if g.allows(v, DRA, r, "", ns, "")
        ]
        if verbs:
            yield (
                Check.ADMIN_USE,
                Severity.INFO,
                f"may {' and '.join(verbs)} in namespace {ns}, labelled {ADMIN_LABEL}=true: claims with "
                "adminAccess (access to devices already allocated to others)",
                "none if this subject is meant to monitor devices; otherwise bind its role in another namespace",
            )


def _namespace_names(g: Grant, verb: str) -> list[str]:
    """The Namespace objects this grant lets `verb` change (['*']: every one). A Namespace is in itself
    (the API server's request info), so a RoleBinding reaches only its own namespace."""
    names = g.rule.resource_names
    if g.binding.namespace:
        ns = g.binding.namespace
        return [ns] if g.rule.grants(verb, "", "namespaces", "", ns) else []
    if not g.rule.grants(verb, "", "namespaces", "", names[0] if names else ""):
        return []
    return list(names) or [ALL]


def _may_create_claims(mine: Sequence[Grant], names: Sequence[str]) -> bool:
    """Whether these grants create a ResourceClaim or template in one of `names` ('*': any namespace)."""
    for x in mine:
        for ns in names:
            target = (x.binding.namespace or "default") if ns == ALL else ns
            if any(
                x.allows("create", DRA, r, "", target, "")
                for r in ("resourceclaims", "resourceclaimtemplates")
            ):
                return True
    return False


def granular_from(enabled: Mapping[str, bool], version: str) -> bool:
    """Whether status writes are authorized per synthetic subresource: the gate (1.36+) on."""
    return version != "1.35" and enabled.get(GRANULAR_GATE, False)
