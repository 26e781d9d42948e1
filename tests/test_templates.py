"""Workloads' Pod templates are checked as Pods, at the workload's field paths; the counts their
controllers read are checked as the API server does; workloads that use no DRA are left alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cliproc import draguard
from webhook.config.context import Context
from webhook.model.workloads import uses_dra
from webhook.validate import RunOptions, check_file_text, check_files

# A Pod spec with one of every mistake the Pod claim rules catch, in init, regular and ephemeral containers.
BAD_SPEC: dict[str, Any] = {
    "resourceClaims": [
        {"name": "gpu", "resourceClaimTemplateName": "single-gpu"},
        {"name": "gpu", "resourceClaimName": "shared"},
        {"name": "nic"},
    ],
    "initContainers": [{"name": "init", "image": "x", "resources": {"claims": [{"name": "nope"}]}}],
    "containers": [
        {"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}, {"name": "gpu"}]}}
    ],
    "ephemeralContainers": [{"name": "debug", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
}
POD_FINDINGS = [
    ("pod.resource-claims", "spec.resourceClaims[1].name"),
    ("pod.resource-claims", "spec.resourceClaims[2]"),
    ("pod.container-claims", "spec.containers[0].resources.claims[1]"),
    ("pod.container-claims", "spec.initContainers[0].resources.claims[0]"),
    ("pod.container-claims", "spec.ephemeralContainers[0].resources"),
]


def workload(kind: str, spec: dict[str, Any], template_extra: dict[str, Any] | None = None) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "x"}}, "spec": spec, **(template_extra or {})}
    meta = {"name": "w", "namespace": "team"}
    if kind == "PodTemplate":
        return {"apiVersion": "v1", "kind": kind, "metadata": meta, "template": template}
    if kind == "CronJob":
        job = {"template": template}
        return {
            "apiVersion": "batch/v1",
            "kind": kind,
            "metadata": meta,
            "spec": {"schedule": "@daily", "jobTemplate": {"spec": job}},
        }
    api = {"Job": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": {"template": template}}


PREFIX = {
    "Deployment": "spec.template",
    "ReplicaSet": "spec.template",
    "StatefulSet": "spec.template",
    "DaemonSet": "spec.template",
    "Job": "spec.template",
    "ReplicationController": "spec.template",
    "CronJob": "spec.jobTemplate.spec.template",
    "PodTemplate": "template",
}


def findings(obj: dict[str, Any]) -> list[tuple[str, str]]:
    res = check_file_text(yaml.safe_dump(obj), "w.yaml", Context())
    return sorted((v.rule, v.field) for o in res.objects for v in o.violations)


@pytest.mark.parametrize("kind", sorted(PREFIX))
def test_every_workload_kind_checks_its_template_as_a_pod_at_its_own_paths(kind: str) -> None:
    prefix = PREFIX[kind]
    got = findings(workload(kind, BAD_SPEC))
    expected = sorted(
        [(rule, f"{prefix}.{field}") for rule, field in POD_FINDINGS]
        + [("workload.ephemeral-containers", f"{prefix}.spec.ephemeralContainers")]
    )
    assert got == expected


def test_a_valid_template_has_no_findings_and_the_kind_is_reported() -> None:
    spec = {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
        "containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
    }
    res = check_file_text(yaml.safe_dump(workload("CronJob", spec)), "w.yaml", Context())
    (o,) = res.objects
    assert (o.api_version, o.kind, o.namespace, o.name, o.violations) == (
        "batch/v1",
        "CronJob",
        "team",
        "w",
        [],
    )


def test_template_structure_errors_name_the_workload_path_and_stop_the_rules() -> None:
    spec = {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": 7}],
        "containers": [{"name": "main", "image": "x", "resoures": {}}],
    }
    res = check_file_text(yaml.safe_dump(workload("Deployment", spec)), "w.yaml", Context())
    got = {v.field: (v.rule, v.message) for o in res.objects for v in o.violations}
    assert got["spec.template.spec.containers[0].resoures"] == (
        "schema.unknown-field",
        'unknown field "spec.template.spec.containers[0].resoures": did you mean "resources"?',
    )
    rule, message = got["spec.template.spec.resourceClaims[0].resourceClaimTemplateName"]
    assert rule == "schema.type"
    assert (
        "spec.template.spec.resourceClaims[0].resourceClaimTemplateName in body must be of type string"
        in message
    )
    assert len(got) == 2  # decoding failed: no rule ran on the template


def test_a_template_without_containers_and_one_that_is_not_an_object() -> None:
    obj = workload("Job", {"resourceClaims": [{"name": "a", "resourceClaimName": "b"}]})
    assert [field for _, field in findings(obj)] == ["spec.template.spec.containers"]  # required
    obj["spec"] = {"template": "oops", "parallelism": 1}  # no Pod, no DRA: not a DRA object
    res = check_file_text(yaml.safe_dump(obj), "w.yaml", Context())
    assert res.objects == [] and res.skipped == 1


def test_template_labels_are_reported_where_the_api_server_reports_them() -> None:
    spec = {
        "resourceClaims": [{"name": "a", "resourceClaimName": "b"}],
        "containers": [{"name": "c", "image": "x"}],
    }
    obj = workload("DaemonSet", spec)
    obj["spec"]["template"]["metadata"] = {"labels": {"bad key!": "x"}, "annotations": {"Bad/Key/x": "v"}}
    assert findings(obj) == [
        ("meta.annotations", "spec.template.annotations"),
        ("meta.labels", "spec.template.labels"),
    ]


def test_the_workloads_own_metadata_is_checked_as_a_pods() -> None:
    spec = {
        "resourceClaims": [{"name": "a", "resourceClaimName": "b"}],
        "containers": [{"name": "c", "image": "x"}],
    }
    obj = workload("StatefulSet", spec)
    obj["metadata"] = {"name": "Bad_Name"}
    assert findings(obj) == [("meta.name", "metadata.name"), ("meta.namespace-missing", "metadata.namespace")]


@pytest.mark.parametrize(
    ("kind", "spec", "expected"),
    [
        ("Deployment", {"replicas": -1}, [("workload.counts", "spec.replicas")]),
        ("StatefulSet", {"ordinals": {"start": -2}}, [("workload.counts", "spec.ordinals.start")]),
        ("ReplicaSet", {"replicas": "3"}, [("schema.type", "spec.replicas")]),
        ("ReplicationController", {"replicas": 2**31}, [("schema.integer-range", "spec.replicas")]),
        (
            "Job",
            {"parallelism": -1, "completions": -2},
            [("workload.counts", "spec.completions"), ("workload.counts", "spec.parallelism")],
        ),
        ("Job", {"completionMode": "Indexed"}, [("workload.counts", "spec.completions")]),
        (
            "Job",
            {"completionMode": "Indexed", "completions": 5, "parallelism": 100_001},
            [("workload.counts", "spec.parallelism")],
        ),
        ("Job", {"completionMode": "Sometimes"}, [("workload.counts", "spec.completionMode")]),
        ("Job", {"suspend": "yes"}, [("schema.type", "spec.suspend")]),
        ("Deployment", {"replicas": 0}, []),
    ],
)
def test_counts_the_controllers_read(
    kind: str, spec: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    pod_spec = {
        "resourceClaims": [{"name": "a", "resourceClaimName": "b"}],
        "containers": [{"name": "c", "image": "x"}],
    }
    obj = workload(kind, pod_spec)
    obj["spec"].update(spec)
    assert findings(obj) == sorted(expected)


def test_cron_job_counts_are_those_of_its_job_template() -> None:
    pod_spec = {
        "resourceClaims": [{"name": "a", "resourceClaimName": "b"}],
        "containers": [{"name": "c", "image": "x"}],
    }
    obj = workload("CronJob", pod_spec)
    obj["spec"]["jobTemplate"]["spec"]["parallelism"] = -3
    assert findings(obj) == [("workload.counts", "spec.jobTemplate.spec.parallelism")]


@pytest.mark.parametrize(
    ("spec", "dra"),
    [
        ({"containers": [{"name": "c", "image": "redis"}]}, False),
        (
            {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "hugepages-2Mi": "1Gi"}}}]},
            False,
        ),
        ({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}, True),
        (
            {
                "initContainers": [
                    {"name": "c", "resources": {"requests": {"deviceclass.resource.kubernetes.io/gpu": "1"}}}
                ]
            },
            True,
        ),
        ({"containers": [{"name": "c", "resources": {"claims": [{"name": "x"}]}}]}, True),
        ({"resourceClaims": [], "containers": [{"name": "c"}]}, True),
        ({"resources": {"claims": []}, "containers": [{"name": "c"}]}, True),
        ("not a spec", False),
    ],
)
def test_which_templates_use_dra(spec: Any, dra: bool) -> None:
    assert uses_dra({"spec": spec}) is dra


def test_workloads_that_use_no_dra_are_skipped_and_counted(tmp_path: Path) -> None:
    redis = workload("Deployment", {"containers": [{"name": "redis", "image": "redis:7"}]})
    redis["spec"]["replicas"] = -5  # not a DRA object: not draguard's to judge
    (tmp_path / "redis.yaml").write_text(yaml.safe_dump(redis))
    report = check_files([str(tmp_path)], RunOptions())
    assert report.objects == [] and report.skipped == 1


def test_pod_unknown_claim_covers_templates(tmp_path: Path) -> None:
    spec = {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "missing"}],
        "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
    }
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "other", "namespace": "team"},
        "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}},
    }
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([template, workload("CronJob", spec)]))
    p = draguard("validate", "-o", "json", str(tmp_path))
    out = json.loads(p.stdout)
    found = [(o["kind"], v["rule"], v["field"]) for o in out["objects"] for v in o["violations"]]
    assert found == [
        (
            "CronJob",
            "pod.unknown-claim",
            "spec.jobTemplate.spec.template.spec.resourceClaims[0].resourceClaimTemplateName",
        )
    ]
    assert p.returncode == 0  # a warning


def test_a_failing_rule_is_reported_on_the_workload(monkeypatch: pytest.MonkeyPatch) -> None:
    from webhook.rules.registry import OBJECT_RULES, object_rules

    def boom(obj: Any, ctx: Any) -> Any:
        raise ValueError("boom")

    rules = [(r, boom if r.id == "pod.container-claims" else fn) for r, fn in object_rules("Pod")]
    monkeypatch.setitem(OBJECT_RULES, "Pod", rules)
    spec = {"resourceClaims": [{"name": "a"}], "containers": [{"name": "c", "image": "x"}]}
    got = findings(workload("Deployment", spec))
    assert got == [
        ("internal.rule-crash", "spec.template"),
        ("pod.resource-claims", "spec.template.spec.resourceClaims[0]"),
    ]
