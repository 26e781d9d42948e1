"""The live state under watch events: the real `draguard serve --state cluster` fed by the API-server stand-in.

    python bench/watch_bench.py                                  # clusters A and B, 1,000 nodes
    python bench/watch_bench.py --clusters A --nodes 100 --rates 50,200 --seconds 5   # a quick look

Clusters (bench/engine_bench.py): A = N nodes x 8 GPUs (8,000 devices at 1,000 nodes), one slice per node;
B = the same GPUs partitioned MIG-style (64 partitions per node, 64,000 devices at 1,000 nodes) plus a
counter slice and an allocated claim per node. Both with their Node objects and the DeviceClass. The
stand-in (tests/standin/apiserver.py, a separate process) is seeded with the cluster before the server
starts; `draguard serve --kubeconfig ... --workers 1` then lists (pages of --list-page-size) and watches.

Per cluster and run it prints:
- sync: seconds from starting `draguard serve` to /readyz 200 (process start, imports, gunicorn, the
  paginated lists of the seven kinds, the StateStore's first publish, the engine warm-up), and the
  ResourceSlice list alone (from the worker's log);
- RSS of the serve worker (and the arbiter) after the sync, after the events, after the relist;
- event → visible: from sending a change to the stand-in (its write included) until /readyz of the
  worker reports that kind's resourceVersion at least that change's (polled on a kept-alive connection:
  the first poll answered after the send that shows it; the resolution is one poll, ~1-3 ms),
  p50/p95/p99/max in ms. Cold = the first --cold changes after the sync, one at a time (each waits for
  the previous to be visible); warm = open loop at each of --rates changes/s for --seconds (changes are
  written on a clock, whatever the server does, up to 10 per call at high rates; a writer that falls
  behind its clock says so, and "written at" is the rate it achieved: the stand-in's write path, in
  Python on the same cores, is the limit for the 64-device slices of cluster B). Changes alternate: a claim
  allocated to / released from one device of a rotating node (ResourceClaim status), and a rotating
  node's device slice republished with one device's uuid changed (ResourceSlice). Also the server's own
  draguard_watch_event_to_visible_seconds (event read → snapshot published) over the same run, as bucket
  bounds;
- relist (--relists times): every watch's history expired and its connection dropped (410 on reconnect →
  seven relists); seconds until the ResourceSlice relist is published (the reflector's reconnect backoff,
  0.8-1.6 s, included), the list alone (worker log), and the worker's RSS after it.
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import re
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import engine_bench as eb  # noqa: E402
from serveproc import ServeProcess, proc_mib, rss  # noqa: E402

from tests.standin.process import StandIn  # noqa: E402

SEED_BATCH = 200  # objects per control-API call while seeding
MAX_WRITE_BATCH = (
    10  # changes per control-API call in the open-loop runs (a change's latency counts from its call)
)


def cluster(name: str, nodes: int) -> list[dict[str, Any]]:
    objs = eb.cluster_a(nodes) if name == "A" else eb.cluster_b(nodes)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}
    return [ns, *objs]


def devices(objs: list[dict[str, Any]]) -> int:
    return sum(len(o["spec"].get("devices") or []) for o in objs if o["kind"] == "ResourceSlice")


class Changes:
    """The churn: claim allocations/releases and slice republishes on rotating nodes."""

    def __init__(self, name: str, nodes: int, objs: list[dict[str, Any]]) -> None:
        self.name, self.nodes = name, nodes
        self.slices = {
            o["spec"]["nodeName"]: o
            for o in objs
            if o["kind"] == "ResourceSlice" and o["spec"].get("devices") and o["spec"].get("nodeName")
        }
        self.i = 0
        self.held: dict[int, bool] = {}

    def next(self) -> dict[str, Any]:
        self.i += 1
        node = (self.i * 7919) % self.nodes
        if self.i % 2:
            device = "gpu-7" if self.name == "A" else "gpu-7-1g-10gb-0"
            claim = eb.claim_for(f"churn-{node:04d}", "gpu", None, 1)
            claim["metadata"]["namespace"] = "bench"
            if not self.held.get(node):
                claim["status"] = {
                    "allocation": {
                        "devices": {
                            "results": [
                                {
                                    "request": "gpu",
                                    "driver": eb.DRIVER,
                                    "pool": eb.node_name(node),
                                    "device": device,
                                }
                            ]
                        }
                    }
                }
            self.held[node] = not self.held.get(node)
            return claim
        sl = copy.deepcopy(self.slices[eb.node_name(node)])
        sl["spec"]["devices"][0]["attributes"]["uuid"] = {"string": f"GPU-{node:04d}-0-r{self.i}"}
        return sl


class Serve(ServeProcess):
    """`draguard serve --kubeconfig K --workers 1` (gunicorn), its log, /readyz on a kept-alive connection."""

    def __init__(
        self, tmp: Path, kubeconfig: Path, page_size: int, workers: int = 1, threads: int = 0
    ) -> None:
        certs = tmp / "serve-certs"
        self.certs = certs
        p = subprocess.run(
            [sys.executable, "-m", "webhook.cli.main", "certs", "--dir", str(certs), "--ip", "127.0.0.1"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if p.returncode:
            raise SystemExit(p.stderr)
        self.ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
        args = ["--kubeconfig", str(kubeconfig), "--certs", str(certs), "--port", "0"]
        args += ["--workers", str(workers), "--list-page-size", str(page_size)]
        args += ["--threads", str(threads)] if threads else []
        self.t0 = time.monotonic()
        super().__init__(args, tmp / f"serve-{time.monotonic_ns()}.log")
        self.port: int = self._wait(self.listening)
        self._local = threading.local()  # one kept-alive connection per thread

    def _wait(self, check: Any, timeout: float = 1800.0) -> Any:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise SystemExit(f"draguard serve exited:\n{self.text()[-3000:]}")
            v = check()
            if v:
                return v
            time.sleep(0.05)
        raise SystemExit("gave up waiting for draguard serve")

    def wait_ready(self) -> float:
        self._wait(lambda: self.readyz() is not None)
        return time.monotonic() - self.t0

    def readyz(self) -> dict[str, Any] | None:
        """/readyz on this thread's kept-alive connection; None while not ready."""
        for _ in range(2):
            conn = getattr(self._local, "conn", None)
            try:
                if conn is None:
                    conn = self._local.conn = http.client.HTTPSConnection(
                        "127.0.0.1", self.port, context=self.ctx, timeout=1800
                    )
                conn.request("GET", "/readyz")
                r = conn.getresponse()
                body = r.read()
                if r.status != 200:
                    return None
                data: dict[str, Any] = json.loads(body)
                return data
            except (OSError, http.client.HTTPException):
                if conn is not None:
                    conn.close()
                self._local.conn = None
        return None

    def resource_version(self, kind: str) -> int:
        """The resourceVersion of `kind` the worker's published state has reached (0 when not ready)."""
        r = self.readyz() or {}
        return int(r.get("resourceVersions", {}).get(kind, "0"))

    def metrics(self) -> str:
        c = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=60)
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        c.close()
        return text

    def rss(self) -> dict[str, float]:
        out = {"arbiter": _rss(self.proc.pid)}
        m = re.findall(r"Booting worker with pid: (\d+)", self.text())
        if m:
            out["worker"] = _rss(int(m[-1]))
        return out

    def rss_all(self) -> dict[str, float]:
        """RSS (MiB) of the arbiter and of every live process under it (workers, the audit process), their
        sum, and the sum of their PSS (pages shared after the fork counted once: the replica's memory)."""
        pids = [self.proc.pid, *_children(self.proc.pid)]
        out = {"arbiter": _rss(pids[0])}
        for pid in pids[1:]:
            out[f"worker {pid}"] = _rss(pid)
        out["total"] = round(sum(out.values()), 1)
        out["pss"] = round(sum(_pss(pid) for pid in pids), 1)
        return out

    def listed(self, kind: str, reason: str) -> list[float]:
        """Seconds of this kind's lists for `reason`, from the worker log."""
        pat = rf"{kind}: listed \d+ object\(s\) in \d+ page\(s\), ([0-9.]+) s \({reason}\)"
        return [float(s) for s in re.findall(pat, self.text())]


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _pss(pid: int) -> float:
    return proc_mib(pid, "smaps_rollup", "Pss:")


def _rss(pid: int) -> float:
    return round(rss(pid), 1)


def histogram(text: str) -> dict[float, float]:
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[float, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name == "draguard_watch_event_to_visible_seconds":
            for s in family.samples:
                if s.name.endswith("_bucket"):
                    out[float(s.labels["le"])] = s.value
    return out


def bucket_quantiles(before: dict[float, float], after: dict[float, float]) -> str:
    counts = sorted((le, after.get(le, 0) - before.get(le, 0)) for le in after)
    total = counts[-1][1] if counts else 0
    if not total:
        return "no events"
    parts = []
    for q in (50, 95, 99):
        le = next(le for le, n in counts if n >= total * q / 100)
        parts.append(f"p{q} <= {le * 1000:g} ms")
    return f"{int(total)} events: " + ", ".join(parts)


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


def fmt_ms(values: list[float]) -> str:
    if not values:
        return "no samples"
    v = [x * 1000 for x in values]
    return f"n={len(v)}  p50 {pct(v, 50):7.1f}  p95 {pct(v, 95):7.1f}  p99 {pct(v, 99):7.1f}  max {max(v):7.1f} ms"


class Visibility:
    """Polls /readyz and records when each kind's resourceVersion reached what."""

    def __init__(self, serve: Serve) -> None:
        self.serve = serve
        self.samples: list[tuple[float, dict[str, int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            r = self.serve.readyz()
            if r is not None:
                rvs = {k: int(v) for k, v in r.get("resourceVersions", {}).items()}
                self.samples.append((time.monotonic(), rvs))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)

    def seen(self, kind: str, rv: int, after: float) -> float | None:
        for t, rvs in self.samples:
            if t >= after and rvs.get(kind, 0) >= rv:
                return t
        return None


def write(api: StandIn, objs: list[dict[str, Any]]) -> list[tuple[str, int, float]]:
    """Writes `objs` in one control call; (kind, rv, sent at) of each."""
    t = time.monotonic()
    rv = api.seed(objs)
    return [(o["kind"], rv - (len(objs) - 1 - j), t) for j, o in enumerate(objs)]


def latencies(vis: Visibility, written: list[tuple[str, int, float]], wait: float = 60.0) -> list[float]:
    end = time.monotonic() + wait
    while time.monotonic() < end:
        last = vis.samples[-1][1] if vis.samples else {}
        if all(last.get(k, 0) >= rv for k, rv, _ in written):
            break
        time.sleep(0.01)
    out = []
    for kind, rv, t in written:
        seen = vis.seen(kind, rv, t)
        if seen is not None:
            out.append(seen - t)
    return out


def open_loop(
    api: StandIn, changes: Changes, rate: float, seconds: float
) -> tuple[list[tuple[str, int, float]], float]:
    """Changes written on a clock at `rate`/s for `seconds` (batched per 10 ms tick when the rate needs it)."""
    tick = max(1.0 / rate, 0.01)
    t0 = time.monotonic()
    sent = 0
    written: list[tuple[str, int, float]] = []
    total = int(rate * seconds)
    late = 0.0
    while sent < total:
        due = min(total, int((time.monotonic() - t0) * rate) + 1, sent + MAX_WRITE_BATCH)
        if due > sent:
            written += write(api, [changes.next() for _ in range(due - sent)])
            sent = due
        nxt = t0 + sent / rate
        wait = nxt - time.monotonic()
        if wait > 0:
            time.sleep(min(wait, tick))
        else:
            late = max(late, -wait)
    return written, late


def run_cluster(name: str, args: argparse.Namespace, run: int) -> None:
    objs = cluster(name, args.nodes)
    print(
        f"\n== cluster {name}, run {run}: {args.nodes} nodes, {devices(objs):,} devices, {len(objs):,} objects"
    )
    with tempfile.TemporaryDirectory(prefix="watch-bench-") as d:
        tmp = Path(d)
        api = StandIn(tmp, extra=["--history-limit", "50000", "--bookmark-interval", "60"])
        try:
            t = time.monotonic()
            for i in range(0, len(objs), SEED_BATCH):
                api.seed(objs[i : i + SEED_BATCH])
            print(f"  stand-in seeded in {time.monotonic() - t:.1f} s")
            serve = Serve(tmp, api.kubeconfig(tmp / "kubeconfig"), args.page_size)
            try:
                sync = serve.wait_ready()
                ready = serve.readyz() or {}
                print(
                    f"  sync: ready after {sync:.2f} s (ResourceSlice list {serve.listed('ResourceSlice', 'initial')[0]:.2f} s); "
                    f"objects {ready.get('objects')}"
                )
                print(f"  RSS after sync: {serve.rss()} MiB")
                changes = Changes(name, args.nodes, objs)
                vis = Visibility(serve)
                try:
                    cold: list[float] = []
                    for _ in range(args.cold):
                        cold += latencies(vis, write(api, [changes.next()]))
                    print(f"  event -> visible, cold (one at a time): {fmt_ms(cold)}")
                    for rate in args.rates:
                        before = histogram(serve.metrics())
                        written, late = open_loop(api, changes, rate, args.seconds)
                        lat = latencies(vis, written)
                        after = histogram(serve.metrics())
                        missing = len(written) - len(lat)
                        achieved = (
                            len(written) / max(1e-9, written[-1][2] - written[0][2])
                            if len(written) > 1
                            else 0.0
                        )
                        print(
                            f"  event -> visible, warm, {rate:g}/s x {args.seconds:g} s (written at {achieved:.0f}/s): "
                            f"{fmt_ms(lat)}"
                            + (f"  ({missing} not seen)" if missing else "")
                            + (
                                f"  (writer up to {late * 1000:.0f} ms behind its clock)"
                                if late > 0.05
                                else ""
                            )
                        )
                        print(f"    server's event_to_visible histogram: {bucket_quantiles(before, after)}")
                    print(f"  RSS after the events: {serve.rss()} MiB")
                    for k in range(1, args.relists + 1):
                        t = time.monotonic()
                        rv = api.expire(drop=True)
                        serve._wait(lambda rv=rv: serve.resource_version("ResourceSlice") >= rv)
                        relist = time.monotonic() - t
                        lists = serve.listed("ResourceSlice", "expired")
                        print(
                            f"  relist {k} (410 on every watch): ResourceSlice published after {relist:.2f} s "
                            f"(reconnect backoff included; its list {lists[-1] if lists else float('nan'):.2f} s); "
                            f"RSS {serve.rss()} MiB"
                        )
                finally:
                    vis.stop()
            finally:
                serve.stop()
        finally:
            api.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clusters", default="A,B", help="A, B or A,B (default)")
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--rates", default="20,100,500", help="changes per second of the open-loop runs")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each open-loop run")
    p.add_argument("--cold", type=int, default=20, help="changes one at a time right after the sync")
    p.add_argument("--page-size", type=int, default=500)
    p.add_argument("--runs", type=int, default=1, help="repeat everything; every run is printed")
    p.add_argument("--relists", type=int, default=3, help="forced relists at the end (RSS after each)")
    args = p.parse_args(argv)
    if args.nodes < 8:
        p.error("--nodes must be at least 8")
    args.rates = [float(r) for r in args.rates.split(",") if r]
    print(f"watch_bench: {time.strftime('%Y-%m-%d %H:%M')}, python {sys.version.split()[0]}")
    for run in range(1, args.runs + 1):
        for name in args.clusters.split(","):
            run_cluster(name.strip(), args, run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
