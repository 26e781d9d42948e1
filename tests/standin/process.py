"""Runs the API-server stand-in (tests/standin/apiserver.py) as a real process and drives its control API.

with StandIn.start(tmp_path) as api:            # HTTP; StandIn.start(tmp_path, tls=True) for HTTPS
    api.seed([slice_obj, class_obj])
    kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")   # for `draguard serve --kubeconfig`
    api.expire(drop=True)                       # force every watcher into a 410 → relist
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from tests.server.server_proc import wait_for  # also what the stand-in tests wait with

ROOT = Path(__file__).resolve().parents[2]
WAIT = 120.0  # seconds to wait for something that should happen (the machine may be busy)


class StandIn:
    def __init__(
        self,
        tmp: Path,
        *,
        tls: bool = False,
        admission_config: Path | None = None,
        extra: Iterable[str] = (),
        pythonpath: Iterable[Path] = (),
    ) -> None:
        self.tmp = tmp
        self.ca: Path | None = None
        args = [sys.executable, "-m", "tests.standin.apiserver", "--port", "0"]
        stamp = time.monotonic_ns()
        ready = tmp / f"standin-{stamp}.port"
        args += ["--ready-file", str(ready)]
        if tls:
            certs = tmp / f"standin-certs-{stamp}"
            p = subprocess.run(
                [sys.executable, "-m", "webhook.cli.main", "certs", "--dir", str(certs)]
                + ["--dns", "localhost", "--ip", "127.0.0.1"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            assert p.returncode == 0, p.stderr
            self.ca = certs / "ca.crt"
            args += ["--tls-cert", str(certs / "tls.crt"), "--tls-key", str(certs / "tls.key")]
        if admission_config is not None:
            args += ["--admission-config", str(admission_config)]
        args += list(extra)
        self.log_path = tmp / f"standin-{stamp}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed in stop())
        path = os.pathsep.join([str(ROOT), *map(str, pythonpath)])  # pythonpath: where an admission module is
        self.proc = subprocess.Popen(
            args, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": path}
        )
        self.port = int(wait_for("the stand-in to listen", lambda: self._ready(ready)))
        self.scheme = "https" if tls else "http"
        self.url = f"{self.scheme}://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, tmp: Path, **kw: Any) -> StandIn:
        return cls(tmp, **kw)

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _ready(self, ready: Path) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"the stand-in exited with {self.proc.returncode}:\n{self.log()}")
        return ready.read_text().strip() if ready.exists() else None

    def log(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    # -- HTTP --
    def connection(self, timeout: float = WAIT) -> http.client.HTTPConnection:
        if self.scheme == "https":
            ctx = ssl.create_default_context(cafile=str(self.ca))
            return http.client.HTTPSConnection("127.0.0.1", self.port, context=ctx, timeout=timeout)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        token: str = "",
    ) -> tuple[int, Any, http.client.HTTPMessage]:
        """One request; the answer's JSON (or text) and headers."""
        c = self.connection()
        try:
            data = None if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
            headers = {"Content-Type": content_type} if data is not None else {}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            c.request(method, path, body=data, headers=headers)
            r = c.getresponse()
            raw = r.read()
            try:
                return r.status, json.loads(raw), r.headers
            except ValueError:
                return r.status, raw.decode(), r.headers
        finally:
            c.close()

    def control(self, method: str, what: str, body: Any = None) -> Any:
        status, answer, _ = self.request(method, f"/_control/{what}", body)
        assert status == 200, (status, answer)
        return answer

    # -- the control API --
    def seed(self, objects: Iterable[dict[str, Any]]) -> int:
        """Create-or-replace without admission; returns the resourceVersion after the last write."""
        rv: int = self.control("POST", "seed", {"items": list(objects)})["resourceVersion"]
        return rv

    put = seed

    def delete(self, *refs: dict[str, Any]) -> int:
        rv: int = self.control("POST", "delete", {"items": list(refs)})["resourceVersion"]
        return rv

    def expire(self, drop: bool = False) -> int:
        rv: int = self.control("POST", "expire", {"drop": drop})["resourceVersion"]
        return rv

    def drop_watches(self, graceful: bool = False) -> None:
        self.control("POST", "drop-watches", {"graceful": graceful})

    def bookmark(self) -> None:
        self.control("POST", "bookmark", {})

    def configure(self, **settings: Any) -> None:
        """listDelaySeconds, bookmarkIntervalSeconds, stallWatches, historyLimit."""
        self.control("POST", "config", settings)

    def fail(self, count: int, code: int = 500, **match: Any) -> None:
        """The next `count` requests (matching path substring / method) fail with `code`."""
        self.control("POST", "fail", {"count": count, "code": code, **match})

    def clear_failures(self) -> None:
        self.control("POST", "fail", {"clear": True})

    def requests(self, clear: bool = False) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.control("DELETE" if clear else "GET", "requests")["items"]
        return items

    def state(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.control("GET", "state")
        return answer

    def watches(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.control("GET", "watches")["items"]
        return items

    def kubeconfig(self, path: Path, token: str = "") -> Path:
        """A kubeconfig pointing at this stand-in (its CA for HTTPS)."""
        cluster: dict[str, Any] = {"server": self.url}
        if self.ca is not None:
            cluster["certificate-authority"] = str(self.ca)
        user: dict[str, Any] = {"token": token} if token else {}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "standin", "cluster": cluster}],
            "users": [{"name": "standin", "user": user}],
            "contexts": [{"name": "standin", "context": {"cluster": "standin", "user": "standin"}}],
            "current-context": "standin",
        }
        path.write_text(yaml.safe_dump(config))
        return path
