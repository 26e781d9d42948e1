"""Metadata rules: name / generateName, namespace scope, offline namespace warning."""

from __future__ import annotations

import pytest
import yaml

from webhook.config.context import Context
from webhook.rules import metadata

KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule", "Pod")


def obj(kind: str, meta: str) -> dict:
    return yaml.safe_load(f"apiVersion: v1\nkind: {kind}\nmetadata: {meta}\n")


def run(fn, o: dict, ctx: Context | None = None) -> list[tuple[str, str]]:
    return [(str(f.field), f.message) for f in fn(o, ctx or Context())]


def test_rule_ids_and_severities() -> None:
    assert metadata.name.rule.id == "meta.name"
    assert metadata.namespace.rule.id == "meta.namespace"
    assert metadata.namespace_missing.rule.id == "meta.namespace-missing"
    assert metadata.cluster_scoped_namespace.rule.id == "meta.cluster-scoped-namespace"
    assert str(metadata.namespace_missing.rule.severity) == "info"  # summed up in text output (issue 8 §6)
    assert str(metadata.cluster_scoped_namespace.rule.severity) == "warning"
    assert set(metadata.name.rule.kinds) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_valid_names(kind: str) -> None:
    assert run(metadata.name, obj(kind, "{name: gpu-0.example}")) == []
    assert run(metadata.name, obj(kind, "{generateName: gpu-}")) == []


@pytest.mark.parametrize("kind", KINDS)
def test_invalid_name(kind: str) -> None:
    found = run(metadata.name, obj(kind, "{name: GPU_0}"))
    assert len(found) == 1
    field, message = found[0]
    assert field == "metadata.name"
    assert message.startswith('Invalid value: "GPU_0": a lowercase RFC 1123 subdomain')


def test_name_required() -> None:
    assert run(metadata.name, obj("Pod", "{namespace: default}")) == [
        ("metadata.name", "Required value: name or generateName is required")
    ]


def test_generate_name_prefix() -> None:
    # a trailing dash stands for the random suffix; other bad prefixes are reported at generateName
    assert run(metadata.name, obj("ResourceClaim", "{generateName: claim-}")) == []
    found = run(metadata.name, obj("ResourceClaim", "{generateName: Claim_}"))
    assert [f for f, _ in found] == ["metadata.generateName"]
    assert found[0][1].startswith('Invalid value: "Claim_"')


def test_namespace_format() -> None:
    found = run(metadata.namespace, obj("ResourceClaim", "{name: c, namespace: My.Team}"))
    assert [f for f, _ in found] == ["metadata.namespace"]
    assert found[0][1].startswith('Invalid value: "My.Team": a lowercase RFC 1123 label')
    assert run(metadata.namespace, obj("ResourceClaim", "{name: c, namespace: team-a}")) == []


@pytest.mark.parametrize("kind", ("ResourceClaim", "ResourceClaimTemplate", "Pod"))
def test_missing_namespace_offline_is_a_warning(kind: str) -> None:
    o = obj(kind, "{name: c}")
    assert run(metadata.namespace, o, Context(lint=True)) == []
    found = run(metadata.namespace_missing, o, Context(lint=True))
    assert len(found) == 1 and found[0][0] == "metadata.namespace"
    assert "current context" in found[0][1]


@pytest.mark.parametrize("kind", ("ResourceClaim", "ResourceClaimTemplate", "Pod"))
def test_missing_namespace_in_webhook_is_an_error(kind: str) -> None:
    o = obj(kind, "{name: c}")
    assert run(metadata.namespace, o, Context(lint=False)) == [("metadata.namespace", "Required value")]
    assert run(metadata.namespace_missing, o, Context(lint=False)) == []


@pytest.mark.parametrize("kind", ("ResourceSlice", "DeviceClass", "DeviceTaintRule"))
def test_cluster_scoped_namespace(kind: str) -> None:
    o = obj(kind, "{name: c, namespace: default}")
    found = run(metadata.cluster_scoped_namespace, o)
    assert len(found) == 1 and found[0][0] == "metadata.namespace"
    assert "ignored" in found[0][1]
    assert run(metadata.namespace, o, Context(lint=False)) == []
    assert run(metadata.cluster_scoped_namespace, obj(kind, "{name: c}")) == []
