"""One replica of `draguard serve --state cluster` (its defaults, many request threads) lists and watches every
kind exactly once: the API-server stand-in's request log counts them (issue 18: one state per replica)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from tests.server.server_proc import Server, make_certs
from tests.standin import objects as o
from tests.standin.process import StandIn, wait_for
from webhook.state.live.kinds import POLICIES, watched_for


def test_one_list_and_one_watch_per_kind_whatever_the_threads(tmp_path: Path, monkeypatch: Any) -> None:
    kinds = [*watched_for("1.37"), POLICIES]
    paths = {k.path for k in kinds}
    with StandIn.start(tmp_path, tls=True) as api:
        api.seed([o.node("node-a"), o.device_class(), o.resource_slice("node-a", 2), o.claim("c", 1)])
        certs = tmp_path / "certs"
        make_certs(certs)
        monkeypatch.setenv("KUBECONFIG", str(api.kubeconfig(tmp_path / "kubeconfig")))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        # no --workers: the replica's default; more request threads than kinds
        server = Server(tmp_path, "--state", "cluster", "--certs", str(certs), "--threads", "12", certs=certs)
        try:
            # every worker the arbiter booted has synced (each warms its engine once, after its lists)
            wait_for(
                "every worker's state",
                lambda: _count(server, "Booting worker") == _count(server, "warmed up"),
            )
            wait_for("a watch of every kind", lambda: len(api.watches()) >= len(kinds))
            log = [r for r in api.requests() if not r["path"].startswith("/_control")]
            lists = Counter(r["path"] for r in log if r["method"] == "GET" and "watch" not in r["query"])
            watches = Counter(r["path"] for r in log if "watch" in r["query"])
            assert lists == dict.fromkeys(paths, 1)
            assert watches == dict.fromkeys(paths, 1)
            assert sorted(w["resource"] for w in api.watches()) == sorted(k.plural for k in kinds)
            assert _count(server, "Booting worker") == 1
            assert "12 thread(s)" in server.log()
        finally:
            code = server.stop()
        assert code == 0, server.log()


def _count(server: Server, text: str) -> int:
    return len(re.findall(re.escape(text), server.log()))
