"""Issue 9 §4 end to end, with real processes on 127.0.0.1: clients write through the API-server stand-in,
whose admission side plays the rendered webhook configurations against a real `draguard serve --state
cluster` (gunicorn, one worker, certificates from `draguard certs`) that lists and watches the same
stand-in. One cluster serves the module; each test uses its own objects and leaves the webhook running.

Figures (latencies, outage windows) are printed as `e2e: ...` lines (`pytest -s`, bench/e2e_report.py);
nothing here asserts on time except generous caps on waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.cluster import (
    Answer,
    Cluster,
    allocated_claim,
    claim,
    device_class,
    namespace,
    node,
    pod,
    resource_slice,
    template,
    wait_for,
)

DRIVER_USER = "system:serviceaccount:gpu-driver:kubelet-plugin"
FEASIBILITY = "admission.feasibility"
POLICY = {"feasibility": {"kinds": {"Pod": "enforce"}}}


def cluster_objects() -> list[dict[str, Any]]:
    """Two nodes of 4 GPUs, 7 of them held by allocated claims; a NIC class no driver has published yet."""
    return [
        namespace("ml"),
        namespace("draguard-system"),
        node("node-a"),
        node("node-b"),
        device_class("gpu.example.com"),
        device_class("nic.example.com"),
        resource_slice("node-a", "gpu.example.com", 4),
        resource_slice("node-b", "gpu.example.com", 4),
        template("two-gpus", "gpu.example.com", 2),
        template("five-gpus", "gpu.example.com", 5),
        template("one-nic", "nic.example.com", 1),
        allocated_claim("hold-a", "gpu.example.com", "node-a", [f"gpu-{i}" for i in range(4)]),
        allocated_claim("hold-b", "gpu.example.com", "node-b", [f"gpu-{i}" for i in range(3)]),
    ]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    t0 = time.monotonic()
    c = Cluster.start(tmp_path_factory.mktemp("e2e"), cluster_objects(), policy=POLICY)
    print(f"\ne2e: setup: stand-in + draguard serve ready in {time.monotonic() - t0:.2f} s ({c.source})")
    try:
        yield c
        print(f"e2e: {call_latencies(c.admission_log())}")
    finally:
        c.stop()


def call_latencies(log: list[str]) -> str:
    """Percentiles of the webhook calls that were answered (the stand-in's admission log)."""
    seconds = sorted(
        float(line.split()[4][:-1])
        for line in log
        if line.startswith("admission:   ") and line.split()[3] in ("allowed", "denied", "patched")
    )
    if not seconds:
        return "no webhook call answered"

    def pct(q: float) -> float:
        return seconds[min(len(seconds) - 1, int(q * len(seconds)))] * 1000

    return (
        f"{len(seconds)} answered webhook calls (stand-in → draguard over HTTPS, kept-alive connections): "
        f"p50 {pct(0.5):.0f} ms, p99 {pct(0.99):.0f} ms, max {seconds[-1] * 1000:.0f} ms"
    )


def calls_for(cluster: Cluster, what: str) -> list[str]:
    """The admission log lines of the last write whose first line contains `what`, and its calls."""
    lines = cluster.admission_log()
    start = max(i for i, line in enumerate(lines) if what in line and "->" in line)
    uid = lines[start].split("uid=")[1].split()[0]
    return [line for line in lines if f"uid={uid}" in line]


def feasibility_warnings(answer: Answer) -> list[str]:
    return [w for w in answer.warnings if FEASIBILITY in w]


def test_a_bad_resource_slice_is_denied_with_its_field_path(cluster: Cluster) -> None:
    bad = resource_slice("node-c", "gpu.example.com", 2, name="node-c-bad")
    bad["spec"]["devices"][1]["name"] = "GPU_1"
    answer = cluster.create(bad, user=DRIVER_USER)
    assert (answer.status, answer.body["reason"]) == (422, "Invalid"), answer.body
    assert answer.message.startswith(
        'admission webhook "objects.validate.draguard.io" denied the request: '
        'ResourceSlice.resource.k8s.io "node-c-bad" is invalid: spec.devices[1].name: Invalid value: "GPU_1"'
    )
    causes = answer.body["details"]["causes"]  # the webhook's details, passed through as the API server does
    assert [c["field"] for c in causes] == ["spec.devices[1].name"]
    assert answer.warnings == []  # kubectl prints warnings above the error: none repeats the denial
    assert cluster.get("ResourceSlice", "node-c-bad")[0] == 404  # nothing stored
    log = calls_for(cluster, "ResourceSlice node-c-bad")
    assert "-> 422 Invalid" in log[0]
    assert [line.split()[1:4] for line in log[1:]] == [
        ["mutating", "objects.mutate.draguard.io", "allowed"],
        ["validating", "objects.validate.draguard.io", "denied"],
    ]
    good = cluster.create(resource_slice("node-c", "gpu.example.com", 2), user=DRIVER_USER)
    assert good.status == 201 and cluster.get("ResourceSlice", "node-c-gpu.example.com")[0] == 200
    print(
        f"e2e: bad ResourceSlice denied at spec.devices[1].name in {answer.seconds * 1000:.0f} ms (client round trip)"
    )


def test_a_pod_that_can_never_fit_is_denied_and_one_that_must_wait_is_warned(cluster: Cluster) -> None:
    never = cluster.create(pod("five", "five-gpus"))
    assert (never.status, never.body["reason"]) == (422, "Invalid"), never.body
    assert never.message.startswith(
        'admission webhook "pods.validate.draguard.io" denied the request: Pod "five" is invalid: '
        'spec.resourceClaims[0]: Forbidden: Pod "ml/five" can never be allocated on this cluster'
    )
    assert "5 requested" in never.message and cluster.get("Pod", "five", "ml")[0] == 404
    wait = cluster.create(pod("two", "two-gpus"))
    assert wait.status == 201, wait.body
    (warning,) = feasibility_warnings(wait)
    assert warning.startswith("Pod 'ml/two' cannot be allocated now (it will wait until devices are freed")
    assert warning.endswith("(admission.feasibility: busy, mode enforce)")
    assert cluster.get("Pod", "two", "ml")[0] == 200
    print(
        f"e2e: Pod that can never fit denied in {never.seconds * 1000:.0f} ms; "
        f"Pod that must wait admitted with a warning in {wait.seconds * 1000:.0f} ms"
    )


def test_writes_the_configurations_exclude_never_reach_the_webhook(cluster: Cluster) -> None:
    plain = cluster.create(pod("plain-", None), dry_run=True)  # no devices: the matchCondition skips it
    assert plain.status == 201 and calls_for(cluster, "Pod ml/plain-")[1:] == []
    system = cluster.create(pod("sys-", "five-gpus", ns="kube-system"), dry_run=True)
    assert system.status == 201 and calls_for(cluster, "Pod kube-system/sys-")[1:] == []
    own = template("own-template", "gpu.example.com", 9, ns="draguard-system")
    mine = cluster.create(own, user="system:serviceaccount:draguard-system:draguard", dry_run=True)
    assert (
        mine.status == 201
        and calls_for(cluster, "ResourceClaimTemplate draguard-system/own-template")[1:] == []
    )
    theirs = cluster.create(template("t", "gpu.example.com", 1), dry_run=True)
    assert theirs.status == 201
    assert [line.split()[2] for line in calls_for(cluster, "ResourceClaimTemplate ml/t")[1:]] == [
        "objects.mutate.draguard.io",
        "objects.validate.draguard.io",
    ]


def test_a_status_write_reaches_the_status_webhooks_only(cluster: Cluster) -> None:
    created = cluster.create(claim("c-status", "gpu.example.com", 1))
    assert created.status == 201, created.body
    stored = created.body
    stored["status"] = allocated_claim("c-status", "gpu.example.com", "node-b", ["gpu-3"])["status"]
    answer = cluster.update(stored, user="system:kube-scheduler", subresource="status")
    assert answer.status == 200, answer.body
    assert answer.body["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-3"
    log = calls_for(cluster, "UPDATE ResourceClaim ml/c-status")
    assert [line.split()[1:4] for line in log[1:]] == [
        ["mutating", "objects.mutate.draguard.io", "allowed"],  # its rules name resourceclaims/status
        ["validating", "claim-status.validate.draguard.io", "allowed"],  # not objects.validate (no /status)
    ]


class Traffic:
    """Dry-run writes in a loop on their own thread, every answer recorded (None: no answer at all)."""

    def __init__(self, cluster: Cluster, make: Callable[[], dict[str, Any]], user: str = "jane") -> None:
        self.cluster, self.make, self.user = cluster, make, user
        self.answers: list[tuple[float, Answer | None, str]] = []  # (sent at, answer, error)
        self.ended: list[float] = []  # when each answer came, in the same order
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            t = time.monotonic()
            try:
                answer: tuple[float, Answer | None, str] = (
                    t,
                    self.cluster.create(self.make(), user=self.user, dry_run=True),
                    "",
                )
            except Exception as e:  # recorded: the test fails on any write without an answer
                answer = (t, None, f"{type(e).__name__}: {e}")
            self.ended.append(time.monotonic())
            self.answers.append(answer)
            self._stop.wait(0.02)  # a steady stream, not a flood (two cores shared with the servers)

    def wait(self, n: int) -> None:
        mark = len(self.answers)
        wait_for(f"{n} more answers", lambda: len(self.answers) >= mark + n)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(120)


def test_a_slice_published_while_pods_are_admitted_changes_the_next_verdict(cluster: Cluster) -> None:
    traffic = Traffic(cluster, lambda: pod("nic-", "one-nic"))
    try:
        traffic.wait(3)
        assert all(a is not None and a.status == 422 for _, a, _ in traffic.answers), traffic.answers[:3]
        published = cluster.create(resource_slice("node-b", "nic.example.com", 2), user=DRIVER_USER)
        t_published = time.monotonic()
        assert published.status == 201, published.body
        rv = int(published.body["metadata"]["resourceVersion"])
        wait_for("the slice in draguard's state", lambda: cluster.visible("ResourceSlice", rv), every=0.01)
        t_visible = time.monotonic()

        def admitted() -> bool:
            return any(t > t_published and a is not None and a.status == 201 for t, a, _ in traffic.answers)

        wait_for("a Pod admitted after the slice was published", admitted)
        t_admitted = next(
            t + a.seconds for t, a, _ in traffic.answers if t > t_published and a and a.status == 201
        )
        traffic.wait(3)
    finally:
        traffic.stop()
    # one worker: once /readyz shows the slice, every verdict is made on a state that holds it
    after = [a for t, a, _ in traffic.answers if t > t_visible]
    assert after and all(a is not None and a.status == 201 and not feasibility_warnings(a) for a in after)
    before = [a for t, a, _ in traffic.answers if t + (a.seconds if a else 0) < t_published]
    assert before and all(a is not None and a.status == 422 for a in before)
    print(
        f"e2e: slice published → visible in draguard's state (/readyz resourceVersion) after "
        f"{(t_visible - t_published) * 1000:.0f} ms; → first Pod admitted after {(t_admitted - t_published) * 1000:.0f} ms "
        f"({len(traffic.answers)} Pod writes, {len(before)} denied before, {len(after)} admitted after)"
    )


def _pod_kind(a: Answer) -> str:
    if a.status == 422 and 'admission webhook "pods.validate.draguard.io" denied' in a.message:
        return "denied"
    if a.status == 201 and not feasibility_warnings(a):
        return "failed-open"  # the webhook was not reached: failurePolicy Ignore admits
    return "unexpected"


def _template_kind(a: Answer) -> str:
    if a.status == 201:
        return "allowed"
    if (
        a.status == 500
        and a.body.get("reason") == "InternalError"
        and 'failed calling webhook "objects.validate.draguard.io"' in a.message
    ):
        return "failed-closed"  # failurePolicy Fail
    return "unexpected"


def test_the_webhook_restarted_mid_traffic_loses_no_admission(cluster: Cluster) -> None:
    before = cluster.readyz()
    assert before is not None
    pods = Traffic(cluster, lambda: pod("five-", "five-gpus"))
    templates = Traffic(cluster, lambda: template("t-", "gpu.example.com", 1))
    try:
        pods.wait(3)
        templates.wait(3)
        assert cluster.stop_webhook() == 0  # out of the Service first, then SIGTERM: in-flight calls finish
        t_down = time.monotonic()
        cluster.api.configure(listDelaySeconds=1.0)  # the new webhook's initial lists are slow
        pods.wait(5)
        templates.wait(5)
        server = cluster.start_webhook(wait_ready=False)
        unanswered = 0
        while (ready := cluster.probe(timeout=0.5)) is None:  # no connection taken until it has synced
            unanswered += 1
            assert server.proc.poll() is None, server.log()
            assert time.monotonic() - t_down < 120, "the restarted webhook never became ready"
            time.sleep(0.05)
        t_ready = time.monotonic()
        cluster.api.configure(listDelaySeconds=0)
        cluster.route(server.port)  # its readiness probe passed: back in the Service's endpoints
        t_routed = time.monotonic()
        pods.wait(5)
        templates.wait(5)
    finally:
        cluster.api.configure(listDelaySeconds=0)
        pods.stop()
        templates.stop()
        if cluster.readyz() is None:  # never leave the module without a webhook
            cluster.route(cluster.start_webhook().port)
    # ready only after the sync: the first /readyz that answered already holds the whole cluster
    assert ready["objects"] == before["objects"] and set(ready["resourceVersions"]) == set(
        before["resourceVersions"]
    )
    assert cluster.metrics()[("draguard_state_synced", ())] == 1
    # no admission lost: every write was answered, each as its webhook's state and failurePolicy say
    for traffic, classify in ((pods, _pod_kind), (templates, _template_kind)):
        assert all(a is not None for _, a, _ in traffic.answers), [
            e for _, a, e in traffic.answers if a is None
        ]
        kinds = [(t, classify(a)) for t, a, _ in traffic.answers if a is not None]
        assert "unexpected" not in {k for _, k in kinds}, [
            (a.status, a.body, a.warnings) for _, a, _ in traffic.answers if a and classify(a) == "unexpected"
        ]
        # the outage: writes sent after the old webhook stopped and answered before the new one was routed
        # (a write sent while it synced may be answered by it, on a loaded machine, once it is routed)
        ended = dict(zip((t for t, _, _ in traffic.answers), traffic.ended, strict=True))
        outage = {k for t, k in kinds if t_down < t and ended[t] < t_routed}
        assert {k for t, k in kinds if t_down < t < t_ready and ended[t] < t_routed}, (
            "no write during the outage"
        )
        assert outage == ({"failed-open"} if classify is _pod_kind else {"failed-closed"}), outage
        assert {k for t, k in kinds if t > t_routed} == ({"denied"} if classify is _pod_kind else {"allowed"})
    print(
        f"e2e: webhook restart: {len(pods.answers)} Pod + {len(templates.answers)} template writes, all answered; "
        f"unreachable for {(t_ready - t_down):.2f} s (stop, start, 1 s slow lists; {unanswered} readiness probes "
        f"(0.5 s) unanswered while syncing): Pods admitted (Ignore), templates 500 (Fail); "
        f"after: Pods denied, templates allowed"
    )


def test_a_slow_webhook_is_cut_at_its_timeout_seconds(cluster: Cluster) -> None:
    answers: dict[str, Answer] = {}

    def write(key: str, obj: dict[str, Any]) -> None:
        answers[key] = cluster.create(obj, dry_run=True)

    pid = cluster.pause_worker()
    try:
        threads = [
            threading.Thread(target=write, args=("pod", pod("slow-pod", "five-gpus"))),
            threading.Thread(target=write, args=("template", template("slow-t", "gpu.example.com", 1))),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        cluster.resume_worker(pid)
    pod_answer, template_answer = answers["pod"], answers["template"]
    assert pod_answer.status == 201 and not feasibility_warnings(pod_answer)  # Ignore: admitted unchecked
    assert _template_kind(template_answer) == "failed-closed", template_answer.body
    assert template_answer.message.endswith('/validate?timeout=5s": context deadline exceeded')
    pod_log, template_log = (
        calls_for(cluster, "Pod ml/slow-pod"),
        calls_for(cluster, "ResourceClaimTemplate ml/slow-t"),
    )
    assert "pods.validate.draguard.io failed-open" in pod_log[1] and "timeout=3s" in pod_log[1]
    assert "objects.mutate.draguard.io failed-open" in template_log[1] and "timeout=2s" in template_log[1]
    assert "objects.validate.draguard.io failed" in template_log[2]
    # the worker answers again once it runs
    assert _pod_kind(cluster.create(pod("after-slow", "five-gpus"), dry_run=True)) == "denied"
    print(
        f"e2e: slow webhook (worker stopped): Pod admitted after {pod_answer.seconds:.2f} s (timeoutSeconds 3, Ignore); "
        f"template rejected 500 after {template_answer.seconds:.2f} s (mutating 2 s Ignore + validating 5 s Fail)"
    )
