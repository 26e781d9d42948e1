"""Which webhooks the API server calls for a write: webhook configuration defaults, rule matching (operations,
groups, versions, resources with subresources and wildcards, scope), label selectors, the namespace and
object selectors, and matchPolicy Equivalent's other versions of a resource.

Ported from k8s.io/apiserver (behaviour, not text): `admission/plugin/webhook/predicates/rules/rules.go`,
`predicates/namespace/matcher.go`, `predicates/object/matcher.go`, `generic/webhook.go` (ShouldCallHook),
apimachinery `labels/selector.go` and `apis/meta/v1/helpers.go` (LabelSelectorAsSelector), and the v1
defaults of `admissionregistration.k8s.io` (`pkg/apis/admissionregistration/v1/defaults.go`).
Plain dicts in, plain values out; every failure the API server turns into a Status is a `StatusFailure`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DRA = "resource.k8s.io"
NAMESPACES = {"group": "", "version": "v1", "resource": "namespaces"}
EXEMPT_KINDS = frozenset(
    {
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    }
)

# resource.k8s.io versions of each resource, preferred first (the order the API server registers them,
# which is the order matchPolicy Equivalent tries them in); kinds are the same in every version.
DRA_VERSIONS: dict[str, tuple[str, ...]] = {
    "resourceslices": ("v1", "v1beta2", "v1beta1"),
    "deviceclasses": ("v1", "v1beta2", "v1beta1"),
    "resourceclaims": ("v1", "v1beta2", "v1beta1"),
    "resourceclaimtemplates": ("v1", "v1beta2", "v1beta1"),
    "devicetaintrules": ("v1", "v1beta2", "v1alpha3"),
}
DRA_KINDS = {
    "resourceslices": "ResourceSlice",
    "deviceclasses": "DeviceClass",
    "resourceclaims": "ResourceClaim",
    "resourceclaimtemplates": "ResourceClaimTemplate",
    "devicetaintrules": "DeviceTaintRule",
}


class StatusFailure(Exception):
    """An error the API server answers with this Status (code, reason, message, details)."""

    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(status["message"])
        self.status = status


def status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A metav1.Status as the API server writes it."""
    s: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        s["details"] = details
    return s


def internal_error(message: str) -> dict[str, Any]:
    """apierrors.NewInternalError(err)."""
    return status(
        500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]}
    )


def group_resource(gvr: dict[str, str]) -> str:
    """schema.GroupResource.String(): `resourceclaims.resource.k8s.io`, `pods`."""
    return f"{gvr['resource']}.{gvr['group']}" if gvr.get("group") else gvr["resource"]


def forbidden(gvr: dict[str, str], name: str, message: str) -> dict[str, Any]:
    """apierrors.NewForbidden(groupResource, name, err)."""
    gr = group_resource(gvr)
    what = f'{gr} "{name}"' if name else gr
    details: dict[str, Any] = {"name": name, "kind": gvr["resource"]}
    if gvr.get("group"):
        details["group"] = gvr["group"]
    return status(403, "Forbidden", f"{what} is forbidden: {message}", details)


# ---------------------------------------------------------------------------------------------------------
# webhook defaults (admissionregistration.k8s.io/v1)


def defaulted(webhook: dict[str, Any], mutating: bool) -> dict[str, Any]:
    """The webhook as the API server stores it: v1 defaults applied (the rendered YAML carries only what
    its author wrote)."""
    w = copy.deepcopy(webhook)
    w.setdefault("failurePolicy", "Fail")
    w.setdefault("matchPolicy", "Equivalent")
    if w.get("namespaceSelector") is None:
        w["namespaceSelector"] = {}
    if w.get("objectSelector") is None:
        w["objectSelector"] = {}
    w.setdefault("timeoutSeconds", 10)
    if mutating:
        w.setdefault("reinvocationPolicy", "Never")
    service = w.get("clientConfig", {}).get("service")
    if service is not None:
        service.setdefault("port", 443)
    for rule in w.get("rules") or []:
        rule.setdefault("scope", "*")
    return w


# ---------------------------------------------------------------------------------------------------------
# rules


@dataclass(frozen=True)
class Request:
    """What the rule matcher reads of a write (admission.Attributes)."""

    operation: str  # CREATE | UPDATE | DELETE | CONNECT
    resource: dict[str, str]  # {"group", "version", "resource"}
    sub_resource: str
    namespace: str  # "" for cluster-scoped writes; the namespace's own name for Namespace objects


def _exact_or_wildcard(items: list[str], requested: str) -> bool:
    return any(item == "*" or item == requested for item in items)


def _scope(rule: dict[str, Any], req: Request) -> bool:
    scope = rule.get("scope") or "*"
    if scope == "*":
        return True
    is_namespace = req.resource == NAMESPACES
    if scope == "Namespaced":  # a Namespace object is cluster-scoped even though its namespace is set
        return not is_namespace and req.namespace != ""
    if scope == "Cluster":
        return is_namespace or req.namespace == ""
    return False


def _resource(rule: dict[str, Any], req: Request) -> bool:
    for item in rule.get("resources") or []:
        res, _, sub = item.partition("/")
        if (res == "*" or res == req.resource["resource"]) and (sub == "*" or sub == req.sub_resource):
            return True
    return False


def rule_matches(rule: dict[str, Any], req: Request) -> bool:
    """rules.Matcher.Matches: scope, operation, group, version and resource[/subresource]. `*` as a
    resource matches every resource but no subresource; `x/*` every subresource of x; `*/*` all."""
    return (
        _scope(rule, req)
        and any(op == "*" or op == req.operation for op in rule.get("operations") or [])
        and _exact_or_wildcard(rule.get("apiGroups") or [], req.resource["group"])
        and _exact_or_wildcard(rule.get("apiVersions") or [], req.resource["version"])
        and _resource(rule, req)
    )


def equivalents(resource: dict[str, str], served: Callable[[str, str], bool]) -> list[dict[str, str]]:
    """EquivalentResourcesFor: the served versions of the same resource (resource.k8s.io only; core kinds
    have one version), preferred first. `served(group, version)`."""
    if resource["group"] != DRA or resource["resource"] not in DRA_VERSIONS:
        return [resource]
    return [
        {"group": DRA, "version": v, "resource": resource["resource"]}
        for v in DRA_VERSIONS[resource["resource"]]
        if v == resource["version"] or served(DRA, v)
    ]


def kind_for(resource: dict[str, str], kind: dict[str, str]) -> dict[str, str]:
    """KindFor(equivalent, subresource): the kind in that version (a status write is its parent's kind)."""
    if resource["group"] == DRA and resource["resource"] in DRA_KINDS:
        return {"group": DRA, "version": resource["version"], "kind": DRA_KINDS[resource["resource"]]}
    return dict(kind)


@dataclass(frozen=True)
class Invocation:
    """A matched webhook: the resource and kind it is called with (after matchPolicy Equivalent)."""

    resource: dict[str, str]
    kind: dict[str, str]


def match_rules(
    webhook: dict[str, Any], req: Request, kind: dict[str, str], served: Callable[[str, str], bool]
) -> Invocation | None:
    """The rules part of ShouldCallHook: an exact match first; with matchPolicy Equivalent the rules in
    order, each against the other served versions of the resource."""
    rules = webhook.get("rules") or []
    if any(rule_matches(rule, req) for rule in rules):
        return Invocation(dict(req.resource), dict(kind))
    if webhook.get("matchPolicy") != "Equivalent":
        return None
    others = [e for e in equivalents(req.resource, served) if e != req.resource]
    for rule in rules:
        for other in others:
            if rule_matches(rule, Request(req.operation, other, req.sub_resource, req.namespace)):
                return Invocation(other, kind_for(other, kind))
    return None


# ---------------------------------------------------------------------------------------------------------
# label selectors (metav1.LabelSelector → labels.Selector)

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _label_key_error(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return f"invalid label key {key!r}: prefix part must be a DNS-1123 subdomain"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return (
            f"invalid label key {key!r}: name part must consist of alphanumeric characters, '-', '_' or '.'"
        )
    return None


def _label_value_error(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.match(value):
        return f"invalid label value: {value!r}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'"
    return None


Requirement = tuple[str, str, frozenset[str]]  # (key, operator, values)


@dataclass(frozen=True)
class Selector:
    """A parsed label selector; `requirements` empty = everything (labels.Everything)."""

    requirements: tuple[Requirement, ...]
    nothing: bool = False  # labels.Nothing(): the selector of a nil LabelSelector

    @property
    def empty(self) -> bool:
        return not self.requirements and not self.nothing

    def matches(self, labels: dict[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        for key, op, values in self.requirements:
            has = key in labels
            if op == "In" and not (has and labels[key] in values):
                return False
            if op == "NotIn" and has and labels[key] in values:
                return False
            if op == "Exists" and not has:
                return False
            if op == "DoesNotExist" and has:
                return False
        return True


def parse_selector(sel: dict[str, Any] | None) -> Selector:
    """LabelSelectorAsSelector. `{}` selects everything; an invalid selector raises ValueError with the
    apimachinery wording (the API server makes that an InternalError when the webhook's rules match).
    (A nil selector selects nothing upstream; `defaulted` never leaves one.)"""
    if sel is None:
        return Selector((), nothing=True)
    reqs: list[Requirement] = []
    for key, value in sorted((sel.get("matchLabels") or {}).items()):
        err = _label_key_error(key) or _label_value_error(value)
        if err:
            raise ValueError(err)
        reqs.append((key, "In", frozenset([value])))
    for expr in sel.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), list(expr.get("values") or [])
        err = _label_key_error(key)
        if err:
            raise ValueError(err)
        if op in ("In", "NotIn"):
            if not values:
                raise ValueError("for 'in', 'notin' operators, values set can't be empty")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                raise ValueError("values set must be empty for exists and does not exist")
        else:
            raise ValueError(f'"{op}" is not a valid label selector operator')
        for v in values:
            err = _label_value_error(v)
            if err:
                raise ValueError(err)
        reqs.append((key, op, frozenset(values)))
    return Selector(tuple(reqs))


# ---------------------------------------------------------------------------------------------------------
# namespace and object selectors


NamespaceGetter = Callable[[str], "dict[str, Any] | None"]


def _labels(obj: dict[str, Any] | None) -> dict[str, str]:
    if not isinstance(obj, dict):
        return {}
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels if isinstance(labels, dict) else {}


def match_namespace_selector(
    webhook: dict[str, Any],
    req: Request,
    obj: dict[str, Any] | None,
    namespaces: NamespaceGetter,
) -> bool:
    """MatchNamespaceSelector. A cluster-scoped write other than a Namespace always matches; a Namespace
    CREATE/UPDATE is matched on the object's own labels, anything else on the stored namespace's labels.
    Raises StatusFailure: 404 for a namespace that does not exist, 500 for an invalid selector."""
    if req.namespace == "" and req.resource["resource"] != "namespaces":
        return True
    try:
        selector = parse_selector(webhook.get("namespaceSelector"))
    except ValueError as e:
        raise StatusFailure(internal_error(str(e))) from None
    if selector.empty:
        return True
    if (
        req.resource["resource"] == "namespaces"
        and not req.sub_resource
        and req.operation in ("CREATE", "UPDATE")
    ):
        return selector.matches(_labels(obj))
    ns = namespaces(req.namespace)
    if ns is None:
        raise StatusFailure(
            status(
                404,
                "NotFound",
                f'namespaces "{req.namespace}" not found',
                {"name": req.namespace, "kind": "namespaces"},
            )
        )
    return selector.matches(_labels(ns))


def match_object_selector(
    webhook: dict[str, Any], obj: dict[str, Any] | None, old: dict[str, Any] | None
) -> bool:
    """MatchObjectSelector: the object's or the old object's labels (either suffices); an absent object
    never matches a non-empty selector. Raises StatusFailure (500) for an invalid selector."""
    try:
        selector = parse_selector(webhook.get("objectSelector"))
    except ValueError as e:
        raise StatusFailure(internal_error(str(e))) from None
    if selector.empty:
        return True
    return any(isinstance(o, dict) and selector.matches(_labels(o)) for o in (obj, old))
