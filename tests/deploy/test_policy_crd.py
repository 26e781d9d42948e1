"""The DraguardPolicy CRD (deploy/base/draguardpolicy-crd.yaml): a valid apiextensions.k8s.io/v1 CRD in every
overlay, its schema structural with CEL rules that compile, the shipped examples accepted and broken
policies refused by it — and it agrees with draguard's own validator (webhook/config/policyobject.py):
what the schema refuses draguard refuses at the same path, and what only draguard can tell (rule ids, CEL
selectors) the schema lets through, so it reaches the server and its status says Invalid."""

from __future__ import annotations

import copy
from typing import Any

import kubernetes_validate
import pytest
from crd_schema import compile_rule, object_problems, structural_problems
from deploy_render import DEPLOY, one

from tests.config.policy_cases import BROKEN, EXAMPLE, broken, example
from webhook.config import policyobject
from webhook.config.policy import FEASIBILITY_KINDS, FEASIBILITY_MODES, RULE_SETTINGS
from webhook.config.policyobject import check_policy_object
from webhook.config.profile import load_profile
from webhook.config.tenants import ENFORCEMENTS, FIELDS, TENANT_MODES
from webhook.model.catalogue import RULES

CRD_NAME = f"{policyobject.PLURAL}.{policyobject.GROUP}"
ALL = ("base", "cert-manager", "self-managed-certs", "translate", "monitoring", "network-policy", "client-auth", "everything")  # fmt: skip


def _crd(rendered: dict[str, list[dict[str, Any]]], overlay: str = "base") -> dict[str, Any]:
    return one(rendered[overlay], "CustomResourceDefinition", CRD_NAME)


def _schema(crd: dict[str, Any]) -> dict[str, Any]:
    (version,) = crd["spec"]["versions"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize("overlay", ALL)
def test_every_overlay_installs_the_crd_as_a_valid_v1_crd(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    crd = _crd(rendered, overlay)
    kubernetes_validate.validate(crd, "1.37", strict=True)
    assert "namespace" not in crd["metadata"]
    spec = crd["spec"]
    assert (spec["group"], spec["scope"], spec["names"]["kind"], spec["names"]["plural"]) == (
        policyobject.GROUP, "Cluster", policyobject.KIND, policyobject.PLURAL,
    )  # fmt: skip
    assert "dgp" in spec["names"]["shortNames"]
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == (policyobject.VERSION, True, True)
    assert version["subresources"] == {"status": {}}


def test_the_schema_is_structural_and_its_rules_compile(rendered: dict[str, list[dict[str, Any]]]) -> None:
    schema = _schema(_crd(rendered))
    assert structural_problems(schema) == []
    rules = [v for v in _walk(schema) for v in v.get("x-kubernetes-validations", [])]
    assert len(rules) == 4  # namespace entries, matchExpressions (twice, an anchor), exclude


def _walk(node: dict[str, Any]) -> list[dict[str, Any]]:
    out = [node]
    for sub in [*node.get("properties", {}).values(), node.get("items"), node.get("additionalProperties")]:
        if isinstance(sub, dict):
            out += _walk(sub)
    return out


def test_the_structural_check_sees_what_the_api_server_refuses() -> None:
    """The checker is no rubber stamp: each of these is refused by the API server's CRD validation."""
    assert structural_problems({"type": "object", "properties": {"spec": {"properties": {}}}}) == [
        "spec: type: Required value: must not be empty for specified object fields"
    ]
    assert structural_problems({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "map"}}})  # fmt: skip
    assert structural_problems({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}})  # fmt: skip
    assert structural_problems({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "default": "y"}}})  # fmt: skip
    assert structural_problems({"type": "object", "properties": {"a": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}}})  # fmt: skip
    assert compile_rule("self.a ==") and compile_rule("size(self)")  # not a bool


def test_the_schema_names_what_draguard_reads(rendered: dict[str, list[dict[str, Any]]]) -> None:
    """The enums and fields of the schema are the validator's (one list each, no drift)."""
    spec = _schema(_crd(rendered))["properties"]["spec"]["properties"]
    assert spec["rules"]["additionalProperties"]["enum"] == list(RULE_SETTINGS)
    feasibility = spec["feasibility"]["properties"]
    assert feasibility["default"]["enum"] == list(FEASIBILITY_MODES)
    assert set(feasibility["kinds"]["properties"]) == set(FEASIBILITY_KINDS)  # kustomize sorts keys
    tenant = spec["tenants"]["items"]
    assert set(tenant["properties"]) == set(FIELDS)
    assert tenant["properties"]["mode"]["enum"] == list(TENANT_MODES)
    assert tenant["properties"]["requiredSelector"]["properties"]["enforcement"]["enum"] == list(ENFORCEMENTS)


def test_the_shipped_examples_are_accepted_by_the_crd_and_by_draguard(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    schema = _schema(_crd(rendered))
    import yaml

    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    assert len(docs) == 2
    for doc in docs:
        assert object_problems(doc, schema) == []
        assert not isinstance(check_policy_object(doc, RULES, load_profile("1.37")), list)
    assert (
        str(EXAMPLE.relative_to(DEPLOY.parent)) in (DEPLOY / "base" / "draguardpolicy-crd.yaml").read_text()
    )


@pytest.mark.parametrize(("name", "where", "value", "path", "reason", "crd"), BROKEN)
def test_the_crd_refuses_what_it_can_and_draguard_the_rest(
    rendered: dict[str, list[dict[str, Any]]],
    name: str,
    where: tuple[str | int, ...],
    value: Any,
    path: str,
    reason: str,
    crd: bool,
) -> None:
    obj = broken(name, where, value)
    problems = object_problems(copy.deepcopy(obj), _schema(_crd(rendered)))
    if crd:
        assert problems, "the CRD's schema accepts it"
    else:
        assert problems == [], "only draguard should need to tell"
    errors = check_policy_object(obj, RULES, load_profile("1.37"))
    assert isinstance(errors, list) and [e.field for e in errors] == [path]


def test_an_example_changed_in_a_way_both_accept(rendered: dict[str, list[dict[str, Any]]]) -> None:
    obj = example("gpu-tenants")
    obj["spec"]["tenants"][1]["namespaceSelector"]["matchExpressions"].append({"key": "legacy", "operator": "DoesNotExist"})  # fmt: skip
    obj["spec"]["tenants"][0]["exclude"] = {"namespaceSelector": {}}
    obj["spec"]["tenants"][0]["allowedDeviceClasses"] = []
    assert object_problems(obj, _schema(_crd(rendered))) == []
    assert not isinstance(check_policy_object(obj, RULES, load_profile("1.37")), list)
