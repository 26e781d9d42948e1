"""Nesting up to Go's limit (encoding/json and go-yaml: 10,000 levels, what kubectl and the API server
accept) is read and checked like any object — in a .json and a .yaml file by the real command line, and
in an AdmissionReview by the webhook's decoding and review — and one level more is an input error at its
field, never a RecursionError. The interpreter's recursion limit is left as it is (the test checks).

A claim's opaque parameters are at most 10 KiB (the API server's limit): `[[...]]` fits ~5,100 levels
there; the rest of the way to 10,000 is taken by `metadata.managedFields[0].fieldsV1`, free-form JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.builders import line_of
from tests.cliproc import draguard
from webhook.admission import AdmissionConfig, review
from webhook.io.yamlload import MAX_DEPTH
from webhook.server.wire import BadBody, decode_review_body

PARAMS_LEVELS = 5_100  # `[` `]` pairs: 10,200 bytes of parameters, within the 10 KiB limit
# levels above the innermost fieldsV1 container: the object, metadata, managedFields, its entry
FIELDS_ABOVE = 4


def nested(levels: int, key: str | None = None) -> str:
    """JSON text of `levels` nested arrays (or objects under `key`)."""
    if key is None:
        return "[" * levels + "]" * levels
    return ('{"' + key + '":') * (levels - 1) + "{}" + "}" * (levels - 1)


# The pathological documents are text (the nesting is their subject), built by concatenation: `%s` and `+`
# put the deep parts in, so no brace of JSON or YAML needs escaping.


# the opaque config's driver is one no bundled driver schema knows: what is tested is the depth
def claim_json(depth: int, params: int = PARAMS_LEVELS) -> str:
    """A valid ResourceClaim whose document nests exactly `depth` levels (fieldsV1 the deepest part)."""
    fields = nested(depth - FIELDS_ABOVE, "f:spec")
    return (
        '{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "deep", '
        '"namespace": "default", "managedFields": [{"manager": "kubectl", "operation": "Update", '
        '"apiVersion": "resource.k8s.io/v1", "fieldsType": "FieldsV1", "fieldsV1": ' + fields + "}]}, "
        '"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}], '
        '"config": [{"requests": ["r"], "opaque": {"driver": "deep.example.com", '
        '"parameters": {"x": ' + nested(params) + "}}}]}}}"
    )


CLAIM_YAML = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: deep
  namespace: default
  managedFields:
  - manager: kubectl
    operation: Update
    apiVersion: resource.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: %s
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu}
    config:
    - requests: [r]
      opaque:
        driver: deep.example.com
        parameters: {x: %s}
"""


def claim_yaml(depth: int) -> str:
    """The same claim, block-style YAML with its deep values in flow style (as kubectl writes them)."""
    return CLAIM_YAML % (nested(depth - FIELDS_ABOVE, "f:spec"), nested(PARAMS_LEVELS))


def depth_of(text: str) -> int:
    """How deep brackets nest in a text without brackets in strings (checks the fixtures)."""
    deepest = level = 0
    for c in text:
        if c in "[{":
            level += 1
            deepest = max(deepest, level)
        elif c in "]}":
            level -= 1
    return deepest


def test_the_fixtures_nest_as_meant() -> None:
    assert MAX_DEPTH == 10_000
    assert depth_of(claim_json(MAX_DEPTH)) == MAX_DEPTH
    assert depth_of(claim_json(MAX_DEPTH + 1)) == MAX_DEPTH + 1
    assert len(nested(PARAMS_LEVELS)) + len('{"x":}') <= 10_240
    block = claim_yaml(MAX_DEPTH)
    assert depth_of(block.split("fieldsV1: ", 1)[1].split("\n", 1)[0]) + FIELDS_ABOVE == MAX_DEPTH


def test_valid_objects_nested_to_the_limit_are_checked_by_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text(claim_json(MAX_DEPTH))
    (tmp_path / "deep.yaml").write_text(claim_yaml(MAX_DEPTH))
    (tmp_path / "params.json").write_text(claim_json(50, params=9_990))  # 19,980 bytes of parameters
    p = draguard("validate", "-o", "json", str(tmp_path))
    assert "Traceback" not in p.stderr and p.stderr == "", p.stderr[-2000:]
    out = json.loads(p.stdout)
    found = {
        Path(o["source"]).name: [(v["rule"], v["field"]) for v in o["violations"]] for o in out["objects"]
    }
    assert found == {
        "deep.json": [],
        "deep.yaml": [],
        # a document nested 9,997 levels by its parameters: the API server's own size error, nothing else
        "params.json": [("claim.config", "spec.devices.config[0].opaque.parameters")],
    }
    assert p.returncode == 1


def test_one_level_more_is_an_input_error_at_its_field(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text(claim_json(MAX_DEPTH + 1))
    (tmp_path / "deep.yaml").write_text(claim_yaml(MAX_DEPTH + 1))
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 1 and "Traceback" not in p.stderr and "RecursionError" not in p.stdout
    where = "metadata.managedFields[0].fieldsV1.f:spec.f:spec.f:spec.f:spec..."
    fields_line = line_of(claim_yaml(MAX_DEPTH + 1), "fieldsV1: ")  # the YAML error is at the deep value
    assert p.stdout.splitlines() == [
        f"{tmp_path}/deep.json:1: error input.parse: document is nested deeper than 10000 levels at {where}: "
        "kubectl and the API server stop at 10000",
        f"{tmp_path}/deep.yaml:{fields_line}: error input.parse: document is nested deeper than 10000 levels "
        f"at {where}: kubectl and the API server stop at 10000",
    ]


def _review(obj_json: str, endpoint: str) -> dict[str, Any]:
    """The webhook's path for one AdmissionReview body: bounded decoding, then the review."""
    body = (
        '{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u-1", '
        '"kind": {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}, '
        '"resource": {"group": "resource.k8s.io", "version": "v1", "resource": "resourceclaims"}, '
        '"namespace": "default", "name": "deep", "operation": "CREATE", "userInfo": {"username": "u"}, '
        '"object": ' + obj_json + ', "oldObject": null, "dryRun": false}}'
    ).encode()
    # what is tested is the depth, not the time: the webhook's deadline (a few seconds by default) is
    # made long enough that a loaded machine still decides feasibility (else: undecided, and a warning)
    config = AdmissionConfig(endpoint=endpoint, deadline_seconds=120.0)
    return review(decode_review_body(body), _snapshot(), config)["response"]


CLUSTER = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}],
        },
    },
]


def _snapshot() -> Any:
    """A cluster where the claim can be allocated (its feasibility check finds nothing to say)."""
    from webhook.config.context import Context
    from webhook.config.profile import load_profile
    from webhook.simulate.load import stored_objects
    from webhook.state.store import StateStore

    profile = load_profile("1.37")
    store = StateStore(profile)
    store.replace_all(stored_objects(CLUSTER, Context(profile, lint=False)))
    return store.publish()


@pytest.mark.parametrize("endpoint", ["validate", "mutate"])
def test_the_webhook_reviews_objects_nested_to_the_limit(endpoint: str) -> None:
    limit = sys.getrecursionlimit()
    response = _review(claim_json(MAX_DEPTH), endpoint)
    assert response == {"uid": "u-1", "allowed": True}
    assert sys.getrecursionlimit() == limit  # nothing raised the process's limit to get there
    with pytest.raises(BadBody, match=r"nested deeper than 10002 levels at request\.object\.metadata"):
        _review(claim_json(MAX_DEPTH + 1), endpoint)
