"""The stand-in's webhook matcher against upstream's behaviour (k8s.io/apiserver predicates/rules,
namespace and object matchers, generic.ShouldCallHook's matchPolicy, LabelSelectorAsSelector): tables of
rule × request with the answer upstream gives, and its selector semantics."""

from __future__ import annotations

from typing import Any

import pytest

from tests.standin.admission_match import (
    Invocation,
    Request,
    StatusFailure,
    defaulted,
    equivalents,
    match_namespace_selector,
    match_object_selector,
    match_rules,
    parse_selector,
    rule_matches,
)

DRA = "resource.k8s.io"


def gvr(resource: str, group: str = DRA, version: str = "v1") -> dict[str, str]:
    return {"group": group, "version": version, "resource": resource}


def rule(
    resources: list[str],
    ops: tuple[str, ...] = ("*",),
    groups: tuple[str, ...] = ("*",),
    versions: tuple[str, ...] = ("*",),
    scope: str | None = None,
) -> dict[str, Any]:
    r: dict[str, Any] = {
        "operations": list(ops),
        "apiGroups": list(groups),
        "apiVersions": list(versions),
        "resources": resources,
    }
    if scope is not None:
        r["scope"] = scope
    return r


CLAIM = Request("UPDATE", gvr("resourceclaims"), "", "ml")
CLAIM_STATUS = Request("UPDATE", gvr("resourceclaims"), "status", "ml")
SLICE = Request("CREATE", gvr("resourceslices"), "", "")
POD = Request("CREATE", gvr("pods", ""), "", "default")
POD_BINDING = Request("CREATE", gvr("pods", ""), "binding", "default")
NAMESPACE = Request("CREATE", gvr("namespaces", ""), "", "ml")  # a Namespace write: namespace = its name
NAMESPACE_STATUS = Request("UPDATE", gvr("namespaces", ""), "status", "ml")

RULE_TABLE: list[tuple[str, dict[str, Any], Request, bool]] = [
    # resources and subresources
    ("plain resource", rule(["resourceclaims"]), CLAIM, True),
    ("plain resource is not its status", rule(["resourceclaims"]), CLAIM_STATUS, False),
    ("status subresource", rule(["resourceclaims/status"]), CLAIM_STATUS, True),
    ("status rule is not the main resource", rule(["resourceclaims/status"]), CLAIM, False),
    ("* is every resource", rule(["*"]), SLICE, True),
    ("* is no subresource", rule(["*"]), CLAIM_STATUS, False),
    ("*/status", rule(["*/status"]), CLAIM_STATUS, True),
    ("*/status is not the main resource", rule(["*/status"]), CLAIM, False),
    ("x/* matches x itself", rule(["resourceclaims/*"]), CLAIM, True),
    ("x/* matches every subresource of x", rule(["resourceclaims/*"]), CLAIM_STATUS, True),
    ("x/* not another resource", rule(["resourceclaims/*"]), SLICE, False),
    ("*/* matches all", rule(["*/*"]), POD_BINDING, True),
    ("*/* matches main resources", rule(["*/*"]), SLICE, True),
    ("one of several", rule(["deviceclasses", "resourceslices"]), SLICE, True),
    ("other subresource", rule(["pods/status"]), POD_BINDING, False),
    ("resource names are exact", rule(["resourceslice"]), SLICE, False),
    # operations
    ("operation listed", rule(["*"], ops=("CREATE",)), SLICE, True),
    ("operation not listed", rule(["*"], ops=("UPDATE", "DELETE")), SLICE, False),
    ("no operations", rule(["*"], ops=()), SLICE, False),
    ("operation * among others", rule(["*"], ops=("DELETE", "*")), CLAIM, True),
    # groups and versions
    ("core group is the empty string", rule(["pods"], groups=("",)), POD, True),
    ("core group is not resource.k8s.io", rule(["pods"], groups=(DRA,)), POD, False),
    ("DRA group", rule(["*"], groups=(DRA,)), SLICE, True),
    ("version listed", rule(["*"], versions=("v1",)), SLICE, True),
    ("version not listed", rule(["*"], versions=("v1beta1",)), SLICE, False),
    ("no groups", rule(["*"], groups=()), SLICE, False),
    # scope
    ("scope * (default)", rule(["*"]), SLICE, True),
    ("Cluster scope: a cluster-scoped kind", rule(["*"], scope="Cluster"), SLICE, True),
    ("Cluster scope: not a namespaced write", rule(["*"], scope="Cluster"), CLAIM, False),
    ("Namespaced scope: a namespaced write", rule(["*"], scope="Namespaced"), CLAIM, True),
    ("Namespaced scope: not a cluster-scoped kind", rule(["*"], scope="Namespaced"), SLICE, False),
    (
        "Namespaced scope: a subresource takes its parent's scope",
        rule(["*/*"], scope="Namespaced"),
        CLAIM_STATUS,
        True,
    ),
    (
        "a Namespace is cluster-scoped though its namespace is set",
        rule(["*"], scope="Cluster"),
        NAMESPACE,
        True,
    ),
    ("a Namespace is never Namespaced", rule(["*"], scope="Namespaced"), NAMESPACE, False),
    ("a Namespace's status is cluster-scoped", rule(["*/*"], scope="Cluster"), NAMESPACE_STATUS, True),
    ("unknown scope matches nothing", rule(["*"], scope="Galaxy"), SLICE, False),
]


@pytest.mark.parametrize(
    ("rule", "request_", "want"), [t[1:] for t in RULE_TABLE], ids=[t[0] for t in RULE_TABLE]
)
def test_rule_matching_as_upstream(rule: dict[str, Any], request_: Request, want: bool) -> None:
    assert rule_matches(rule, request_) is want


def served(*versions: str) -> Any:
    return lambda group, version: version in versions


CLAIM_KIND = {"group": DRA, "version": "v1", "kind": "ResourceClaim"}


def webhook(*rules: dict[str, Any], policy: str = "Equivalent") -> dict[str, Any]:
    return {"rules": list(rules), "matchPolicy": policy}


def test_equivalent_resources_are_the_served_versions_preferred_first() -> None:
    assert [e["version"] for e in equivalents(gvr("resourceclaims"), served("v1", "v1beta1", "v1beta2"))] == [
        "v1",
        "v1beta2",
        "v1beta1",
    ]
    assert [e["version"] for e in equivalents(gvr("devicetaintrules"), served("v1", "v1alpha3"))] == [
        "v1",
        "v1alpha3",
    ]
    # a default 1.37 API server serves v1 only; a request of a version is always its own equivalent
    assert equivalents(gvr("resourceslices"), served("v1")) == [gvr("resourceslices")]
    assert equivalents(gvr("resourceslices", version="v1beta1"), served("v1")) == [
        gvr("resourceslices"),
        gvr("resourceslices", version="v1beta1"),
    ]
    assert equivalents(gvr("pods", ""), served("v1", "v1beta1")) == [gvr("pods", "")]


def test_match_policy_equivalent_converts_a_beta_request_to_the_rules_version() -> None:
    beta = Request("CREATE", gvr("resourceclaims", version="v1beta1"), "", "ml")
    beta_kind = {"group": DRA, "version": "v1beta1", "kind": "ResourceClaim"}
    hook = webhook(rule(["resourceclaims"], versions=("v1",)))
    inv = match_rules(hook, beta, beta_kind, served("v1", "v1beta1"))
    assert inv == Invocation(gvr("resourceclaims"), CLAIM_KIND)
    # Exact: only the request's own version
    assert match_rules({**hook, "matchPolicy": "Exact"}, beta, beta_kind, served("v1", "v1beta1")) is None
    # a v1 request to a webhook registered for v1beta2 only, when v1beta2 is served: converted down
    down = match_rules(
        webhook(rule(["*"], versions=("v1beta2",))), CLAIM, CLAIM_KIND, served("v1", "v1beta2")
    )
    assert down == Invocation(
        gvr("resourceclaims", version="v1beta2"),
        {"group": DRA, "version": "v1beta2", "kind": "ResourceClaim"},
    )
    # ... but not when the API server does not serve v1beta2
    assert match_rules(webhook(rule(["*"], versions=("v1beta2",))), CLAIM, CLAIM_KIND, served("v1")) is None


def test_match_policy_honours_earlier_rules_first_and_exact_matches_before_equivalents() -> None:
    hook = webhook(rule(["*"], versions=("v1beta1",)), rule(["*"], versions=("v1beta2",)))
    inv = match_rules(hook, CLAIM, CLAIM_KIND, served("v1", "v1beta1", "v1beta2"))
    assert inv is not None and inv.resource["version"] == "v1beta1"
    # an exact match of any rule wins over an equivalent of an earlier rule
    hook = webhook(rule(["*"], versions=("v1beta1",)), rule(["*"], versions=("v1",)))
    inv = match_rules(hook, CLAIM, CLAIM_KIND, served("v1", "v1beta1"))
    assert inv == Invocation(gvr("resourceclaims"), CLAIM_KIND)


def test_a_status_write_matched_through_an_equivalent_keeps_its_subresource_and_parent_kind() -> None:
    beta_status = Request("UPDATE", gvr("resourceclaims", version="v1beta2"), "status", "ml")
    kind = {"group": DRA, "version": "v1beta2", "kind": "ResourceClaim"}
    hook = webhook(
        rule(["resourceclaims"], versions=("v1",)), rule(["resourceclaims/status"], versions=("v1",))
    )
    assert match_rules(hook, beta_status, kind, served("v1", "v1beta2")) == Invocation(
        gvr("resourceclaims"), CLAIM_KIND
    )


SELECTOR_TABLE: list[tuple[str, dict[str, Any], dict[str, str] | None, bool]] = [
    ("empty selects everything", {}, None, True),
    ("matchLabels equal", {"matchLabels": {"team": "ml"}}, {"team": "ml"}, True),
    ("matchLabels differ", {"matchLabels": {"team": "ml"}}, {"team": "web"}, False),
    ("matchLabels missing key", {"matchLabels": {"team": "ml"}}, {}, False),
    ("In", {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x", "y"]}]}, {"a": "y"}, True),
    (
        "In without the key",
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]},
        {},
        False,
    ),
    (
        "NotIn: other value",
        {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]},
        {"a": "z"},
        True,
    ),
    (
        "NotIn: listed value",
        {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]},
        {"a": "x"},
        False,
    ),
    (
        "NotIn: key absent matches",
        {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]},
        {},
        True,
    ),
    ("Exists", {"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
    ("Exists: absent", {"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"b": "1"}, False),
    ("DoesNotExist", {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"b": "1"}, True),
    (
        "DoesNotExist: present",
        {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
        {"a": "1"},
        False,
    ),
    (
        "all requirements must hold",
        {"matchLabels": {"t": "1"}, "matchExpressions": [{"key": "a", "operator": "Exists"}]},
        {"t": "1"},
        False,
    ),
    (
        "the deploy exclusion: another namespace",
        {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": ["draguard-system", "kube-system"],
                }
            ]
        },
        {"kubernetes.io/metadata.name": "ml"},
        True,
    ),
    (
        "the deploy exclusion: draguard's own namespace",
        {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["draguard-system"]}
            ]
        },
        {"kubernetes.io/metadata.name": "draguard-system"},
        False,
    ),
]


@pytest.mark.parametrize(
    ("sel", "labels", "want"), [t[1:] for t in SELECTOR_TABLE], ids=[t[0] for t in SELECTOR_TABLE]
)
def test_label_selectors_as_apimachinery(
    sel: dict[str, Any], labels: dict[str, str] | None, want: bool
) -> None:
    assert parse_selector(sel).matches(labels) is want


@pytest.mark.parametrize(
    ("sel", "message"),
    [
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, "values set can't be empty"),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn"}]}, "values set can't be empty"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "must be empty"),
        (
            {"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["x"]}]},
            "not a valid label selector operator",
        ),
        ({"matchLabels": {"bad key!": "x"}}, "invalid label key"),
        ({"matchLabels": {"a": "not a value"}}, "invalid label value"),
        ({"matchLabels": {"Example.com/a": "x"}}, "prefix part must be a DNS-1123 subdomain"),
    ],
)
def test_invalid_selectors_are_refused_with_apimachinerys_reason(sel: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_selector(sel)


def test_a_nil_selector_selects_nothing_and_defaulting_never_leaves_one() -> None:
    assert not parse_selector(None).matches({"a": "b"})
    w = defaulted(
        {"name": "a.b.c", "clientConfig": {"service": {"name": "s", "namespace": "n"}}, "rules": [{}]}, True
    )
    assert w["namespaceSelector"] == {} and w["objectSelector"] == {}
    assert (w["failurePolicy"], w["matchPolicy"], w["timeoutSeconds"], w["reinvocationPolicy"]) == (
        "Fail",
        "Equivalent",
        10,
        "Never",
    )
    assert w["clientConfig"]["service"]["port"] == 443 and w["rules"][0]["scope"] == "*"


NS_LABELS = {
    "ml": {"kubernetes.io/metadata.name": "ml", "team": "ml"},
    "web": {"kubernetes.io/metadata.name": "web"},
}


def namespaces(looked_up: list[str]) -> Any:
    def get(name: str) -> dict[str, Any] | None:
        looked_up.append(name)
        if name not in NS_LABELS:
            return None
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": NS_LABELS[name]},
        }

    return get


ML_ONLY = {"namespaceSelector": {"matchLabels": {"team": "ml"}}}


def test_namespace_selector_reads_the_stored_namespace_of_a_namespaced_write() -> None:
    seen: list[str] = []
    assert match_namespace_selector(ML_ONLY, CLAIM, None, namespaces(seen))
    assert not match_namespace_selector(
        ML_ONLY, Request("CREATE", gvr("pods", ""), "", "web"), None, namespaces(seen)
    )
    assert seen == ["ml", "web"]
    # an empty selector needs no lookup at all
    assert match_namespace_selector(
        {"namespaceSelector": {}}, Request("CREATE", gvr("pods", ""), "", "gone"), None, namespaces(seen)
    )
    assert seen == ["ml", "web"]


def test_namespace_selector_never_skips_cluster_scoped_kinds_other_than_namespaces() -> None:
    seen: list[str] = []
    for resource in ("resourceslices", "deviceclasses", "devicetaintrules"):
        assert match_namespace_selector(
            ML_ONLY, Request("CREATE", gvr(resource), "", ""), None, namespaces(seen)
        )
    assert match_namespace_selector(
        ML_ONLY, Request("CREATE", gvr("nodes", ""), "", ""), None, namespaces(seen)
    )
    assert seen == []


def test_a_namespace_write_is_matched_on_its_own_labels_except_delete() -> None:
    seen: list[str] = []
    new = {"metadata": {"name": "fresh", "labels": {"team": "ml"}}}
    create = Request("CREATE", gvr("namespaces", ""), "", "fresh")
    assert match_namespace_selector(ML_ONLY, create, new, namespaces(seen))
    assert not match_namespace_selector(
        ML_ONLY, Request("UPDATE", gvr("namespaces", ""), "", "ml"), {"metadata": {}}, namespaces(seen)
    )
    assert seen == []  # CREATE/UPDATE: the object's labels, never the stored namespace
    assert match_namespace_selector(
        ML_ONLY, Request("DELETE", gvr("namespaces", ""), "", "ml"), None, namespaces(seen)
    )
    assert not match_namespace_selector(
        ML_ONLY, Request("UPDATE", gvr("namespaces", ""), "status", "web"), new, namespaces(seen)
    )
    assert seen == ["ml", "web"]  # DELETE and subresources: the stored namespace


def test_a_missing_namespace_is_404_and_an_invalid_selector_500() -> None:
    with pytest.raises(StatusFailure) as info:
        match_namespace_selector(
            ML_ONLY, Request("CREATE", gvr("pods", ""), "", "gone"), None, namespaces([])
        )
    assert info.value.status["code"] == 404 and info.value.status["message"] == 'namespaces "gone" not found'
    bad = {"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}
    with pytest.raises(StatusFailure) as info:
        match_namespace_selector(bad, CLAIM, None, namespaces([]))
    assert info.value.status["code"] == 500 and info.value.status["reason"] == "InternalError"


def labelled(**labels: str) -> dict[str, Any]:
    return {"metadata": {"name": "x", "labels": labels}}


@pytest.mark.parametrize(
    ("obj", "old", "want"),
    [
        (labelled(app="gpu"), None, True),
        (None, labelled(app="gpu"), True),  # DELETE: the old object
        (labelled(app="cpu"), labelled(app="gpu"), True),  # either one suffices
        (labelled(app="cpu"), labelled(app="cpu"), False),
        (None, None, False),  # no object never matches a non-empty selector
        ({"metadata": {"name": "x"}}, None, False),
    ],
)
def test_object_selector_matches_object_or_old_object(
    obj: dict[str, Any] | None, old: dict[str, Any] | None, want: bool
) -> None:
    assert match_object_selector({"objectSelector": {"matchLabels": {"app": "gpu"}}}, obj, old) is want
    assert match_object_selector({"objectSelector": {}}, obj, old) is True
