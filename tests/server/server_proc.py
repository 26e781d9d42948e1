"""A real `draguard serve` in a subprocess (gunicorn, HTTPS on 127.0.0.1, a free port), and a client
that verifies its certificate with the generated CA."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests import forkrun

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
WAIT = 120.0  # seconds a test waits for something that should happen (the machine may be busy)


def draguard(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return forkrun.run(args, cwd=cwd or ROOT, env=env)


def make_certs(directory: Path, *extra: str) -> str:
    """`draguard certs` for 127.0.0.1/localhost; returns the printed caBundle."""
    p = draguard("certs", "--dir", str(directory), "--dns", "localhost", "--ip", "127.0.0.1", *extra)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def wait_for(what: str, check: Callable[[], Any], timeout: float = WAIT, every: float = 0.05) -> Any:
    end = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(every)


class Server:
    """`draguard serve ARGS --port 0` in `cwd`; stderr goes to a log file the test can read."""

    def __init__(
        self,
        tmp: Path,
        *args: str,
        cwd: Path | None = None,
        certs: Path | None = None,
        client: tuple[Path, Path] | None = None,
        wait_ready: bool = True,
        drain: str | None = "0",
    ) -> None:
        if drain is not None and "--drain-seconds" not in args:  # tests stop servers often: no 5-s drain
            args = (*args, "--drain-seconds", drain)
        self.client = client  # the client certificate the test's own requests present
        self.log_path = tmp / f"server-{time.monotonic_ns()}.log"
        self.certs = certs
        self.cwd = cwd or ROOT
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "webhook.cli.main", "serve", "--port", "0", *args],
            cwd=self.cwd,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self.port = wait_for("the server to listen", self._listening)
        if wait_ready:
            wait_for("the server to be ready", lambda: self.get("/readyz")[0] == 200)

    def log(self) -> str:
        return self.log_path.read_text()

    def _listening(self) -> int | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"draguard serve exited with {self.proc.returncode}:\n{self.log()}")
        m = re.search(r"Listening at: https://127\.0\.0\.1:(\d+)", self.log())
        return int(m.group(1)) if m else None

    def context(
        self, client_cert: tuple[Path, Path] | None = None, anonymous: bool = False
    ) -> ssl.SSLContext:
        ca = (self.certs or self.cwd / "certs") / "ca.crt"
        ctx = ssl.create_default_context(cafile=str(ca))
        client_cert = client_cert or (None if anonymous else self.client)
        if client_cert is not None:
            ctx.load_cert_chain(*client_cert)
        return ctx

    def connection(self, ctx: ssl.SSLContext | None = None) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(
            "127.0.0.1", self.port, context=ctx or self.context(), timeout=WAIT
        )

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        conn: http.client.HTTPSConnection | None = None,
    ) -> tuple[int, bytes]:
        own = conn is None
        c = conn or self.connection()
        try:
            c.request(method, path, body=body, headers=headers or {"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            if own:
                c.close()

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            return self.request("GET", path)
        except (OSError, http.client.HTTPException):
            return 0, b""

    def review(self, ar: dict[str, Any], path: str = "/validate", **kw: Any) -> tuple[int, Any]:
        status, data = self.request("POST", path, json.dumps(ar).encode(), **kw)
        return status, json.loads(data)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._log.close()
        return code


class StateServer(Server):
    """`draguard serve --state STATE ARGS`: `state` is the directory it serves (a test may change it)."""

    def __init__(self, tmp: Path, state: Path, *args: str, **kw: Any) -> None:
        self.state = state
        super().__init__(tmp, "--state", str(state), *args, **kw)


def served(
    tmp: Path,
    cluster: Path,
    *args: str,
    workers: int = 1,
    ignore: Callable[[str, list[str]], set[str]] | None = None,
) -> Iterator[StateServer]:
    """A module fixture's server: `draguard serve` of a copy of `cluster` (tmp/state) with new certificates
    (tmp/certs), `workers` workers and `args`; stopped when the module is done (it must exit 0)."""
    state = tmp / "state"
    shutil.copytree(cluster, state, ignore=ignore)
    certs = tmp / "certs"
    make_certs(certs)
    s = StateServer(tmp, state, "--certs", str(certs), "--workers", str(workers), *args, certs=certs)
    yield s
    assert s.stop() == 0, s.log()


class Reviewer:
    """Reviews of one object in a loop on one kept-alive connection while a test changes the cluster, each
    answer named by `verdict(answer)` and timed (monotonic, when it arrived)."""

    def __init__(self, server: Server, obj: dict[str, Any], verdict: Callable[[dict[str, Any]], str]) -> None:
        self.server, self.obj, self.verdict = server, obj, verdict
        self.verdicts: list[str] = []
        self.times: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        conn = self.server.connection()
        try:
            while not self._stop.is_set():
                status, answer = self.server.review(review_of(self.obj), conn=conn)
                assert status == 200
                self.times.append(time.monotonic())
                self.verdicts.append(self.verdict(answer))
        finally:
            conn.close()

    def after(self, mark: int, n: int = 5) -> list[str]:
        """The verdicts of the next `n` reviews that started after `mark` answers."""
        wait_for(f"{n} more reviews", lambda: len(self.verdicts) >= mark + 1 + n)
        return self.verdicts[mark + 1 : mark + 1 + n]  # the review in flight at `mark` may predate the change

    def first(self, verdict: str, since: float) -> float:
        """When the first review that started after `since` (monotonic) was answered with `verdict`."""

        def found() -> float | None:
            for i in range(1, len(self.verdicts)):  # a review starts when the one before it is answered
                if self.times[i - 1] >= since and self.verdicts[i] == verdict:
                    return self.times[i]
            return None

        at: float = wait_for(f"a review answered {verdict}", found)
        return at

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)


RESOURCES = {
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
    "Pod": "pods",
}


def review_of(obj: dict[str, Any], operation: str = "CREATE", dry_run: bool = False) -> dict[str, Any]:
    """The AdmissionReview a v1.37 API server sends for creating `obj` (every request field set)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    meta = obj["metadata"]
    kind = {"group": group, "version": version, "kind": obj["kind"]}
    resource = {"group": group, "version": version, "resource": RESOURCES[obj["kind"]]}
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()),
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": meta["name"],
        "operation": operation,
        "userInfo": {"username": "jane@example.com", "groups": ["system:authenticated"]},
        "object": obj,
        "oldObject": None,
        "dryRun": dry_run,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl"},
    }
    if obj["kind"] in ("ResourceClaim", "ResourceClaimTemplate", "Pod"):
        request["namespace"] = meta.get("namespace", "default")
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def example_review(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / "admission" / name).read_text())
    return data


def metric_samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out
