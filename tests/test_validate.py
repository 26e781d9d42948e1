"""The validation pipeline: input rules, defaulting before validation, stripping, crash containment."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import dump_yaml, obj
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.io.documents import Document
from webhook.model.violation import Finding
from webhook.rules import registry
from webhook.validate import RunOptions, check_body, check_document, check_file_text, object_violations


def rules_of(text: str, **ctx_args: Any) -> list[tuple[str, str, str]]:
    res = check_file_text(text, "t.yaml", Context(**ctx_args))
    return [(v.rule, v.severity.value, v.field) for o in res.objects for v in o.violations]


def test_duplicate_key_is_an_error_at_its_path() -> None:
    text = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n  selectors: []\n  selectors: []\n"
    assert ("input.duplicate-key", "error", "spec.selectors") in rules_of(text)


@pytest.mark.parametrize(
    "api_version",
    ["resource.k8s.io/v1alpha3", "resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v2"],
)
def test_other_resource_api_versions_are_not_served_by_default(api_version: str) -> None:
    # v1alpha3 has no DeviceClass, v1beta1/v1beta2 are off unless --runtime-config enables them (tests/convert)
    text = dump_yaml([obj("DeviceClass", "c", api=api_version, spec={})])
    assert rules_of(text) == [("input.api-version", "error", "apiVersion")]


def test_kind_without_api_version_is_an_error_and_plain_yaml_is_skipped() -> None:
    assert rules_of("kind: DeviceClass\nmetadata: {name: c}\n") == [("input.kind", "error", "apiVersion")]
    res = check_file_text("repos:\n- repo: local\n", "t.yaml", Context())
    assert res.objects == [] and res.skipped == 1


def test_a_list_or_scalar_document_is_not_an_object_skipped_and_counted() -> None:
    for text, source in (("- a\n- b\n", "playbook.yml"), ("just text\n", "t.yaml"), ('[1, "a"]', "a.json")):
        res = check_file_text(text, source, Context())
        assert (res.objects, res.skipped, res.not_objects) == ([], 1, 1), text
        assert res.first_not_object == f"{source}:1"


def test_a_request_body_that_is_a_list_stays_an_error() -> None:
    """A body is a request the API server decodes as one object: no repository file to skip."""
    report = check_body(b'[{"a": 1}]', RunOptions())
    assert [(v.rule, v.message) for o in report.objects for v in o.violations] == [
        ("input.parse", "document is a list, not a Kubernetes object (apiVersion, kind, ...)")
    ]


def test_a_helm_chart_yaml_is_not_an_object_but_a_manifest_missing_kind_is_broken() -> None:
    chart = "apiVersion: v2\nname: gpu\nversion: 0.1.0\n"
    res = check_file_text(chart, "charts/gpu/Chart.yaml", Context())
    assert (res.objects, res.not_objects) == ([], 1)
    # in any other file, without metadata, it is another tool's file all the same (a chart repository's
    # index.yaml is `apiVersion: v1` and `entries`); with metadata, a manifest missing its kind
    res = check_file_text(chart, "gpu.yaml", Context())
    assert (res.objects, res.not_objects) == ([], 1)
    assert rules_of("apiVersion: v1\nmetadata: {name: c}\ndata: {}\n") == [("input.kind", "error", "kind")]


def test_what_looks_like_a_broken_manifest_stays_an_error() -> None:
    bare_list = "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n"
    assert rules_of(bare_list) == [("input.parse", "error", "")]
    no_colons = "apiVersion resource.k8s.io/v1\nkind DeviceClass\n"
    assert rules_of(no_colons) == [("input.parse", "error", "")]


def test_defaulting_runs_before_validation() -> None:
    # count 0 with ExactCount is defaulted to 1 by the API server, so it is valid
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "n"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c", "count": 0}}]}},
    }
    assert object_violations(claim) == []
    assert claim["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "c",
        "count": 1,
        "allocationMode": "ExactCount",
    }


def test_disabled_fields_are_reported_and_not_validated() -> None:
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d.example.com",
            "nodeName": "n",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "skipNodeOperations": ["NodePrepareResources"],
        },
    }
    off = [(v.rule, v.field) for v in object_violations(dict(slice_))]
    assert off == [("skew.dropped-field", "spec.skipNodeOperations")]
    ctx = Context(profile=load_profile("1.37", {"DRAOptionalNodeOperations": True}))
    on = [(v.rule, v.field) for v in object_violations(dict(slice_), ctx)]
    assert on == [("slice.skip-node-operations", "spec.skipNodeOperations")]


def test_structural_type_error_stops_semantic_rules() -> None:
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "BAD NAME"},
        "spec": {
            "driver": "d.example.com",
            "nodeName": "n",
            "pool": {"name": "p", "generation": "1", "resourceSliceCount": 1},
        },
    }
    assert [(v.rule, v.field) for v in object_violations(slice_)] == [("schema.type", "spec.pool.generation")]


def test_a_crashing_rule_becomes_a_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(obj: dict[str, Any], ctx: Any) -> list[Finding]:
        raise KeyError("oops")

    rule = registry.Rule("test.boom", "boom", "", registry.Severity.ERROR, ("DeviceClass",), "object", "api")
    monkeypatch.setitem(
        registry.OBJECT_RULES, "DeviceClass", [*registry.object_rules("DeviceClass"), (rule, boom)]
    )
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {}}
    result, _, _ = check_document(Document("f.yaml", 3, obj), Context(), None, frozenset())
    assert result is not None
    (v,) = result.violations
    assert v.rule == "internal.rule-crash" and "test.boom" in v.message and "KeyError" in v.message


def test_a_failing_file_is_an_error_on_that_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import webhook.validate.files as files

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("kaput")

    monkeypatch.setattr(files, "check_file_text", boom)
    res = files.file_result("kind: x\n", "f.yaml", Context(), None, frozenset())
    ((o,),) = [res.objects]
    assert o.source == "f.yaml" and o.violations[0].rule == "internal.rule-crash"
    assert "RuntimeError: kaput" in o.violations[0].message


def test_a_miscased_apiversion_is_named() -> None:
    """Intel's GPU driver example writes `apiversion: v1`: kubectl rejects it; the finding says why."""
    res = check_file_text("apiversion: v1\nkind: Pod\nmetadata: {name: p}\n", "p.yaml", Context())
    ((v,),) = [o.violations for o in res.objects]
    assert (v.rule, v.field) == ("input.kind", "apiVersion")
    assert v.message.endswith(
        "(this object has `apiversion`: field names are case-sensitive, write `apiVersion`)"
    )
