"""DeviceTaintRule blast radius through the real webhook: `draguard serve --state DIR --policy FILE` over
HTTPS on 127.0.0.1 (tests/fixtures/taints/: two nodes of four GPUs, allocated claims with and without
tolerations, their Pods; a policy of at most 4 devices and 2 evicted Pods), real AdmissionReviews of the
fixture rules: the counts as a warning and the `taint-blast-radius` audit annotation, a denial above the
limits, the acknowledgement annotation letting it through, an UPDATE that keeps the spec not denied."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from server_proc import ROOT, Server, review_of, served

FIXTURES = ROOT / "tests" / "fixtures" / "taints"
ACK = "draguard.io/acknowledge-blast-radius"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("taints")
    yield from served(tmp, FIXTURES / "cluster", "--policy", str(FIXTURES / "policy.yaml"))


def _rule(file: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((FIXTURES / file).read_text())
    return data


def _review(server: Server, ar: dict[str, Any]) -> dict[str, Any]:
    status, answer = server.review(ar)
    assert status == 200, answer
    response: dict[str, Any] = answer["response"]
    return response


def test_counts_in_a_warning_and_the_audit_annotation(server: Server) -> None:
    r = _review(server, review_of(_rule("node-a-maintenance.yaml")))
    assert r["allowed"] is True
    assert any(
        w.startswith(
            "DeviceTaintRule node-a-maintenance (NoExecute): taints 4 device(s); 3 allocated claim(s)"
        )
        and "Pods evicted: 1 at once, 1 after their tolerationSeconds; 1 tolerate it" in w
        for w in r["warnings"]
    ), r
    audit = json.loads(r["auditAnnotations"]["taint-blast-radius"])
    assert audit == {
        "effect": "NoExecute",
        "everyDevice": False,
        "devices": 4,
        "claims": 3,
        "claimsEvicting": 2,
        "podsEvicted": 1,
        "podsDelayed": 1,
        "podsTolerating": 1,
    }


def test_above_the_limits_denied_unless_acknowledged(server: Server) -> None:
    rule = _rule("everything.yaml")
    r = _review(server, review_of(rule))
    assert r["allowed"] is False
    message = r["status"]["message"]
    assert "an empty deviceSelector taints every device of the cluster (8)" in message
    assert "8 devices > maxDevices 4; 3 evicted Pods > maxPods 2" in message
    assert f'{ACK}: "true"' in message
    assert [c["field"] for c in r["status"]["details"]["causes"]] == ["spec.deviceSelector"]
    assert r["auditAnnotations"]["denied-by"] == "admission.taint-blast-radius"

    acked = copy.deepcopy(rule)
    acked["metadata"]["annotations"] = {ACK: "true"}
    r = _review(server, review_of(acked))
    assert r["allowed"] is True
    assert json.loads(r["auditAnnotations"]["taint-blast-radius"])["acknowledged"] is True
    assert any("taints every device of the cluster" in w and "acknowledged" in w for w in r["warnings"])

    acked["metadata"]["annotations"] = {ACK: "yes"}  # only "true" acknowledges
    assert _review(server, review_of(acked))["allowed"] is False


def test_an_update_that_keeps_the_spec_is_not_denied(server: Server) -> None:
    old = _rule("everything.yaml")
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"team": "infra"}
    ar = review_of(new, operation="UPDATE")
    ar["request"]["oldObject"] = old
    r = _review(server, ar)
    assert r["allowed"] is True, r
    narrower = copy.deepcopy(old)
    narrower["spec"]["deviceSelector"] = {"driver": "gpu.example.com"}  # still all 8: a changed spec
    ar = review_of(narrower, operation="UPDATE")
    ar["request"]["oldObject"] = old
    assert _review(server, ar)["allowed"] is False
