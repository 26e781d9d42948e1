"""Integer fields are checked at both ends of their Go type (issue 6 §4): -2^63-1 is as much a decode error
as 2^63, in JSON and in YAML manifests, with encoding/json's message (`draguard validate`, real files,
exit codes of a real subprocess)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cliproc import draguard

ROOT = Path(__file__).resolve().parents[2]
MIN_1 = -(2**63) - 1
V1 = "resource.k8s.io/v1"


def objects(value: int) -> list[dict[str, Any]]:
    """A slice (attribute int, metadata.generation) and a claim (tolerationSeconds,
    deletionGracePeriodSeconds) holding `value` in four int64 fields."""
    sl = {
        "apiVersion": V1,
        "kind": "ResourceSlice",
        "metadata": {"name": "s", "generation": value},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "d0", "attributes": {"index": {"int": value}}}],
        },
    }
    toleration = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": value}
    cl = {
        "apiVersion": V1,
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default", "deletionGracePeriodSeconds": value},
        "spec": {
            "devices": {
                "requests": [
                    {"name": "r", "exactly": {"deviceClassName": "gpu", "tolerations": [toleration]}}
                ]
            }
        },
    }
    return [sl, cl]


FIELDS = {
    ("s", "metadata.generation"): "ObjectMeta.metadata.generation",
    ("s", "spec.devices[0].attributes[index].int"): "DeviceAttribute.spec.devices.attributes.int",
    ("c", "metadata.deletionGracePeriodSeconds"): "ObjectMeta.metadata.deletionGracePeriodSeconds",
    (
        "c",
        "spec.devices.requests[0].exactly.tolerations[0].tolerationSeconds",
    ): "DeviceToleration.spec.devices.requests.exactly.tolerations.tolerationSeconds",
}


def write(tmp_path: Path, fmt: str, value: int) -> Path:
    objs = objects(value)
    if fmt == "json":
        path = tmp_path / "objects.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    else:  # the integers written out as YAML plain scalars
        path = tmp_path / "objects.yaml"
        path.write_text("\n---\n".join(json.dumps(o) for o in objs) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_below_int64_is_a_decode_error_in_every_int64_field(tmp_path: Path, fmt: str) -> None:
    p = draguard("validate", "-o", "json", str(write(tmp_path, fmt, MIN_1)))
    assert p.returncode == 1, p.stdout + p.stderr
    found = {
        (o["name"], v["field"]): v["message"]
        for o in json.loads(p.stdout)["objects"]
        for v in o["violations"]
        if v["rule"] == "schema.integer-range"
    }
    assert set(found) == set(FIELDS)
    for key, go_field in FIELDS.items():
        assert found[key] == (
            f"Invalid value: {MIN_1}: json: cannot unmarshal number {MIN_1} into Go struct field "
            f"{go_field} of type int64"
        )


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_both_ends_of_int64_are_valid(tmp_path: Path, fmt: str) -> None:
    for value in (-(2**63), 2**63 - 1):
        p = draguard("validate", "-o", "json", str(write(tmp_path, fmt, value)))
        rules = {v["rule"] for o in json.loads(p.stdout)["objects"] for v in o["violations"]}
        assert "schema.integer-range" not in rules, (value, p.stdout)


def test_below_int32_is_a_decode_error(tmp_path: Path) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "priority": -(2**31) - 1,
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}],  # a Pod that uses DRA
            "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
        },
    }
    f = tmp_path / "pod.json"
    f.write_text(json.dumps(pod))
    p = draguard("validate", "-o", "json", str(f))
    assert p.returncode == 1
    [v] = json.loads(p.stdout)["objects"][0]["violations"]
    assert (v["rule"], v["field"]) == ("schema.integer-range", "spec.priority")
    assert v["message"] == (
        "Invalid value: -2147483649: json: cannot unmarshal number -2147483649 into Go struct field "
        "PodSpec.spec.priority of type int32"
    )
