"""The background audit's incremental runs (webhook/audit/incremental.py): after any sequence of watch
events, a run that re-judges only what changed gives the report a full audit of the same objects gives;
one event re-judges the changed object and the objects whose verdict may read it, nothing else."""

from __future__ import annotations

import copy
import random
import time
from typing import Any

import pytest

from tests.simulate.test_explainpod import cluster
from tests.standin import objects as o
from webhook.audit.incremental import IncrementalAudit
from webhook.audit.objects import AuditObjects
from webhook.audit.policyreport import policy_reports
from webhook.audit.results import AuditReport
from webhook.audit.run import AuditOptions, audit
from webhook.config.policy import Policy
from webhook.model.budget import Deadline
from webhook.server.liveaudit import AUDITED_KINDS
from webhook.simulate.explainpod import load_objects
from webhook.state.live.listing import pod_summary

OPTIONS = AuditOptions(version="1.37", search_runs=0, jobs=1, max_pending_pods=3)


def deadline() -> Deadline:
    return Deadline(time.monotonic() + 600)


def pods(objects: AuditObjects) -> dict[tuple[str, str], dict[str, Any]]:
    return {k: pod_summary(p) for k, p in objects.snapshot().objects("Pod").items()}


def full(objects: AuditObjects, options: AuditOptions = OPTIONS) -> AuditReport:
    """The audit as `draguard audit` runs it: every object loaded and judged."""
    d = deadline()
    data = load_objects(objects.snapshot().everything(AUDITED_KINDS), options, d)
    return audit(data, options, d, live=True, pods=pods(objects))


def incremental(inc: IncrementalAudit, objects: AuditObjects, options: AuditOptions = OPTIONS) -> AuditReport:
    return inc.run(objects.snapshot().everything(AUDITED_KINDS), options, deadline(), pods(objects))


def candidates() -> list[dict[str, Any]]:
    """The small cluster, and objects the events add: a second pool split in two slices (one of them
    missing is a finding on the other), a claim of a class that does not exist, another Namespace with a
    Pod that cannot fit, a second class."""
    split = [o.resource_slice("node-b", name=f"node-b-part-{i}") for i in range(2)]
    for i, s in enumerate(split):
        s["spec"]["pool"] = {"name": "shared", "generation": 1, "resourceSliceCount": 2}
        s["spec"].pop("nodeName")
        s["spec"]["allNodes"] = True
        for d in s["spec"]["devices"]:
            d["name"] = f"{d['name']}-{i}"
    return [
        *cluster(),
        *split,
        o.claim("orphan", 1, cls="missing.example.com"),
        o.namespace("team-b", tier="gold"),
        o.claim("huge", 5, namespace="team-b"),
        o.pod("never", ["huge"], namespace="team-b"),
        o.pod("orphaned", ["orphan"]),
        o.device_class("other.example.com"),
    ]


def variant(obj: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """`obj` changed the way a watch event changes one: a label, a slice's devices, a claim's count."""
    out = copy.deepcopy(obj)
    out["metadata"].setdefault("labels", {})["rev"] = str(rng.randint(0, 3))
    spec = out.get("spec") or {}
    if out["kind"] == "ResourceSlice" and rng.random() < 0.5:
        spec["devices"] = spec["devices"][: rng.randint(1, len(spec["devices"]))]
        if rng.random() < 0.3:
            spec["devices"][0]["name"] = "GPU_BAD"  # an invalid name: the slice is left out
    if out["kind"] == "ResourceClaim" and "status" not in out and rng.random() < 0.5:
        spec["devices"]["requests"][0]["exactly"]["count"] = rng.randint(1, 4)
    if out["kind"] == "Namespace":
        out["metadata"]["labels"]["tier"] = rng.choice(["gold", "bronze"])
    return out


def key(obj: dict[str, Any]) -> tuple[str, str | None, str]:
    meta = obj["metadata"]
    return obj["kind"], meta.get("namespace"), meta["name"]


def reports(report: AuditReport) -> list[dict[str, Any]]:
    return policy_reports(report, 0.0)


@pytest.mark.parametrize("seed", range(4))
def test_incremental_runs_give_the_full_audits_reports_after_random_events(seed: int) -> None:
    rng = random.Random(seed)
    pool = candidates()
    objects = AuditObjects()
    for obj in pool[:11]:
        objects.apply(copy.deepcopy(obj))
    objects.publish()
    inc = IncrementalAudit()
    for step in range(10):
        for _ in range(rng.randint(1, 3)):  # the events between two runs
            present = [obj for kind in AUDITED_KINDS for obj in objects.snapshot().objects(kind).values()]
            if present and rng.random() < 0.3:
                kind, ns, name = key(rng.choice(present))
                objects.delete(kind, ns, name)
            else:
                objects.apply(variant(rng.choice(pool), rng))
            objects.publish()
        got, want = incremental(inc, objects), full(objects)
        assert got.to_dict() == want.to_dict(), f"seed {seed}, step {step}"
        assert reports(got) == reports(want)


def test_one_event_rejudges_that_object_and_its_group_only() -> None:
    objects = AuditObjects()
    pool = candidates()
    for obj in pool:
        objects.apply(copy.deepcopy(obj))
    objects.publish()
    inc = IncrementalAudit()
    incremental(inc, objects)
    every = len(pool)
    assert inc.counts["checked"] == every

    incremental(inc, objects)  # nothing changed: nothing judged again, the Pending Pods explained again
    assert inc.counts["checked"] == 0 and inc.counts["judged"] == 0
    assert inc.counts["explained"] == 3  # --max-pending-pods

    part = copy.deepcopy(next(x for x in pool if x["metadata"]["name"] == "node-b-part-0"))
    part["spec"]["devices"][0]["attributes"]["model"] = {"string": "A100"}
    objects.apply(part)
    objects.publish()
    got = incremental(inc, objects)
    assert inc.counts["checked"] == 1  # the slice
    assert inc.counts["judged"] == 2  # the slice and the other slice of its pool
    assert got.to_dict() == full(objects).to_dict()

    orphan = copy.deepcopy(next(x for x in pool if x["metadata"]["name"] == "orphan"))
    orphan["metadata"]["labels"] = {"touched": "yes"}
    objects.apply(orphan)
    objects.publish()
    got = incremental(inc, objects)
    assert (inc.counts["checked"], inc.counts["judged"]) == (1, 1)
    assert got.to_dict() == full(objects).to_dict()

    objects.apply(o.device_class("third.example.com"))  # a class: every claim, template and class again
    objects.publish()
    got = incremental(inc, objects)
    classes_and_claims = sum(
        len(objects.snapshot().objects(k)) for k in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate")
    )
    assert inc.counts["checked"] == 1
    assert inc.counts["judged"] == classes_and_claims
    assert got.to_dict() == full(objects).to_dict()


def test_a_policy_change_rejudges_everything() -> None:
    objects = AuditObjects()
    for obj in candidates():
        objects.apply(copy.deepcopy(obj))
    objects.publish()
    inc = IncrementalAudit()
    incremental(inc, objects)
    stricter = AuditOptions(
        version="1.37",
        search_runs=0,
        jobs=1,
        max_pending_pods=3,
        policy=Policy(disabled=frozenset({"claim.unknown-device-class"})),
    )
    got = incremental(inc, objects, stricter)
    assert inc.counts["checked"] == len(candidates())
    assert got.to_dict() == full(objects, stricter).to_dict()
    assert got.to_dict() != full(objects).to_dict()
