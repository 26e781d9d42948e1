"""Unknown fields as the API server's field validation treats them (webhook.schema.structural.decode):
Strict (kubectl: an error, the object is rejected) and Warn (client-go's default, stored state: dropped
with a warning, the object kept), and where a v1beta1 request field moved in v1."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests import builders as b
from webhook.schema.structural import DROPPED, UNKNOWN, decode

DATA = Path(__file__).resolve().parents[1] / "cli" / "data" / "versions"


def mappings_slice() -> dict[str, Any]:
    """A CPU driver's slice as a 1.36-built driver writes it (`nodeAllocatableResourceMappings`)."""
    obj: dict[str, Any] = yaml.safe_load((DATA / "slice-1.36-mappings.yaml").read_text())
    return obj


FIELD = "spec.devices[0].nodeAllocatableResourceMappings"


def test_a_1_36_field_is_an_error_in_a_1_37_manifest() -> None:
    found, fatal, _ = decode(mappings_slice(), "ResourceSlice", "1.37")
    assert fatal and [(v.rule, v.severity.value, v.field) for v in found] == [(UNKNOWN, "error", FIELD)]


def test_stored_state_keeps_the_object_without_the_field() -> None:
    obj = mappings_slice()
    before = copy.deepcopy(obj)
    found, fatal, stored = decode(obj, "ResourceSlice", "1.37", "Warn")
    assert not fatal
    assert [(v.rule, v.severity.value, v.field) for v in found] == [(DROPPED, "warning", FIELD)]
    assert 'unknown field "spec.devices[0].nodeAllocatableResourceMappings" dropped' in found[0].message
    assert 'did you mean "nodeAllocatableResources"?' in found[0].message
    assert stored["spec"]["devices"] == [{"name": "cpu-0", "capacity": {"cores": {"value": "8"}}}]
    assert obj == before  # the input object is not changed
    # the version that has the field keeps it, Warn or not
    found, fatal, stored = decode(obj, "ResourceSlice", "1.36", "Warn")
    assert (found, fatal) == ([], False) and "nodeAllocatableResourceMappings" in stored["spec"]["devices"][0]


def test_warn_drops_only_unknown_fields_a_wrong_type_still_rejects() -> None:
    obj = mappings_slice()
    obj["spec"]["devices"].append({"name": "cpu-1", "fancy": 1, "capacity": {"cores": {"value": []}}})
    obj["metadata"]["labels"] = {"a": "b"}
    obj["spec"]["sharedCounterz"] = []
    found, fatal, _ = decode(obj, "ResourceSlice", "1.37", "Warn")
    assert fatal
    assert sorted((v.rule, v.field) for v in found) == [
        ("schema.type", "spec.devices[1].capacity[cores].value"),
        (DROPPED, "spec.devices[0].nodeAllocatableResourceMappings"),
        (DROPPED, "spec.devices[1].fancy"),
        (DROPPED, "spec.sharedCounterz"),
    ]


def claim(request: dict[str, Any], template: bool = False) -> tuple[dict[str, Any], str]:
    spec: dict[str, Any] = {"devices": {"requests": [request]}}
    if template:
        obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "spec": {"spec": spec}}
        return obj, "ResourceClaimTemplate"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "spec": spec}, "ResourceClaim"


def test_v1beta1_request_fields_in_a_v1_object_say_to_move_them_under_exactly() -> None:
    beta_shaped = {
        "name": "gpu",
        "deviceClassName": "gpu.example.com",
        "allocationMode": "ExactCount",
        "count": 2,
        "selectors": [{"cel": {"expression": "true"}}],
        "adminAccess": False,
        "tolerations": [{"operator": "Exists"}],
    }
    obj, kind = claim(beta_shaped)
    found, fatal, _ = decode(obj, kind)
    assert fatal and {v.rule for v in found} == {UNKNOWN}
    messages = {v.field: v.message for v in found}
    assert messages["spec.devices.requests[0].deviceClassName"] == (
        'unknown field "spec.devices.requests[0].deviceClassName": in resource.k8s.io/v1 it is set under '
        "`exactly` (v1beta1 had it here): move it to spec.devices.requests[0].exactly.deviceClassName"
    )
    for name in ("allocationMode", "count", "selectors", "adminAccess", "tolerations"):
        assert messages[f"spec.devices.requests[0].{name}"].endswith(
            f"move it to spec.devices.requests[0].exactly.{name}"
        )
    obj, kind = claim({"name": "gpu", "deviceClassName": "gpu.example.com"}, template=True)
    (v,) = decode(obj, kind)[0]
    assert v.message.endswith("move it to spec.spec.devices.requests[0].exactly.deviceClassName")


def test_other_unknown_request_fields_keep_the_did_you_mean() -> None:
    obj, kind = claim({"name": "gpu", "exactly": {"deviceClassName": "x"}, "firstAvailble": []})
    (v,) = decode(obj, kind)[0]
    assert (
        v.message == 'unknown field "spec.devices.requests[0].firstAvailble": did you mean "firstAvailable"?'
    )
    # a subrequest has deviceClassName itself: an unknown field there is not a moved one
    obj, kind = claim(
        {"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "x", "exactly": {}}]}
    )
    (v,) = decode(obj, kind)[0]
    assert v.field == "spec.devices.requests[0].firstAvailable[0].exactly" and "move it" not in v.message


def test_a_pods_classic_dra_source_field_says_what_replaced_it() -> None:
    """`resourceClaims[].source` (the classic DRA API, removed in 1.31: kubernetes#125116), as old driver
    demos still write it: the message says what to write instead; a misspelt field keeps the did-you-mean."""
    pod = b.pod("p", ["gpu-template"], template=True)
    pod["spec"]["resourceClaims"] = [{"name": "c0", "source": {"resourceClaimTemplateName": "gpu-template"}}]
    (v,) = decode(pod, "Pod")[0]
    assert v.message == (
        'unknown field "spec.resourceClaims[0].source": a Pod\'s resourceClaims[].source was removed in '
        "Kubernetes 1.31 (the classic DRA API): write its resourceClaimName or resourceClaimTemplateName in "
        "the entry itself"
    )
    pod["spec"]["resourceClaims"] = [{"name": "c0", "resourceClaimTemplateNme": "gpu-template"}]
    (v,) = decode(pod, "Pod")[0]
    assert v.message.endswith('did you mean "resourceClaimTemplateName"?')


def test_a_v1_device_with_v1beta1s_basic_wrapper_says_to_move_its_fields_up() -> None:
    """A ResourceSlice dumped from v1beta1 and relabelled v1 (IBM's Spyre driver demo): `basic` is named
    for what it is; the same name elsewhere is only unknown."""
    obj = b.resource_slice(
        "s",
        [{"name": "d0", "basic": {"attributes": {"index": {"int": 0}}}}],
        pool="n",
        node="n",
        driver="spyre.ibm.com",
    )
    (v,) = decode(obj, "ResourceSlice")[0]
    assert v.field == "spec.devices[0].basic"
    assert v.message.startswith(
        "unknown field \"spec.devices[0].basic\": `basic` is resource.k8s.io/v1beta1's wrapper of a device's "
        "fields: in resource.k8s.io/v1 (and v1beta2) attributes, capacity, consumesCounters, ... are set in "
        "the device itself: move them up a level"
    )
    obj["spec"]["devices"] = [{"name": "d0"}]
    obj["spec"]["basic"] = {}
    (v,) = decode(obj, "ResourceSlice")[0]
    assert v.message == 'unknown field "spec.basic"'
