"""`explain pod` (webhook/simulate/explainpod.py) on the realistic fixtures (tests/fixtures/realistic) and
small built clusters: the true cause per claim, request and node — busy with the holder and what it is
reserved for, unsatisfiable, an untolerated taint — and the changes the allocator verified, each checked
once more here by applying it to the cluster's files and explaining again."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests import builders as b
from tests.standin import objects as o
from webhook.engine import Budget
from webhook.model.budget import Deadline
from webhook.model.errors import UsageError
from webhook.simulate.explainpod import ExplainOptions, PodExplanation, explain_pod, load_files, load_objects

REALISTIC = Path(__file__).resolve().parents[1] / "fixtures" / "realistic"


def explain(paths: list[Path | str], ref: str, **kw: Any) -> PodExplanation:
    options = ExplainOptions(**kw)
    deadline = Deadline.after(options.deadline_seconds)
    ns, name = ref.split("/")
    data = load_files([str(p) for p in paths], options, deadline)
    return explain_pod(data, ns, name, options, deadline)


def explain_objects(objects: list[dict[str, Any]], ref: str, **kw: Any) -> PodExplanation:
    options = ExplainOptions(**kw)
    deadline = Deadline.after(options.deadline_seconds)
    ns, name = ref.split("/")
    return explain_pod(load_objects(objects, options, deadline), ns, name, options, deadline, live=True)


def only_request(out: PodExplanation) -> Any:
    (claim,) = out.claims
    (request,) = claim.requests
    return request


# --- the realistic fixtures --------------------------------------------------------------------------


def test_busy_names_the_holder_what_it_is_reserved_for_and_the_release_that_fits() -> None:
    sriov = REALISTIC / "sriov"
    out = explain([sriov], "telco/trex")
    assert (out.status, out.verdict, out.exit_code) == ("does-not-fit", "busy", 1)
    assert "allocated to other claims" in out.summary
    claim = out.claims[0]
    assert (claim.pod_claim, claim.template, claim.exists) == ("vfs", "telco/all-vfs-pf0", False)
    request = only_request(out)
    assert (request.request, request.verdict, request.needs) == ("vfs", "busy", "all")
    (node,) = request.nodes
    assert (node.node, node.matching, node.blocked) == ("sriov-worker-1", 8, {"in use": 3})
    assert [(h.claim, h.devices, h.reserved_for) for h in node.held_by] == [
        ("telco/upf-0-vfs-g7h2k", 3, ["Pod telco/upf-0"])
    ]
    (change,) = out.changes
    assert (change.kind, change.claim, change.node) == (
        "release-claim",
        "telco/upf-0-vfs-g7h2k",
        "sriov-worker-1",
    )
    # the change is real: without the holder's allocation the Pod fits there
    released = [
        sriov / "cluster" / "nodes.yaml",
        sriov / "cluster" / "resourceslices.yaml",
        sriov / "deploy",
        sriov / "examples",
    ]
    after = explain(released, "telco/trex")
    assert (after.status, after.node, after.exit_code) == ("fits", "sriov-worker-1", 0)


def test_an_unsatisfiable_selector_gets_the_term_to_drop_verified(tmp_path: Path) -> None:
    intel = REALISTIC / "intel"
    model = 'device.attributes["gpu.intel.com"].model == "Data Center GPU Flex 140"'
    memory = 'device.capacity["gpu.intel.com"].memory.compareTo(quantity("8Gi")) >= 0'
    flex = b.claim_template(
        "flex-gpu-8g", [b.request("gpu", "gpu.intel.com", [f"{model} && {memory}"])], "media"
    )
    pod = b.pod("transcode-0", ["flex-gpu-8g"], "media", template=True)
    cluster = [intel / "cluster", intel / "deploy", intel / "examples" / "flex-transcode.yaml"]
    out = explain([*cluster, b.write(tmp_path, "pod.yaml", [flex, pod])], "media/transcode-0")
    assert (out.status, out.verdict) == ("does-not-fit", "unsatisfiable")
    request = only_request(out)
    assert request.verdict == "unsatisfiable"
    assert "no device of class gpu.intel.com matches the request's selector on any node" in request.cause
    # dropping the memory term leaves the typo: only the model term's drop is reported
    (change,) = out.changes
    assert (change.kind, change.request, change.detail["term"], change.detail["expression"]) == (
        "drop-selector-term",
        "gpu",
        model,
        memory,
    )
    assert change.target == 'ResourceClaimTemplate "media/flex-gpu-8g"' and change.node == "flex-node"
    assert out.search is not None and (out.search.tried, out.search.fits, out.search.cut_short) == (
        2,
        1,
        None,
    )
    fixed = b.claim_template("flex-gpu-8g", [b.request("gpu", "gpu.intel.com", [memory])], "media")
    after = explain([*cluster, b.write(tmp_path, "pod.yaml", [fixed, pod])], "media/transcode-0")
    assert (after.status, after.node) == ("fits", "flex-node")


def test_a_count_too_high_is_lowered_to_what_fits(tmp_path: Path) -> None:
    amd = REALISTIC / "amd"
    pod = b.pod("pretrain-0", ["nine-gpus"], "amd-train", template=True)
    cluster = [amd / "cluster", amd / "deploy", amd / "examples" / "whole-node.yaml"]
    out = explain([*cluster, b.write(tmp_path, "pod.yaml", [pod])], "amd-train/pretrain-0")
    assert (out.status, out.verdict) == ("does-not-fit", "unsatisfiable")
    assert "the largest node, mi300x-node-1, has 8 devices of class gpu.amd.com; 9 requested" in out.reason
    lowered = [c for c in out.changes if c.kind == "lower-count"]
    assert [(c.request, c.detail, c.node) for c in lowered] == [
        ("gpus", {"from": 9, "to": 8}, "mi300x-node-1")
    ]
    assert out.changes[0] is lowered[0] or out.changes[0].cost <= lowered[0].cost


def test_an_untolerated_taint_gets_the_toleration_verified() -> None:
    ex = REALISTIC / "dra-example-driver"
    cluster = [ex / "cluster" / "gpu", ex / "deploy", ex / "examples" / "device-taint-noschedule.yaml"]
    out = explain(cluster, "device-taints/pod-not-scheduled")
    assert (out.status, out.verdict) == ("does-not-fit", "busy")
    assert "carry device taints it does not tolerate" in out.summary
    request = only_request(out)
    assert request.verdict == "tainted"
    taint = {"key": "gpu.dra-example-driver.sigs.k8s.io/unhealthy", "value": "true", "effect": "NoSchedule"}
    assert all(n.taints == [taint] and n.blocked == {"tainted": 8} for n in request.nodes)
    assert len(request.nodes) == 2
    first = out.changes[0]
    assert (first.kind, first.target) == ("tolerate-taint", 'ResourceClaimTemplate "device-taints/plain-gpu"')
    assert first.detail["toleration"] == {
        "key": "gpu.dra-example-driver.sigs.k8s.io/unhealthy",
        "operator": "Equal",
        "value": "true",
        "effect": "NoSchedule",
    }
    # the Pod of the same file whose template tolerates the taint fits
    assert explain(cluster, "device-taints/gpu-diagnostics").status == "fits"


def test_a_constraint_no_device_can_meet_is_the_change() -> None:
    out = explain([REALISTIC / "amd"], "amd-rccl/rccl-tests")
    assert (out.status, out.verdict) == ("does-not-fit", "unsatisfiable")
    assert (
        "constraint matchAttribute `gpu.amd.com/deviceID`: no candidate device has this attribute"
        in out.reason
    )
    assert all(r.verdict == "fits-alone" for c in out.claims for r in c.requests)
    assert [(c.kind, c.detail["attribute"]) for c in out.changes] == [
        ("drop-constraint", "gpu.amd.com/deviceID")
    ]


def test_a_cel_runtime_error_is_the_cause_and_the_search_still_finds_a_fit() -> None:
    out = explain([REALISTIC / "dranet"], "nccl/all-reduce")
    assert out.status == "does-not-fit" and "CEL runtime error" in out.reason
    assert [(c.kind, c.detail) for c in out.changes] == [("lower-count", {"from": 8, "to": 4})]


# --- small built clusters (the objects a live listing returns) ---------------------------------------


def cluster() -> list[dict[str, Any]]:
    """node-a and node-b with two GPUs each; `held` (two GPUs of node-a) reserved for the running Pod
    `runner`; `small` (one GPU of node-b) reserved for nothing; an invalid slice; Pod `waiting` wants
    three GPUs through claim `want`."""
    held = o.claim("held", 2)
    held["status"] = o.allocation("node-a", [0, 1])
    held["status"]["reservedFor"] = [{"resource": "pods", "name": "runner", "uid": "uid-runner"}]
    small = o.claim("small", 1)
    small["status"] = o.allocation("node-b", [0])
    runner = o.pod("runner", ["held"])
    runner["spec"]["nodeName"] = "node-a"
    runner["status"] = {"phase": "Running"}
    bad = o.resource_slice("node-c", name="node-c-bad")
    bad["spec"]["devices"][0]["name"] = "GPU_0"
    return [
        o.node("node-a"),
        o.node("node-b"),
        o.resource_slice("node-a"),
        o.resource_slice("node-b"),
        bad,
        o.device_class(),
        held,
        small,
        runner,
        o.claim("want", 2),
        o.pod("waiting", ["want"]),
    ]


def test_changes_are_ordered_smallest_first_and_the_left_out_objects_named() -> None:
    out = explain_objects(cluster(), "default/waiting")
    assert (out.status, out.verdict) == ("does-not-fit", "busy")
    request = only_request(out)
    holders = {h.claim: h.reserved_for for n in request.nodes for h in n.held_by}
    assert holders == {
        "default/held": ["Pod default/runner (Running on node node-a)"],
        "default/small": [],
    }
    # the Pod's own claim first, then releases: the claim reserved for nothing before the one a Pod uses
    assert [(c.kind, c.claim, c.node) for c in out.changes] == [
        ("lower-count", "default/want", "node-b"),
        ("release-claim", "default/small", "node-b"),
        ("release-claim", "default/held", "node-a"),
    ]
    assert out.changes[0].detail == {"from": 2, "to": 1}
    (lo,) = out.left_out
    assert (lo.label, lo.source, lo.line) == ('ResourceSlice "node-c-bad"', None, None)
    assert lo.why.startswith('device.name: spec.devices[0].name: Invalid value: "GPU_0"')


def test_the_search_is_bounded_and_says_so() -> None:
    out = explain_objects(cluster(), "default/waiting", search_runs=1)
    assert out.search is not None
    assert (out.search.tried, out.search.untried) == (1, 2)
    assert (
        out.search.cut_short == "the bound of 1 allocator runs was reached; 2 candidate change(s) not tried"
    )
    assert out.exit_code == 1  # the verdict is decided all the same
    none = explain_objects(cluster(), "default/waiting", search_runs=0)
    assert none.search is None and none.changes == []


def test_a_claim_the_controller_generated_is_found_through_the_pod_status() -> None:
    objs = cluster()
    generated = o.claim("waiting-gpu-x7k2p", 2)
    generated["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "c0"}
    two = b.claim_template("two-gpus", copy.deepcopy(generated["spec"]["devices"]["requests"]))
    pod = b.pod("waiting", ["two-gpus"], template=True)  # its claim entry: c0
    pod["status"] = {
        "phase": "Pending",
        "resourceClaimStatuses": [{"name": "c0", "resourceClaimName": "waiting-gpu-x7k2p"}],
    }
    objs = [x for x in objs if x["metadata"]["name"] not in ("want", "waiting")] + [generated, two, pod]
    out = explain_objects(objs, "default/waiting")
    (claim,) = out.claims
    assert (claim.claim, claim.template, claim.exists) == (
        "default/waiting-gpu-x7k2p",
        "default/two-gpus",
        True,
    )
    lowered = out.changes[0]
    assert (lowered.kind, lowered.target) == ("lower-count", 'ResourceClaimTemplate "default/two-gpus"')


@pytest.mark.parametrize(
    ("change", "status", "words"),
    [
        (lambda p: p["spec"].update(nodeName="node-a"), "not-pending", "bound to node node-a"),
        (lambda p: p.update(status={"phase": "Succeeded"}), "not-pending", "phase Succeeded"),
        (
            lambda p: p["spec"].pop("resourceClaims") and p["spec"]["containers"][0].pop("resources"),
            "no-dra",
            "uses no DRA",
        ),
    ],
)
def test_a_pod_not_pending_or_without_dra_says_so(change: Any, status: str, words: str) -> None:
    objs = cluster()
    change(objs[-1])
    out = explain_objects(objs, "default/waiting")
    assert (out.status, out.exit_code) == (status, 0) and words in out.summary


def test_a_pod_that_fits_names_the_node() -> None:
    objs = cluster()
    objs[-2] = o.claim("want", 1)
    out = explain_objects(objs, "default/waiting")
    assert (out.status, out.node, out.exit_code) == ("fits", "node-b", 0)


def test_no_such_pod_is_a_usage_error_and_an_invalid_one_is_named() -> None:
    with pytest.raises(UsageError, match='Pod "default/nope" not found in the cluster'):
        explain_objects(cluster(), "default/nope")
    objs = cluster()
    objs[-1]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "also-a-template"  # both: invalid
    out = explain_objects(objs, "default/waiting")
    assert (out.status, out.exit_code) == ("left-out", 1) and "draguard cannot use it" in out.summary


def test_out_of_budget_is_undecided_never_a_verdict() -> None:
    out = explain_objects(cluster(), "default/waiting", budget=Budget(steps=0, seconds=0.0))
    assert (out.status, out.verdict, out.exit_code) == ("undecided", None, 3)
    assert out.summary.startswith("undecided: the search budget (0 steps, 0 s) ran out")


def test_a_taint_that_blocks_two_requests_of_a_claim_is_tolerated_in_both() -> None:
    tainted = o.resource_slice("node-a")
    for d in tainted["spec"]["devices"]:
        d["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]
    pair = o.claim("pair")
    first = pair["spec"]["devices"]["requests"][0]
    pair["spec"]["devices"]["requests"] = [first, {**copy.deepcopy(first), "name": "second"}]
    objs = [o.node("node-a"), tainted, o.device_class(), pair, o.pod("waiting", ["pair"])]
    out = explain_objects(objs, "default/waiting")
    assert {r.verdict for r in out.claims[0].requests} == {"tainted"}
    (change,) = out.changes  # one toleration alone leaves the other request without a device
    assert (change.kind, change.request, change.detail["requests"]) == (
        "tolerate-taint",
        None,
        ["gpu", "second"],
    )
    assert change.detail["toleration"] == {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}
    assert change.description == "tolerate the device taint maintenance:NoExecute in requests gpu, second"


def test_a_claim_that_does_not_exist_is_waited_for() -> None:
    objs = [x for x in cluster() if x["metadata"]["name"] != "want"]
    out = explain_objects(objs, "default/waiting")
    assert (out.status, out.verdict, out.search) == ("does-not-fit", "busy", None)
    (claim,) = out.claims
    assert (claim.claim, claim.pod_claim) == ("", "want") and '"default/want" not found' in claim.problem
