"""The RBAC authorizer's semantics on plain objects: Roles, ClusterRoles (aggregation included), their
bindings and subjects, and whether one rule grants one request — as kube-apiserver's RBAC authorizer
decides it (rbac/v1 helpers: `*` verbs, groups and resources; `*/sub` subresource wildcards; resourceNames
restricting; a RoleBinding granting only in its namespace; nonResourceURLs never granting a resource)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from webhook.config.labelselector import LabelSelector, Requirement

RBAC_GROUP = "rbac.authorization.k8s.io"
ALL = "*"
SA_PREFIX = "system:serviceaccount:"
SA_GROUP = "system:serviceaccounts"

RoleKind = Literal["Role", "ClusterRole"]
BindingKind = Literal["RoleBinding", "ClusterRoleBinding"]
SubjectKind = Literal["User", "Group", "ServiceAccount"]


@dataclass(frozen=True)
class Rule:
    """One PolicyRule (`index`: its place in the role's `rules`, as written or aggregated)."""

    index: int
    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    resource_names: tuple[str, ...]
    non_resource_urls: tuple[str, ...] = ()

    def text(self) -> str:
        """The rule as a reader finds it in the YAML (flow style, empty lists left out)."""
        parts = [f"apiGroups: {_flow(self.api_groups)}", f"resources: {_flow(self.resources)}"]
        if self.resource_names:
            parts.append(f"resourceNames: {_flow(self.resource_names)}")
        if self.non_resource_urls:
            parts.append(f"nonResourceURLs: {_flow(self.non_resource_urls)}")
        parts.append(f"verbs: {_flow(self.verbs)}")
        return "{" + ", ".join(parts) + "}"

    def grants(self, verb: str, group: str, resource: str, subresource: str = "", name: str = "") -> bool:
        """Whether this rule allows the request (the namespace is the binding's business)."""
        return (
            _verb_matches(self.verbs, verb)
            and (ALL in self.api_groups or group in self.api_groups)
            and _resource_matches(self.resources, resource, subresource)
            and (not self.resource_names or name in self.resource_names)
        )


def _flow(items: Sequence[str]) -> str:
    return "[" + ", ".join(f'"{i}"' for i in items) + "]"


def _verb_matches(verbs: Sequence[str], verb: str) -> bool:
    return ALL in verbs or verb in verbs


def _resource_matches(resources: Sequence[str], resource: str, subresource: str) -> bool:
    """rbac/v1 ResourceMatches: `*`; the exact `resource[/subresource]`; `*/subresource` for a
    subresource. (`resource/*` is no wildcard upstream: it matches nothing but itself.)"""
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in resources:
        if r == ALL or r == combined:
            return True
        if subresource and r == f"*/{subresource}":
            return True
    return False


@dataclass(frozen=True)
class Ref:
    """A role or binding, as a finding names it."""

    kind: str
    name: str
    namespace: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass(frozen=True)
class Subject:
    kind: SubjectKind
    name: str
    namespace: str = ""  # a ServiceAccount's

    def username(self) -> str:
        """The user name a ServiceAccount authenticates as; a User's name; '' for a Group."""
        if self.kind == "ServiceAccount":
            return f"{SA_PREFIX}{self.namespace}:{self.name}"
        return self.name if self.kind == "User" else ""

    def __str__(self) -> str:
        if self.kind == "ServiceAccount":
            return f"ServiceAccount {self.namespace}/{self.name}"
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class Role:
    ref: Ref
    rules: tuple[Rule, ...]
    labels: Mapping[str, str]
    aggregation: tuple[LabelSelector, ...] | None = None  # a ClusterRole's aggregationRule


@dataclass(frozen=True)
class Binding:
    ref: Ref
    role: Ref  # resolved: a RoleBinding's ClusterRole has no namespace, its Role the binding's
    subjects: tuple[Subject, ...]

    @property
    def namespace(self) -> str:
        """The namespace the binding grants in; '' for a ClusterRoleBinding (every namespace, and
        cluster-scoped resources)."""
        return self.ref.namespace if self.ref.kind == "RoleBinding" else ""


@dataclass(frozen=True)
class Grant:
    """One rule reaching one subject through one binding."""

    subject: Subject
    binding: Binding
    role: Ref
    rule: Rule

    def allows(
        self, verb: str, group: str, resource: str, subresource: str = "", namespace: str = "", name: str = ""
    ) -> bool:
        """Whether this grant allows the request: a RoleBinding only in its own namespace (so never a
        cluster-scoped resource; a Namespace object counts as in itself, as the API server's request info
        says)."""
        if self.binding.namespace and self.binding.namespace != namespace:
            return False
        return self.rule.grants(verb, group, resource, subresource, name)


@dataclass
class Rbac:
    roles: dict[Ref, Role]
    bindings: list[Binding]
    namespaces: dict[str, Mapping[str, str]]  # name → labels (for the admin-access label)
    objects: list[Mapping[str, Any]]  # everything else read (ValidatingAdmissionPolicies, ...)
    unread: list[str] = field(default_factory=list)  # RBAC objects the API server would reject, and why

    def grants(self) -> list[Grant]:
        """Every (subject, binding, role, rule), bindings in input order; a binding to a missing role
        grants nothing (as upstream: the authorizer skips it)."""
        out: list[Grant] = []
        for b in self.bindings:
            role = self.roles.get(b.role)
            if role is None:
                continue
            for s in b.subjects:
                out.extend(Grant(s, b, role.ref, r) for r in role.rules)
        return out


def _strings(v: Any) -> tuple[str, ...]:
    return tuple(str(x) for x in v) if isinstance(v, list) else ()


def _rules(data: Any) -> tuple[Rule, ...]:
    out = []
    for i, r in enumerate(data if isinstance(data, list) else []):
        if not isinstance(r, Mapping):
            continue
        out.append(
            Rule(
                i,
                _strings(r.get("verbs")),
                _strings(r.get("apiGroups")),
                _strings(r.get("resources")),
                _strings(r.get("resourceNames")),
                _strings(r.get("nonResourceURLs")),
            )
        )
    return tuple(out)


_RULE_LISTS = ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs")


def _malformed_role(obj: Mapping[str, Any]) -> str:
    """Why the API server would reject a Role's or ClusterRole's rules ('' when it would not)."""
    rules = obj.get("rules")
    if rules is None:
        return ""
    if not isinstance(rules, list):
        return "rules is not a list"
    for i, r in enumerate(rules):
        if not isinstance(r, Mapping):
            return f"rules[{i}] is not an object"
        for f in _RULE_LISTS:
            v = r.get(f)
            if v is not None and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                return f"rules[{i}].{f} is not a list of strings"
    return ""


def _malformed_binding(obj: Mapping[str, Any]) -> str:
    """Why the API server would reject a binding's roleRef or subjects ('' when it would not)."""
    ref = obj.get("roleRef")
    if not isinstance(ref, Mapping) or ref.get("kind") not in ("Role", "ClusterRole") or not ref.get("name"):
        return "roleRef is not a Role or ClusterRole with a name"
    subs = obj.get("subjects")
    if subs is None:
        return ""
    if not isinstance(subs, list):
        return "subjects is not a list"
    for i, x in enumerate(subs):
        if (
            not isinstance(x, Mapping)
            or x.get("kind") not in ("User", "Group", "ServiceAccount")
            or not x.get("name")
        ):
            return f"subjects[{i}] is not a User, Group or ServiceAccount with a name"
    return ""


def _selector(data: Any) -> LabelSelector:
    labels = data.get("matchLabels") if isinstance(data, Mapping) else None
    exprs = data.get("matchExpressions") if isinstance(data, Mapping) else None
    reqs = []
    for e in exprs if isinstance(exprs, list) else []:
        if isinstance(e, Mapping) and e.get("operator") in ("In", "NotIn", "Exists", "DoesNotExist"):
            reqs.append(
                Requirement(str(e.get("key", "")), e["operator"], frozenset(_strings(e.get("values"))))
            )
    pairs = tuple(sorted((str(k), str(v)) for k, v in labels.items())) if isinstance(labels, Mapping) else ()
    return LabelSelector(pairs, tuple(reqs))


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels = _meta(obj).get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}


def _subject(s: Any, binding_ns: str) -> Subject | None:
    if not isinstance(s, Mapping) or s.get("kind") not in ("User", "Group", "ServiceAccount"):
        return None
    ns = str(s.get("namespace") or "")
    if s["kind"] == "ServiceAccount" and not ns:
        ns = binding_ns  # upstream: a ServiceAccount subject without a namespace is the binding's
    return Subject(s["kind"], str(s.get("name", "")), ns if s["kind"] == "ServiceAccount" else "")


def load(objects: Iterable[Mapping[str, Any]]) -> Rbac:
    """The RBAC objects (and Namespaces) among `objects`; an aggregated ClusterRole's rules replaced as the
    clusterrole-aggregation controller replaces them: for each selector in turn, the rules of the other
    ClusterRoles it matches, by name, each rule once (its own rules are overwritten upstream; a live
    cluster's copy already holds the union, so the result is the same; an empty selector selects every
    ClusterRole, as a label selector does)."""
    roles: dict[Ref, Role] = {}
    bindings: list[Binding] = []
    namespaces: dict[str, Mapping[str, str]] = {}
    rest: list[Mapping[str, Any]] = []
    unread: list[str] = []
    for obj in objects:
        kind, api = obj.get("kind"), str(obj.get("apiVersion", ""))
        name, ns = str(_meta(obj).get("name", "")), str(_meta(obj).get("namespace") or "")
        if kind == "Namespace" and api == "v1":
            namespaces[name] = _labels(obj)
        elif (
            api.startswith(RBAC_GROUP + "/")
            and kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
            and (why := (_malformed_role if kind in ("Role", "ClusterRole") else _malformed_binding)(obj))
        ):
            unread.append(f"{Ref(str(kind), name, ns if kind in ('Role', 'RoleBinding') else '')}: {why}")
        elif api.startswith(RBAC_GROUP + "/") and kind in ("Role", "ClusterRole"):
            agg = obj.get("aggregationRule")
            selectors = None
            if kind == "ClusterRole" and isinstance(agg, Mapping):
                sel = agg.get("clusterRoleSelectors")
                selectors = tuple(_selector(s) for s in (sel if isinstance(sel, list) else []))
            ref = Ref(kind, name, ns if kind == "Role" else "")
            roles[ref] = Role(ref, _rules(obj.get("rules")), _labels(obj), selectors)
        elif api.startswith(RBAC_GROUP + "/") and kind in ("RoleBinding", "ClusterRoleBinding"):
            role_ref = obj.get("roleRef")
            if not isinstance(role_ref, Mapping) or role_ref.get("kind") not in ("Role", "ClusterRole"):
                continue
            bns = ns if kind == "RoleBinding" else ""
            target = Ref(
                str(role_ref["kind"]),
                str(role_ref.get("name", "")),
                bns if role_ref["kind"] == "Role" else "",
            )
            subs = obj.get("subjects")
            subjects = tuple(
                s
                for s in (_subject(x, bns) for x in (subs if isinstance(subs, list) else []))
                if s is not None
            )
            bindings.append(Binding(Ref(kind, name, bns), target, subjects))
        else:
            rest.append(obj)
    return Rbac(_aggregate(roles), bindings, namespaces, rest, unread)


def _aggregate(roles: dict[Ref, Role]) -> dict[Ref, Role]:
    out = dict(roles)
    cluster_roles = sorted(
        (r for r in roles.values() if r.ref.kind == "ClusterRole"), key=lambda r: r.ref.name
    )
    for ref, role in roles.items():
        if role.aggregation is None:
            continue
        rules: list[Rule] = []
        seen: set[tuple[tuple[str, ...], ...]] = set()
        for sel in role.aggregation:  # each selector's ClusterRoles by name, itself left out
            for other in cluster_roles:
                if other.ref == ref or not sel.matches(other.labels):
                    continue
                for r in other.rules:
                    key = (r.verbs, r.api_groups, r.resources, r.resource_names, r.non_resource_urls)
                    if key not in seen:
                        seen.add(key)
                        rules.append(Rule(len(rules), *key))
        out[ref] = Role(ref, tuple(rules), role.labels, role.aggregation)
    return out
