"""The RBAC authorizer's matching as draguard ports it (webhook/audit/rbac/authz.py): a table of rules and
requests with the upstream answer, aggregation by label, RoleBinding scope, ServiceAccount subjects, and
properties of the wildcards."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webhook.audit.rbac.authz import Grant, Ref, Rule, Subject, load

DRA = "resource.k8s.io"


def rule(
    verbs: list[str], resources: list[str], groups: list[str] | None = None, names: list[str] | None = None
) -> Rule:
    return Rule(
        0, tuple(verbs), tuple(groups if groups is not None else [DRA]), tuple(resources), tuple(names or ())
    )


# (rule, request (verb, group, resource, subresource, name), granted?) — rbac/v1 helpers' semantics
TABLE = [
    (rule(["update"], ["resourceclaims/status"]), ("update", DRA, "resourceclaims", "status", "c"), True),
    (rule(["update"], ["resourceclaims"]), ("update", DRA, "resourceclaims", "status", "c"), False),
    (rule(["update"], ["resourceclaims/status"]), ("update", DRA, "resourceclaims", "", "c"), False),
    (
        rule(["*"], ["resourceclaims/driver"]),
        ("arbitrary-node:update", DRA, "resourceclaims", "driver", "d"),
        True,
    ),
    (
        rule(["update"], ["resourceclaims/driver"]),
        ("associated-node:update", DRA, "resourceclaims", "driver", "d"),
        False,
    ),
    (rule(["update"], ["*"]), ("update", DRA, "resourceclaims", "binding", ""), True),
    (rule(["update"], ["*/status"]), ("update", DRA, "resourceclaims", "status", "c"), True),
    (rule(["update"], ["*/status"]), ("update", DRA, "resourceclaims", "", "c"), False),
    # `resource/*` is no wildcard upstream: a literal that matches nothing
    (rule(["*"], ["resourceclaims/*"]), ("update", DRA, "resourceclaims", "status", "c"), False),
    (
        rule(["update"], ["resourceclaims/status"], groups=["*"]),
        ("update", DRA, "resourceclaims", "status", "c"),
        True,
    ),
    (
        rule(["update"], ["resourceclaims/status"], groups=[""]),
        ("update", DRA, "resourceclaims", "status", "c"),
        False,
    ),
    (
        rule(["associated-node:update"], ["resourceclaims/driver"], names=["gpu.example.com"]),
        ("associated-node:update", DRA, "resourceclaims", "driver", "gpu.example.com"),
        True,
    ),
    (
        rule(["associated-node:update"], ["resourceclaims/driver"], names=["gpu.example.com"]),
        ("associated-node:update", DRA, "resourceclaims", "driver", "dra.net"),
        False,
    ),
    # the binding check asks for no name: a rule with resourceNames never grants it
    (
        rule(["update"], ["resourceclaims/binding"], names=["x"]),
        ("update", DRA, "resourceclaims", "binding", ""),
        False,
    ),
]


@pytest.mark.parametrize(("r", "request_", "granted"), TABLE)
def test_a_rule_grants_as_the_rbac_authorizer_does(
    r: Rule, request_: tuple[str, str, str, str, str], granted: bool
) -> None:
    assert r.grants(*request_) is granted


def rbac(*objs: dict[str, Any]) -> list[Grant]:
    return load(objs).grants()


def cr(
    name: str, rules: list[dict[str, Any]], labels: dict[str, str] | None = None, agg: Any = None
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels or {}},
        "rules": rules,
    }
    if agg is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": agg}
    return obj


def binding(
    kind: str, name: str, role_kind: str, role: str, subjects: list[dict[str, Any]], ns: str = ""
) -> dict[str, Any]:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }


STATUS = {"apiGroups": [DRA], "resources": ["resourceclaims/status"], "verbs": ["update"]}


def test_aggregation_unions_the_selected_cluster_roles_by_label() -> None:
    """The controller replaces the aggregated role's rules (its own, e.g. a stale copy, are not kept)."""
    own = {"apiGroups": [DRA], "resources": ["devicetaintrules"], "verbs": ["create"]}
    grants = rbac(
        cr("agg", [own], agg=[{"matchExpressions": [{"key": "x/agg", "operator": "In", "values": ["yes"]}]}]),
        cr("picked", [STATUS], labels={"x/agg": "yes"}),
        cr(
            "not-picked",
            [{"apiGroups": [DRA], "resources": ["resourceslices"], "verbs": ["create"]}],
            labels={"x/agg": "no"},
        ),
        binding("ClusterRoleBinding", "b", "ClusterRole", "agg", [{"kind": "User", "name": "u"}]),
    )
    assert [g.rule.resources for g in grants] == [("resourceclaims/status",)]
    assert grants[0].role == Ref("ClusterRole", "agg")


def test_a_role_binding_grants_only_in_its_namespace_and_never_cluster_scoped() -> None:
    (g,) = rbac(
        cr(
            "editor",
            [{"apiGroups": [DRA], "resources": ["resourceclaims", "resourceslices"], "verbs": ["create"]}],
        ),
        binding(
            "RoleBinding", "b", "ClusterRole", "editor", [{"kind": "Group", "name": "devs"}], ns="team-a"
        ),
    )
    assert g.allows("create", DRA, "resourceclaims", "", "team-a")
    assert not g.allows("create", DRA, "resourceclaims", "", "team-b")
    assert not g.allows("create", DRA, "resourceslices", "", "")


def test_a_role_binding_to_a_role_finds_the_role_in_its_namespace_and_a_missing_role_grants_nothing() -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "r", "namespace": "a"},
        "rules": [STATUS],
    }
    grants = rbac(
        role,
        binding("RoleBinding", "here", "Role", "r", [{"kind": "User", "name": "u"}], ns="a"),
        binding("RoleBinding", "elsewhere", "Role", "r", [{"kind": "User", "name": "u"}], ns="b"),
    )
    assert [g.binding.ref.name for g in grants] == ["here"]


def test_a_service_account_subject_without_namespace_is_the_bindings() -> None:
    (g,) = rbac(
        cr("c", [STATUS]),
        binding(
            "RoleBinding", "b", "ClusterRole", "c", [{"kind": "ServiceAccount", "name": "sa"}], ns="drivers"
        ),
    )
    assert g.subject == Subject("ServiceAccount", "sa", "drivers")
    assert g.subject.username() == "system:serviceaccount:drivers:sa"


def test_non_resource_urls_grant_no_resource() -> None:
    r = Rule(0, ("*",), (), (), (), ("*",))
    assert not r.grants("update", DRA, "resourceclaims", "status", "c")


words = st.sampled_from(
    ["update", "patch", "create", "associated-node:update", "arbitrary-node:patch", "get"]
)
subs = st.sampled_from(["", "status", "binding", "driver"])
names = st.sampled_from(["", "gpu.example.com", "dra.net"])


@given(words, subs, names)
def test_the_wildcards_grant_everything_and_resource_names_only_their_names(
    verb: str, sub: str, name: str
) -> None:
    assert rule(["*"], ["*"], groups=["*"]).grants(verb, DRA, "resourceclaims", sub, name)
    narrowed = rule(["*"], ["*"], groups=["*"], names=["dra.net"])
    assert narrowed.grants(verb, DRA, "resourceclaims", sub, name) is (name == "dra.net")
    exact = rule([verb], [f"resourceclaims/{sub}" if sub else "resourceclaims"])
    assert exact.grants(verb, DRA, "resourceclaims", sub, name)
    assert not exact.grants(verb, "", "resourceclaims", sub, name)
