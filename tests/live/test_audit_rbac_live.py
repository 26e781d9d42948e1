"""`draguard audit rbac` live: a real process lists the API-server stand-in's roles, bindings and
Namespaces through a kubeconfig (ValidatingAdmissionPolicies are not served there: skipped, so a driver's
slice writes stay a warning) and reports as it would from the same objects in files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import forkrun
from tests.cliproc import ROOT
from tests.standin.process import StandIn

FIXTURES = ROOT / "tests" / "fixtures"
FILES = [FIXTURES / "realistic/dra-example-driver/rbac/rbac.yaml", FIXTURES / "rbac/hazards/cluster.yaml"]


def objects() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in FILES:
        for doc in yaml.safe_load_all(f.read_text()):
            if doc and doc.get("kind") == "List":
                out += doc["items"]
            elif doc and doc.get("kind") != "ServiceAccount":
                out.append(doc)
    return out


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    with StandIn.start(tmp_path_factory.mktemp("standin")) as server:
        server.seed(objects())
        yield server


def run(*args: str) -> tuple[int, dict[str, Any], str]:
    p = forkrun.run(["audit", "rbac", *args, "-o", "json"], cwd=ROOT)
    return p.returncode, json.loads(p.stdout or "{}"), p.stderr


def test_live_is_as_from_files(api: StandIn, tmp_path: Path) -> None:
    code, live, stderr = run("--kubeconfig", str(api.kubeconfig(tmp_path / "kubeconfig")))
    assert (code, stderr) == (1, "")
    _, files, _ = run(*[a for f in FILES for a in ("--cluster", str(f))])
    assert live["findings"] and live["findings"] == files["findings"]
    assert live["clusterAdmins"] == ["Group ops"]
