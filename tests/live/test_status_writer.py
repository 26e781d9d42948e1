"""The status writer (webhook/state/live/status.py) against the API-server stand-in process: a merge patch of
the status subresource, retried after 5xx, dropped on 409 (the object changed since: the patch's
resourceVersion is a precondition), given up on a status retrying cannot fix (403)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.standin.process import StandIn, wait_for
from webhook.state.live import Backoff, KubeClient, load_api_client
from webhook.state.live.kinds import POLICIES
from webhook.state.live.status import StatusWriter, WriteResult


class Results:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[WriteResult] = []

    def __call__(self, result: WriteResult) -> None:
        with self.lock:
            self.seen.append(result)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[StandIn]:
    with StandIn.start(tmp_path) as server:
        server.seed(
            [
                {
                    "apiVersion": POLICIES.api_version,
                    "kind": POLICIES.kind,
                    "metadata": {"name": "p"},
                    "spec": {},
                }
            ]
        )
        yield server


def _writer(api: StandIn, tmp_path: Path, results: Results) -> StatusWriter:
    client = KubeClient(load_api_client(str(api.kubeconfig(tmp_path / "kc"))))
    writer = StatusWriter(client, POLICIES.path, "draguard", results, backoff=Backoff(initial=0.05, cap=0.1))
    writer.start()
    return writer


def _stored(api: StandIn) -> dict[str, Any]:
    code, body, _ = api.request("GET", f"{POLICIES.path}/p")
    assert code == 200
    obj: dict[str, Any] = body
    return obj


def test_a_patch_is_written_to_the_status_only_and_retried_after_server_errors(
    api: StandIn, tmp_path: Path
) -> None:
    results = Results()
    writer = _writer(api, tmp_path, results)
    try:
        api.fail(2, 500, path="/status", method="PATCH")
        rv = _stored(api)["metadata"]["resourceVersion"]
        writer.submit(
            "p", {"metadata": {"resourceVersion": rv}, "status": {"observedGeneration": 1}, "spec": {"x": 1}}
        )
        wait_for("the write", lambda: results.seen == ["ok"])
        stored = _stored(api)
        assert stored["status"] == {"observedGeneration": 1} and stored["spec"] == {}  # status only
        patches = [r for r in api.requests() if r["method"] == "PATCH"]
        assert [r["status"] for r in patches] == [500, 500, 200]
        assert patches[-1]["query"] == {"fieldManager": "draguard"}
    finally:
        writer.stop()
        writer.client.close()


def test_a_stale_patch_is_dropped_and_a_forbidden_one_given_up(api: StandIn, tmp_path: Path) -> None:
    results = Results()
    writer = _writer(api, tmp_path, results)
    try:
        writer.submit("p", {"metadata": {"resourceVersion": "1"}, "status": {"observedGeneration": 1}})
        wait_for("the conflict", lambda: results.seen == ["conflict"])
        assert "status" not in _stored(api)
        api.fail(10, 403, path="/status", method="PATCH")
        writer.submit("p", {"status": {"observedGeneration": 2}})
        wait_for("the error", lambda: results.seen == ["conflict", "error"])
        assert [r["status"] for r in api.requests() if r["method"] == "PATCH"] == [409, 403]  # not retried
    finally:
        writer.stop()
        writer.client.close()
