"""Admission-time feasibility on small realistic clusters: the verdicts (feasible, busy, unsatisfiable,
undecided, skipped) for ResourceClaims and Pods (named claims, template claims, allocated claims that
pin a node, extended resources backed by DeviceClasses), the policy modes per kind and namespace, and
requests built to be expensive (CEL, backtracking) that get an answer within the deadline."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from admission_fixtures import (
    admission_review,
    causes,
    claim,
    cluster_objects,
    exactly,
    load,
    pod,
    served,
    snapshot,
)

from webhook.admission import AdmissionConfig, review_with_info
from webhook.config.context import Context
from webhook.config.policy import FeasibilityPolicy, Policy
from webhook.config.profile import load_profile
from webhook.engine import Budget
from webhook.simulate import simulate
from webhook.simulate.load import stored_objects
from webhook.state.store import StateStore

ROOT = Path(__file__).resolve().parents[2]
SNAP = snapshot()


def _sel(expr: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": expr}}]


def _extended(name: str, resource: str, amount: str) -> dict[str, Any]:
    p = pod(name)
    p["spec"]["containers"][0]["resources"] = {"requests": {resource: amount}, "limits": {resource: amount}}
    return p


def _verdict(
    obj: dict[str, Any], config: AdmissionConfig | None = None, snap: Any = None
) -> tuple[str | None, dict]:
    out, info = review_with_info(admission_review(served(obj)), snap or SNAP, config or AdmissionConfig())
    return info.verdict, out["response"]


CLAIMS = [
    ("one-h100-fits", claim("c1", [exactly("gpu", "h100.example.com")]), "feasible", None),
    (
        "a100s-all-allocated",
        claim("c2", [exactly("gpu", "a100.example.com")]),
        "busy",
        'ResourceClaim "ml/c2" cannot be allocated now (it will wait until devices are freed or untainted): request '
        "gpu: gpu-node-1 has 4 matching devices, 4 allocated to claim ml/training-a; 0 left, 1 requested "
        "(4 node(s) considered, 4 pruned by device counts, best node gpu-node-1)",
    ),
    (
        "four-h100-one-tainted",
        claim("c3", [exactly("gpus", "h100.example.com", 4)]),
        "busy",
        'ResourceClaim "ml/c3" cannot be allocated now (it will wait until devices are freed or untainted): request '
        "gpus: gpu-node-2 has 4 matching devices, 1 tainted NoExecute (not tolerated); 3 left, 4 requested",
    ),
    (
        "class-does-not-exist-yet",
        claim("c4", [exactly("gpu", "tpu.example.com")]),
        "busy",
        'ResourceClaim "ml/c4" cannot be allocated now and waits: claim ml/c4, request gpu: could not retrieve device '
        'class tpu.example.com: deviceclass.resource.k8s.io "tpu.example.com" not found',
    ),
    (
        "five-gpus-on-nodes-of-four",
        claim("c5", [exactly("gpus", "gpu.example.com", 5)]),
        "unsatisfiable",
        'ResourceClaim "ml/c5" can never be allocated on this cluster, not even with every device free and '
        "untainted: request gpus: gpu-node-3 has 5 matching devices, 1 lack free counters in gpu-0-counters; "
        "4 left, 5 requested; other nodes: gpu-node-1: 4 free; gpu-node-2: 4 free (4 node(s) considered, "
        "4 pruned by device counts, best node gpu-node-3)",
    ),
    (
        "selector-no-device-matches",
        claim(
            "c6",
            [
                exactly(
                    "gpu",
                    "gpu.example.com",
                    selectors=_sel('device.attributes["gpu.example.com"].?model.orValue("") == "B200"'),
                )
            ],
        ),
        "unsatisfiable",
        'ResourceClaim "ml/c6" can never be allocated on this cluster, not even with every device free and '
        "untainted: request gpu: no device of class gpu.example.com matches the request's selector on any node "
        "(gpu-node-3 has 5 devices of the class)",
    ),
    (
        "partition-larger-than-its-counter-set",
        claim(
            "c7",
            [
                exactly(
                    "gpu",
                    "gpu.example.com",
                    selectors=_sel(
                        'device.attributes["gpu.example.com"].?profile.orValue("") == "full.80gb"'
                    ),
                )
            ],
        ),
        "unsatisfiable",
        'ResourceClaim "ml/c7" can never be allocated on this cluster, not even with every device free and '
        "untainted: request gpu: gpu-node-3 has 1 matching device, 1 lack free counters in gpu-0-counters; "
        "0 left, 1 requested",
    ),
]


@pytest.mark.parametrize(("name", "obj", "verdict", "message"), CLAIMS, ids=[c[0] for c in CLAIMS])
def test_claim_verdicts(name: str, obj: dict[str, Any], verdict: str, message: str | None) -> None:
    got, response = _verdict(obj)
    assert got == verdict
    assert response["allowed"] is True  # mode warn (the default) never denies
    feasibility = [w for w in response.get("warnings", []) if "(admission.feasibility:" in w]
    if message is None:
        assert feasibility == [] and "auditAnnotations" not in response
    else:
        assert len(feasibility) == 1 and feasibility[0].startswith(message)
        assert feasibility[0].endswith(f"(admission.feasibility: {verdict}, mode warn)")
        assert response["auditAnnotations"]["feasibility"] == verdict


PODS = [
    (
        "template-claim-fits",
        pod("p1", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]),
        "feasible",
        None,
    ),
    (
        "named-pending-claim-fits",
        pod("p2", [{"name": "gpu", "resourceClaimName": "shared-h100"}]),
        "feasible",
        None,
    ),
    (
        "allocated-claim-on-its-node",
        pod("p3", [{"name": "gpus", "resourceClaimName": "training-a"}]),
        "feasible",
        None,
    ),
    (
        "allocated-claim-pins-a-full-node",
        pod(
            "p4",
            [
                {"name": "gpus", "resourceClaimName": "training-a"},
                {"name": "more", "resourceClaimTemplateName": "one-gpu"},
            ],
        ),
        "busy",
        'Pod "ml/p4" cannot be allocated now (it will wait until devices are freed or untainted): request gpu: '
        "gpu-node-1 has 4 matching devices, 4 allocated to claim ml/training-a; 0 left, 1 requested "
        "(1 node(s) considered",
    ),
    (
        "template-of-five-gpus",
        pod("p5", [{"name": "gpus", "resourceClaimTemplateName": "five-gpus-one-node"}]),
        "unsatisfiable",
        'Pod "ml/p5" can never be allocated on this cluster, not even with every device free and untainted: ',
    ),
    (
        "node-selector-to-a-node-without-gpus",
        pod(
            "p6",
            [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            nodeSelector={"kubernetes.io/hostname": "cpu-node-1"},
        ),
        "unsatisfiable",
        'Pod "ml/p6" can never be allocated on this cluster, not even with every device free and untainted: request '
        "gpu: no device of class gpu.example.com on cpu-node-1 (1 node(s) considered",
    ),
    (
        "extended-resource-a100-busy",
        _extended("p7", "example.com/a100", "1"),
        "busy",
        'Pod "ml/p7" cannot be allocated now (it will wait until devices are freed or untainted): request '
        "container-0-request-0: gpu-node-1 has 4 matching devices, 4 allocated to claim ml/training-a; 0 left, "
        "1 requested",
    ),
    ("extended-resource-h100-fits", _extended("p8", "example.com/h100", "2"), "feasible", None),
    ("extended-resource-nobody-serves", _extended("p9", "example.com/tpu", "1"), "skipped", None),
    ("no-claims", pod("p10"), "skipped", None),
    ("claim-not-created-yet", pod("p11", [{"name": "gpu", "resourceClaimName": "later"}]), "skipped", None),
]


@pytest.mark.parametrize(("name", "obj", "verdict", "message"), PODS, ids=[c[0] for c in PODS])
def test_pod_verdicts(name: str, obj: dict[str, Any], verdict: str, message: str | None) -> None:
    got, response = _verdict(obj)
    assert got == verdict
    feasibility = [w for w in response.get("warnings", []) if "(admission.feasibility:" in w]
    if message is None:
        assert feasibility == []
    else:
        assert len(feasibility) == 1 and feasibility[0].startswith(message), feasibility


def test_feasibility_runs_on_create_only() -> None:
    stored = served(claim("c2", [exactly("gpu", "a100.example.com")]))
    relabelled = copy.deepcopy(stored)
    relabelled["metadata"]["labels"] = {"team": "a"}
    out, info = review_with_info(
        admission_review(relabelled, operation="UPDATE", old=stored), SNAP, AdmissionConfig()
    )
    assert info.verdict is None and out["response"] == {"uid": out["response"]["uid"], "allowed": True}


# -- the examples/simulate cluster: four trainers placed, the fifth is busy ---------------------------


def test_the_simulate_example_fifth_trainer_is_busy_once_four_are_placed() -> None:
    objs = load(ROOT / "examples" / "simulate" / "gpu-cluster.yaml")
    placed = simulate([o for o in objs if o["kind"] != "Pod" or o["metadata"]["name"] != "trainer-5"])
    template = next(o for o in objs if o["kind"] == "ResourceClaimTemplate")
    allocated = []
    for sim in placed.pods:
        assert sim.feasible is True
        for c in sim.claims:
            allocated.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": c.name, "namespace": c.namespace},
                    "spec": copy.deepcopy(template["spec"]["spec"]),
                    "status": {
                        "allocation": c.allocation,
                        "reservedFor": [{"resource": "pods", "name": sim.pod.split("/")[1], "uid": "1"}],
                    },
                }
            )
    cluster = [o for o in objs if o["kind"] != "Pod"] + allocated
    fifth = next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"] == "trainer-5")
    verdict, response = _verdict(fifth, snap=snapshot(cluster))
    assert verdict == "busy"

    def held(node: str) -> str:
        on = [c for c in allocated if c["status"]["allocation"]["devices"]["results"][0]["pool"] == node]
        return ", ".join(sorted(f"{c['metadata']['namespace']}/{c['metadata']['name']} (2)" for c in on))

    assert response["warnings"] == [
        'Pod "default/trainer-5" cannot be allocated now (it will wait until devices are freed or untainted): request '
        f"gpus: node-1 has 4 matching devices, 4 allocated to claims {held('node-1')}; 0 left, 2 requested; other "
        f"nodes: node-2: 4 allocated to other claims (2 node(s) considered, 2 pruned by device counts, best node "
        "node-1) (admission.feasibility: busy, mode warn)"
    ]
    assert _verdict(fifth, snap=snapshot([o for o in objs if o["kind"] != "Pod"]))[0] == "feasible"


# -- policy modes per kind and namespace ---------------------------------------------------------


def _config(**feasibility: Any) -> AdmissionConfig:
    return AdmissionConfig(policy=Policy(feasibility=FeasibilityPolicy(**feasibility)))


UNSAT_CLAIM = claim("c5", [exactly("gpus", "gpu.example.com", 5)])
BUSY_CLAIM = claim("c2", [exactly("gpu", "a100.example.com")])
UNSAT_POD = pod("p5", [{"name": "gpus", "resourceClaimTemplateName": "five-gpus-one-node"}])


def test_enforce_denies_unsatisfiable_with_an_invalid_status() -> None:
    verdict, response = _verdict(UNSAT_CLAIM, _config(default="enforce"))
    assert verdict == "unsatisfiable" and response["allowed"] is False
    status = response["status"]
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert causes(response) == [
        (
            "spec.devices.requests[0]",
            "FieldValueForbidden",
            'Forbidden: ResourceClaim "ml/c5" can never be allocated on this cluster, not even with every device free '
            "and untainted: request gpus: gpu-node-3 has 5 matching devices, 1 lack free counters in gpu-0-counters; "
            "4 left, 5 requested; other nodes: gpu-node-1: 4 free; gpu-node-2: 4 free (4 node(s) considered, "
            "4 pruned by device counts, best node gpu-node-3)",
        )
    ]
    assert response["auditAnnotations"] == {
        "denied-by": "admission.feasibility",
        "feasibility": "unsatisfiable",
    }
    assert "warnings" not in response  # the Status says it all: no warning echoes the denial


def test_enforce_only_warns_on_busy() -> None:
    verdict, response = _verdict(BUSY_CLAIM, _config(default="enforce"))
    assert verdict == "busy" and response["allowed"] is True
    assert response["warnings"][0].endswith("(admission.feasibility: busy, mode enforce)")


def test_enforce_on_a_pod_points_at_its_claims() -> None:
    verdict, response = _verdict(UNSAT_POD, _config(kinds={"Pod": "enforce"}))
    assert verdict == "unsatisfiable" and response["allowed"] is False
    assert [(f, r) for f, r, _ in causes(response)] == [("spec.resourceClaims[0]", "FieldValueForbidden")]
    assert response["status"]["details"]["kind"] == "Pod" and "group" not in response["status"]["details"]


def test_off_does_not_run_the_allocator() -> None:
    out, info = review_with_info(admission_review(served(UNSAT_CLAIM)), SNAP, _config(default="off"))
    assert info.verdict is None and out["response"] == {"uid": out["response"]["uid"], "allowed": True}


@pytest.mark.parametrize(
    ("policy", "claim_decision", "pod_decision"),
    [
        (dict(default="warn"), "warn", "warn"),
        (dict(kinds={"ResourceClaim": "enforce"}), "deny", "warn"),
        (dict(kinds={"Pod": "enforce"}, namespaces={"ml": {"Pod": "off"}}), "warn", "off"),
        (dict(default="enforce", namespaces={"ml": "warn"}), "warn", "warn"),
        (dict(default="off", namespaces={"ml": {"ResourceClaim": "enforce"}}), "deny", "off"),
        (dict(default="enforce", namespaces={"other": "off"}), "deny", "deny"),
    ],
)
def test_modes_per_kind_and_namespace(policy: dict[str, Any], claim_decision: str, pod_decision: str) -> None:
    for obj, want in ((UNSAT_CLAIM, claim_decision), (UNSAT_POD, pod_decision)):
        verdict, response = _verdict(obj, _config(**policy))
        got = "deny" if not response["allowed"] else ("warn" if response.get("warnings") else "off")
        assert got == want, (obj["kind"], policy)
        assert verdict == (None if want == "off" else "unsatisfiable")


# -- expensive requests get an answer within the deadline ------------------------------------------


def _one_node(devices: list[dict[str, Any]], class_selectors: list[dict[str, Any]] | None = None) -> Any:
    """One node whose pool holds `devices` in slices of at most 128 (the API's limit per slice)."""
    chunks = [devices[i : i + 128] for i in range(0, len(devices), 128)]
    slices = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"s{n}"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n1",
                "pool": {"name": "n1", "generation": 1, "resourceSliceCount": len(chunks)},
                "devices": chunk,
            },
        }
        for n, chunk in enumerate(chunks)
    ]
    snap = snapshot(
        [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": "gpu"},
                "spec": {"selectors": class_selectors or []},
            },
            *slices,
        ]
    )
    assert snap.counts()["ResourceSlice"] == len(chunks)  # every slice is valid (the loader keeps it)
    return snap


def test_an_allocation_built_to_backtrack_is_undecided_within_the_budget() -> None:
    """8 requests that must share attribute g and differ in h, on 24 devices whose g-groups hold only 7
    distinct h values: infeasible, but only an exhaustive search proves it."""
    devices = [
        {"name": f"d{i}", "attributes": {"g": {"int": i % 3}, "h": {"int": (i // 3) % 7}}} for i in range(24)
    ]
    snap = _one_node(devices)
    c = claim(
        "bt",
        [exactly(f"r{i}", "gpu") for i in range(8)],
        constraints=[{"matchAttribute": "gpu.example.com/g"}, {"distinctAttribute": "gpu.example.com/h"}],
    )
    # the step budget is what must end the search: the request's deadline (2 s by default) is moved out of
    # its way, or a machine slow enough (4 workers on 2 busy cores) reaches it first
    config = AdmissionConfig(deadline_seconds=30.0, feasibility_budget=Budget(steps=20_000, seconds=30.0))
    verdict, response = _verdict(c, config, snap)
    assert verdict == "undecided" and response["allowed"] is True
    assert response["warnings"][0].startswith(
        'ResourceClaim "ml/bt": feasibility undecided (the search budget (20000 steps, 30 s) ran out after 1 node(s)'
    )
    enforce = AdmissionConfig(
        deadline_seconds=30.0,
        feasibility_budget=Budget(steps=20_000, seconds=30.0),
        policy=Policy(feasibility=FeasibilityPolicy("enforce")),
    )
    assert _verdict(c, enforce, snap)[1]["allowed"] is True  # undecided always admits


def test_an_expensive_selector_is_cut_by_the_request_deadline() -> None:
    """A legal class selector costing thousands of steps per device on 3,000 devices: the request's
    deadline stops the allocator and the claim is admitted as undecided."""
    side = "[" + ",".join(str(i) for i in range(60)) + "]"
    slow = f'{side}.all(x, {side}.all(y, x + y >= 0)) && device.attributes["gpu.example.com"].idx >= 0'
    devices = [{"name": f"d{i}", "attributes": {"idx": {"int": i}}} for i in range(3000)]
    snap = _one_node(devices, _sel(slow))
    never = claim("c", [exactly("r", "gpu", selectors=_sel('device.attributes["gpu.example.com"].idx < 0'))])
    config = AdmissionConfig(deadline_seconds=0.3, feasibility_budget=Budget(steps=10**9, seconds=60.0))
    verdict, response = _verdict(never, config, snap)
    assert verdict == "undecided" and response["allowed"] is True
    assert "the deadline of the run or request passed" in response["warnings"][0]


def test_a_selector_over_the_cost_limit_is_denied_as_the_api_server_would() -> None:
    side = "[" + ",".join(str(i) for i in range(100)) + "]"
    expensive = f"{side}.all(a, {side}.all(b, {side}.all(c, {side}.all(d, a + b + c + d >= 0))))"
    verdict, response = _verdict(claim("c", [exactly("r", "gpu.example.com", selectors=_sel(expensive))]))
    assert verdict is None and response["allowed"] is False
    [(field, reason, message)] = causes(response)
    assert (
        field == "spec.devices.requests[0].exactly.selectors[0].cel.expression"
        and reason == "FieldValueForbidden"
    )
    assert message == "Forbidden: too complex, exceeds cost limit"


def test_a_pods_feasibility_follows_the_store_version_it_was_given() -> None:
    """Pods are decided on the real store's Snapshot (`objects()` resolves their claims and templates):
    a claim that appears, a taint rule that comes and goes change the answer of the next version, never
    of a snapshot already handed out."""
    profile = load_profile("1.37")
    store = StateStore(profile)
    store.replace_all(stored_objects(cluster_objects(), Context(profile, lint=False)))
    v1 = store.publish()
    later = pod("p11", [{"name": "gpu", "resourceClaimName": "later"}])
    templated = pod("p1", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    assert _verdict(later, snap=v1)[0] == "skipped"  # no such claim yet: pod.unknown-claim's business
    assert _verdict(templated, snap=v1)[0] == "feasible"

    new_claim = claim("later", [exactly("gpu", "gpu.example.com")])
    taint = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "all-gpus"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com"},
            "taint": {"key": "k", "effect": "NoSchedule"},
        },
    }
    for obj in stored_objects([new_claim, taint], Context(profile, lint=False)):
        store.apply(obj)
    v2 = store.publish()
    assert ("ml", "later") in v2.objects("ResourceClaim") and ("ml", "later") not in v1.objects(
        "ResourceClaim"
    )
    verdict, response = _verdict(later, snap=v2)
    assert verdict == "busy" and "tainted NoSchedule" in response["warnings"][0]
    assert _verdict(templated, snap=v2)[0] == "busy"
    assert _verdict(templated, snap=v1)[0] == "feasible"  # the old version is unchanged

    store.delete("DeviceTaintRule", None, "all-gpus")
    v3 = store.publish()
    assert _verdict(later, snap=v3)[0] == "feasible" and _verdict(templated, snap=v3)[0] == "feasible"
