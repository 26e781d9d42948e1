"""Claims of a Pod: names generated from templates as the resource claim controller does, lookups
through resourceClaimStatuses and earlier generated claims, node affinity merging."""

from __future__ import annotations

from typing import Any

from webhook.simulate import podclaims as pcl

TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "t", "namespace": "ns"},
    "spec": {
        "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
    },
}


def pod(name: str = "web", claims: list[dict[str, Any]] | None = None, status: Any = None) -> dict[str, Any]:
    p: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": "u1"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "resourceClaims": claims or []},
    }
    if status:
        p["status"] = status
    return p


def test_generated_claim_from_template() -> None:
    claim = pcl.claim_from_template(pod(), "gpu", TEMPLATE)
    meta = claim["metadata"]
    assert meta["generateName"] == "web-gpu-"
    assert meta["name"].startswith("web-gpu-") and len(meta["name"]) == len("web-gpu-") + 5
    assert meta["annotations"] == {"note": "x", pcl.POD_CLAIM_ANNOTATION: "gpu"}
    assert meta["labels"] == {"team": "a"}
    assert meta["ownerReferences"][0] | {} == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "web",
        "uid": "u1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert claim["spec"] == TEMPLATE["spec"]["spec"]
    assert pcl.claim_from_template(pod(), "gpu", TEMPLATE)["metadata"]["name"] == meta["name"]  # reproducible


def test_long_names_are_cut_in_proportion() -> None:
    base = pcl.template_generate_name("p" * 60, "c" * 20)
    assert base == "p" * 41 + "-" + "c" * 13  # 60*57//82, 20*57//82; the trailing hyphen is lost
    assert len(pcl.generated_name(base, "s")) == len(base) + 5 <= 63


def test_resolution_by_name_status_generated_and_template() -> None:
    named = {"metadata": {"name": "shared", "namespace": "ns"}}
    earlier = {
        "metadata": {
            "name": "web-b-abcde",
            "namespace": "ns",
            "annotations": {pcl.POD_CLAIM_ANNOTATION: "b"},
            "ownerReferences": [{"kind": "Pod", "name": "web", "uid": "u1", "controller": True}],
        }
    }
    by_status = {"metadata": {"name": "from-status", "namespace": "ns"}}
    claims = {("ns", "shared"): named, ("ns", "web-b-abcde"): earlier, ("ns", "from-status"): by_status}
    p = pod(
        claims=[
            {"name": "a", "resourceClaimName": "shared"},
            {"name": "b", "resourceClaimTemplateName": "t"},
            {"name": "c", "resourceClaimTemplateName": "t"},
            {"name": "d", "resourceClaimTemplateName": "t"},
            {"name": "e", "resourceClaimName": "missing"},
            {"name": "f", "resourceClaimTemplateName": "gone"},
        ],
        status={"resourceClaimStatuses": [{"name": "c", "resourceClaimName": "from-status"}]},
    )
    invalid = {("ResourceClaimTemplate/ns", "gone"): "x.yaml:1: broken"}
    got = pcl.resolve_pod_claims(p, claims, {("ns", "t"): TEMPLATE}, invalid)
    assert got[0].claim is named
    assert got[1].claim is earlier
    assert got[2].claim is by_status
    assert (
        got[3].generated and got[3].claim is not None and got[3].claim["metadata"]["generateName"] == "web-d-"
    )
    assert got[4].problem == 'ResourceClaim "ns/missing" not found in the input'
    assert (
        got[5].problem == 'ResourceClaimTemplate "ns/gone" was left out of the simulation: x.yaml:1: broken'
    )
    assert str(got[5].path) == "spec.resourceClaims[5]"


def test_merge_node_selector_ands_terms() -> None:
    p = pod()
    p["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
                ]
            }
        }
    }
    sel = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    merged = pcl.merge_node_selector(p, sel)
    terms = merged["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert len(terms) == 2 and all(t["matchFields"][0]["values"] == ["n1"] for t in terms)
    assert "affinity" in p["spec"] and len(p["spec"]["affinity"]["nodeAffinity"]) == 1  # input untouched
    assert pcl.merge_node_selector(p, None) is p
