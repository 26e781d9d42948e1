"""`draguard explain pod` live: a real process lists the API-server stand-in through a kubeconfig (flag
or $KUBECONFIG) and explains a Pending Pod as it would from files — the holder and the Pod it is reserved
for, the changes verified, the invalid objects left out (named without a file) — and says when the API
server cannot be listed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import forkrun
from tests.cliproc import ROOT
from tests.simulate.test_explainpod import cluster
from tests.standin import objects as o
from tests.standin.process import StandIn


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    with StandIn.start(tmp_path_factory.mktemp("standin")) as server:
        server.seed(cluster())
        yield server


def explain(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    p = forkrun.run(["explain", "pod", *args], cwd=ROOT, env=env)
    return p.returncode, p.stdout, p.stderr


def test_a_pending_pod_is_explained_from_the_live_cluster(api: StandIn, tmp_path: Path) -> None:
    kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    code, stdout, stderr = explain("default/waiting", "--kubeconfig", kubeconfig, "-o", "json")
    assert (code, stderr) == (1, "")
    out = json.loads(stdout)
    assert (out["status"], out["verdict"]) == ("does-not-fit", "busy")
    (claim,) = out["claims"]
    held = {h["claim"]: h["reservedFor"] for n in claim["requests"][0]["nodes"] for h in n["heldBy"]}
    assert held["default/held"] == ["Pod default/runner (Running on node node-a)"]
    assert [(c["kind"], c["claim"]) for c in out["changes"]] == [
        ("lower-count", "default/want"),
        ("release-claim", "default/small"),
        ("release-claim", "default/held"),
    ]
    (lo,) = out["leftOut"]
    assert (lo["name"], lo["source"], lo["line"]) == ("node-c-bad", None, None)
    # every kind was listed, the Pods included, and nothing was written
    paths = {r["path"] for r in api.requests()}
    assert {"/api/v1/pods", "/api/v1/nodes", "/apis/resource.k8s.io/v1/resourceslices"} <= paths
    assert {r["method"] for r in api.requests()} == {"GET"}


def test_kubeconfig_from_the_environment_and_the_answers_of_other_pods(api: StandIn, tmp_path: Path) -> None:
    env = {**os.environ, "KUBECONFIG": str(api.kubeconfig(tmp_path / "kubeconfig"))}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    code, stdout, _ = explain("default/runner", env=env)
    assert code == 0 and stdout.splitlines()[0] == "Pod default/runner: not pending"
    code, _, stderr = explain("default/nope", env=env)
    assert code == 2 and 'Pod "default/nope" not found in the cluster' in stderr
    api.seed([o.claim("want", 1)])  # one GPU: node-b has one free
    code, stdout, _ = explain("default/waiting", env=env)
    assert code == 0 and stdout.splitlines()[0] == "Pod default/waiting: fits now"
    api.seed([o.claim("want", 2)])


def test_an_api_server_that_refuses_or_is_gone_is_one_line(api: StandIn, tmp_path: Path) -> None:
    kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    api.fail(1, code=403, path="/api/v1/pods")
    code, stdout, stderr = explain("default/waiting", "--kubeconfig", kubeconfig)
    assert (code, stdout) == (2, "")
    assert "the API server refused to list the cluster: 403" in stderr and "needs list on" in stderr
    gone = tmp_path / "gone"
    gone.write_text(
        (tmp_path / "kubeconfig").read_text().replace(f":{api.port}", ":1")  # nothing listens on port 1
    )
    code, _, stderr = explain("default/waiting", "--kubeconfig", str(gone))
    assert code == 2 and "cannot reach the API server" in stderr and len(stderr.splitlines()) == 1
