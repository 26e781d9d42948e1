"""Load benchmark of the admission webhook: the real `draguard serve` (gunicorn, HTTPS) on 127.0.0.1.

    python bench/webhook_bench.py                          # 1,000 nodes: cold, 200 req/s x 60 s, rate steps
    python bench/webhook_bench.py --nodes 100 --seconds 10 --steps 100,200   # a quick look
    python bench/webhook_bench.py --sweep 2x4,2x8,3x4      # workers x threads at one rate, to pick defaults
    python bench/webhook_bench.py --reloads 3000           # RSS of the workers over 3,000 state changes

State: cluster A of `bench/engine_bench.py` (N nodes x 8 GPUs, 6 attributes and 2 capacities per GPU,
A100s on the first half, H100s on the rest), a claim template, and on every tenth node an allocated claim
holding its 8 GPUs, written as JSON manifest files (10 nodes' slices per file) into a state directory that
the server loads and polls (`--reload-interval`, default 0.1 s here).

Churn (the real reload path): every `--churn-interval` (100 ms) this script changes the state directory,
alternating (a) a slice file rewritten with one node's GPUs carrying a new driverVersion and memory value
(temporary file + rename) and (b) an allocated claim file for a random free node created, or the previous
one removed. Each worker's loader thread sees the change, reloads that file, `replace_all` + `publish`.

Load: an open-loop client. Requests are scheduled on a clock at a fixed rate, spread over `--clients`
processes of `--connections` threads, each thread on one kept-alive HTTPS connection; latency is measured
from the scheduled send time (waiting for a free connection counts). The mix (each request a different
object): ResourceSlice CREATE for new nodes with their own attribute values and UPDATE of existing slices,
ResourceClaim CREATE (1 GPU by model, 4 GPUs on one NUMA node, rarely 9 GPUs: unsatisfiable), Pod CREATE
with a template claim, templates, classes, taint rules, and the mutating endpoint. Errors: transport
failures, non-200 answers, wrong uid, answers from the failure mode. The machine runs the client too.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import queue
import random
import re
import shutil
import ssl
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from admission_bench import TEMPLATE, allocated_claim, cases, mutate_case  # noqa: E402
from engine_bench import cluster_a  # noqa: E402
from serveproc import ServeProcess, rss  # noqa: E402

MIX = [  # (case of admission_bench.cases, weight %, endpoint)
    ("ResourceSlice CREATE", 15, "validate"),
    ("ResourceSlice UPDATE", 15, "validate"),
    ("ResourceClaim CREATE 1 GPU by model", 20, "validate"),
    ("ResourceClaim CREATE 4 GPUs one NUMA", 10, "validate"),
    ("ResourceClaim CREATE 9 GPUs (unsatisfiable)", 1, "validate"),
    ("Pod CREATE (template claim)", 25, "validate"),
    ("ResourceClaimTemplate CREATE", 2, "validate"),
    ("DeviceClass CREATE", 2, "validate"),
    ("DeviceTaintRule CREATE", 2, "validate"),
    ("mutate: ResourceSlice CREATE (strip)", 8, "mutate"),
]
SLICES_PER_FILE = 10


# --- the state directory and its churn ------------------------------------------------------------
def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj))
    tmp.replace(path)


def _list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items}


def write_state(state: Path, nodes: int) -> list[dict[str, Any]]:
    objs = cluster_a(nodes)
    state.mkdir(parents=True)
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    others = [o for o in objs if o["kind"] != "ResourceSlice"]
    _write_json(state / "cluster.json", _list(others + [TEMPLATE]))
    for i in range(0, len(slices), SLICES_PER_FILE):
        _write_json(state / f"slices-{i // SLICES_PER_FILE:04d}.json", _list(slices[i : i + SLICES_PER_FILE]))
    _write_json(state / "claims.json", _list([allocated_claim(i) for i in range(0, nodes, 10)]))
    (state / "churn").mkdir()
    return objs


class Churn(threading.Thread):
    """Changes the state directory every `interval` seconds (see the module docstring)."""

    def __init__(self, state: Path, objs: list[dict[str, Any]], nodes: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.state, self.nodes, self.interval = state, nodes, interval
        self.slices = [o for o in objs if o["kind"] == "ResourceSlice"]
        self.stop_event = threading.Event()
        self.events = Counter[str]()
        self.rng = random.Random(7)
        self.claim: Path | None = None
        self.n = 0

    def step(self) -> None:
        self.n += 1
        if self.n % 2:
            k = self.rng.randrange(len(self.slices))
            dev = self.slices[k]["spec"]["devices"][self.n % 8]
            dev["attributes"]["driverVersion"] = {"version": f"550.{self.n % 1000}.{self.n % 7}"}
            dev["capacity"]["memory"] = {"value": f"{80 + self.n % 3 * 16}Gi"}
            start = k - k % SLICES_PER_FILE
            path = self.state / f"slices-{k // SLICES_PER_FILE:04d}.json"
            _write_json(path, _list(self.slices[start : start + SLICES_PER_FILE]))
            self.events["slice rewritten"] += 1
        elif self.claim is not None:
            self.claim.unlink()
            self.claim = None
            self.events["claim released"] += 1
        else:
            node = self.rng.choice([i for i in range(self.nodes) if i % 10])
            claim = allocated_claim(node)
            claim["metadata"]["name"] = f"churn-{self.n}"
            self.claim = self.state / "churn" / f"claim-{self.n}.json"
            _write_json(self.claim, claim)
            self.events["claim allocated"] += 1

    def run(self) -> None:
        next_at = time.monotonic()
        while not self.stop_event.is_set():
            self.step()
            next_at += self.interval
            self.stop_event.wait(max(0.0, next_at - time.monotonic()))

    def stop(self) -> None:
        self.stop_event.set()
        self.join()


# --- the server ----------------------------------------------------------------------------------
class Server(ServeProcess):
    def __init__(
        self,
        tmp: Path,
        state: Path,
        args: argparse.Namespace,
        workers: int,
        threads: int,
        extra: Sequence[str] = (),
    ) -> None:
        from webhook.server.certs import ensure_certs

        self.certs = tmp / "certs"
        if not (self.certs / "tls.crt").exists():
            ensure_certs(self.certs, ["localhost"], ["127.0.0.1"])
        log_path = tmp / f"server-{workers}x{threads}-{time.monotonic_ns()}.log"
        cmd = ["--state", str(state), "--certs", str(self.certs), "--port", "0"]
        cmd += ["--workers", str(workers), "--threads", str(threads)]
        cmd += ["--reload-interval", str(args.reload_interval), *extra]
        t0 = time.monotonic()
        super().__init__(cmd, log_path)
        self.port = self._wait_port()
        self.ctx = ssl.create_default_context(cafile=str(self.certs / "ca.crt"))
        while self.get("/readyz")[0] != 200 or len(self.worker_pids()) < workers:
            self._check()
            time.sleep(0.1)
        time.sleep(0.5)
        while not all(self.get("/readyz")[0] == 200 for _ in range(4 * workers)):
            time.sleep(0.2)
        self.startup = time.monotonic() - t0

    def _check(self) -> None:
        if self.proc.poll() is not None:
            raise SystemExit(f"draguard serve exited:\n{self.log_path.read_text()[-3000:]}")

    def _wait_port(self) -> int:
        while True:
            self._check()
            port = self.listening()
            if port is not None:
                return port
            time.sleep(0.05)

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            c = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=30)
            c.request("GET", path)
            r = c.getresponse()
            out = (r.status, r.read())
            c.close()
            return out
        except OSError:
            return 0, b""

    def rss_mib(self) -> dict[str, float]:
        out = {"arbiter": rss(self.proc.pid)}
        for i, pid in enumerate(self.worker_pids()):
            out[f"worker{i}"] = rss(pid)
        return out

    def reloads(self) -> float:
        _, text = self.get("/metrics")
        m = re.search(rb'draguard_state_reloads_total\{result="ok"\} ([0-9.e+]+)', text)
        return float(m.group(1)) if m else 0.0


def feasibility_verdicts(server: Server) -> dict[str, int]:
    """The server's feasibility verdicts so far, "Kind verdict" -> count (all workers)."""
    from prometheus_client.parser import text_string_to_metric_families

    _, text = server.get("/metrics")
    out = {}
    for family in text_string_to_metric_families(text.decode()):
        if family.name == "draguard_feasibility_verdicts":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    out[f"{sample.labels['kind']} {sample.labels['verdict']}"] = int(sample.value)
    return dict(sorted(out.items()))


def gc_pauses(server: Server) -> dict[str, Any]:
    """Per generation: collections, their total seconds, and the smallest bucket holding them all."""
    from prometheus_client.parser import text_string_to_metric_families

    _, text = server.get("/metrics")
    out: dict[str, dict[str, Any]] = {}
    for family in text_string_to_metric_families(text.decode()):
        if family.name != "draguard_gc_pause_seconds":
            continue
        for sample in family.samples:
            row = out.setdefault(sample.labels["generation"], {"count": 0, "seconds": 0.0, "buckets": []})
            if sample.name.endswith("_count"):
                row["count"] = int(sample.value)
            elif sample.name.endswith("_sum"):
                row["seconds"] = round(sample.value, 3)
            elif sample.name.endswith("_bucket"):
                row["buckets"].append((float(sample.labels["le"]), sample.value))
    for row in out.values():
        full = [le for le, n in sorted(row.pop("buckets")) if n >= row["count"]]
        row["max_le_s"] = full[0] if full else float("inf")
    return dict(sorted(out.items()))


# --- the request mix -----------------------------------------------------------------------------
def request_bodies(
    objs: list[dict[str, Any]], count: int, seed: int = 11
) -> list[tuple[str, str, bytes, str]]:
    """`count` requests (label, endpoint, body, uid) drawn from MIX, each with its own object."""
    makers = cases(objs)
    makers["mutate: ResourceSlice CREATE (strip)"] = mutate_case
    rng = random.Random(seed)
    labels = [m[0] for m in MIX]
    weights = [m[1] for m in MIX]
    endpoint = {m[0]: m[2] for m in MIX}
    out = []
    for k in range(count):
        label = rng.choices(labels, weights)[0]
        ar = makers[label](k)
        out.append((label, endpoint[label], json.dumps(ar).encode(), ar["request"]["uid"]))
    return out


def _send(conn: http.client.HTTPSConnection, endpoint: str, body: bytes) -> tuple[int, bytes]:
    conn.request("POST", f"/{endpoint}?timeout=10s", body, {"Content-Type": "application/json"})
    r = conn.getresponse()
    return r.status, r.read()


def _check_answer(status: int, data: bytes, uid: str) -> tuple[str | None, str]:
    """(error or None, verdict/decision label)."""
    if status != 200:
        return f"HTTP {status}", "error"
    response = json.loads(data).get("response") or {}
    if response.get("uid") != uid:
        return "wrong uid", "error"
    notes = response.get("auditAnnotations") or {}
    if any("could not check this request" in w for w in response.get("warnings") or ()):
        return "failure mode answered", "error"
    return None, notes.get("feasibility") or ("allowed" if response.get("allowed") else "denied")


def _client(
    port: int,
    ca: str,
    rate: float,
    seconds: float,
    start: float,
    index: int,
    procs: int,
    conns: int,
    bodies: Any,
    out: Any,
) -> None:
    ctx = ssl.create_default_context(cafile=ca)
    work: queue.Queue[tuple[float, int] | None] = queue.Queue()
    results: list[tuple[str, float, str | None, str]] = []
    lock = threading.Lock()

    def worker() -> None:
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=60)
        while True:
            item = work.get()
            if item is None:
                break
            at, i = item
            label, endpoint, body, uid = bodies[i % len(bodies)]
            try:
                status, data = _send(conn, endpoint, body)
                error, verdict = _check_answer(status, data, uid)
            except (OSError, http.client.HTTPException, ValueError) as e:
                conn.close()
                conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=60)
                error, verdict = f"{type(e).__name__}: {e}", "error"
            done = time.monotonic()
            with lock:
                results.append((label, done - at, error, verdict))
        conn.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(conns)]
    for t in threads:
        t.start()
    total = int(rate * seconds)
    for i in range(index, total, procs):
        at = start + i / rate
        delay = at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        work.put((at, i))
    for _ in threads:
        work.put(None)
    for t in threads:
        t.join()
    out.put(results)


def run_load(
    server: Server, bodies: Any, rate: float, seconds: float, procs: int, conns: int
) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    start = time.monotonic() + 1.0
    ps = [
        ctx.Process(
            target=_client,
            args=(
                server.port,
                str(server.certs / "ca.crt"),
                rate,
                seconds,
                start,
                i,
                procs,
                conns,
                bodies,
                out,
            ),
        )
        for i in range(procs)
    ]
    for p in ps:
        p.start()
    results: list[tuple[str, float, str | None, str]] = []
    for _ in ps:
        results += out.get()
    for p in ps:
        p.join()
    end = start + max(0.0, seconds)
    return summarize(results, rate, seconds, start, end)


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


def summarize(results: list[Any], rate: float, seconds: float, start: float, end: float) -> dict[str, Any]:
    lat = [r[1] * 1000 for r in results]
    errors = Counter(r[2] for r in results if r[2])
    by_case: dict[str, list[float]] = {}
    for label, t, _, _ in results:
        by_case.setdefault(label, []).append(t * 1000)
    return {
        "target_rate": rate,
        "seconds": seconds,
        "requests": len(results),
        "achieved_rate": round(len(results) / seconds, 1) if seconds else 0.0,
        "p50_ms": round(pct(lat, 50), 2),
        "p90_ms": round(pct(lat, 90), 2),
        "p99_ms": round(pct(lat, 99), 2),
        "max_ms": round(max(lat), 2) if lat else float("nan"),
        "errors": sum(errors.values()),
        "error_kinds": dict(errors.most_common(5)),
        "verdicts": dict(Counter(r[3] for r in results)),
        "per_case_p99_ms": {k: round(pct(v, 99), 2) for k, v in sorted(by_case.items())},
    }


def cold(server: Server, bodies: Any) -> dict[str, float]:
    """The first request of each case after startup, one at a time, each on a new connection (TLS
    handshake included)."""
    seen: dict[str, float] = {}
    for label, endpoint, body, uid in bodies:
        if label in seen:
            continue
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=server.ctx, timeout=60)
        t0 = time.monotonic()
        status, data = _send(conn, endpoint, body)
        seen[label] = round((time.monotonic() - t0) * 1000, 2)
        conn.close()
        if _check_answer(status, data, uid)[0]:
            seen[label] = -1.0
    return seen


def print_run(title: str, r: dict[str, Any]) -> None:
    print(
        f"{title}: {r['requests']} requests, achieved {r['achieved_rate']}/s (target {r['target_rate']:g}/s), "
        f"p50 {r['p50_ms']} ms, p90 {r['p90_ms']} ms, p99 {r['p99_ms']} ms, max {r['max_ms']} ms, "
        f"errors {r['errors']}{' ' + str(r['error_kinds']) if r['errors'] else ''}"
    )
    print(f"    answers: {r['verdicts']}")
    print("    p99 per case (ms): " + ", ".join(f"{k} {v}" for k, v in r["per_case_p99_ms"].items()))


def reload_rss(server: Server, churn: Churn, changes: int, pace: float) -> list[dict[str, Any]]:
    """RSS of every process after every 10% of `changes` state changes, one every `pace` seconds."""
    rows = []
    base = server.reloads()
    rows.append({"changes": 0, "publishes": 0, **server.rss_mib()})
    print(f"  {'changes':>8} {'publishes':>10}  RSS MiB (arbiter, workers)")
    print(f"  {0:8d} {0:10d}  {_fmt_rss(rows[-1])}")
    step = max(1, changes // 10)
    for i in range(1, changes + 1):
        churn.step()
        time.sleep(pace)
        if i % step == 0 or i == changes:
            time.sleep(max(0.5, 10 * pace))  # let the loaders catch up before measuring
            rows.append({"changes": i, "publishes": int(server.reloads() - base), **server.rss_mib()})
            print(f"  {i:8d} {rows[-1]['publishes']:10d}  {_fmt_rss(rows[-1])}")
    return rows


def _fmt_rss(row: dict[str, Any]) -> str:
    return ", ".join(f"{v:.1f}" for k, v in row.items() if k not in ("changes", "publishes"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=200.0, help="requests/s of the main run (default 200)")
    ap.add_argument("--seconds", type=float, default=60.0, help="length of the main run (default 60)")
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds at --rate before the main run")
    ap.add_argument("--steps", default="100,200,300,400,500,600,800", help="rates of the step runs")
    ap.add_argument("--step-seconds", type=float, default=20.0)
    ap.add_argument("--workers", type=int, default=0, help="server workers (default: serve's default)")
    ap.add_argument("--threads", type=int, default=0, help="threads per worker (default: serve's default)")
    ap.add_argument("--clients", type=int, default=3, help="client processes (default 3)")
    ap.add_argument("--connections", type=int, default=16, help="kept-alive connections per client process")
    ap.add_argument("--churn-interval", type=float, default=0.1, help="seconds between state changes")
    ap.add_argument("--reload-interval", type=float, default=0.1, help="the server's state poll interval")
    ap.add_argument("--sweep", help="workers x threads configurations, e.g. 2x4,2x8,3x4 (at --rate)")
    ap.add_argument("--reloads", type=int, default=0, help="RSS over this many state changes (no load)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="draguard-webhook-bench-"))
    figures: dict[str, Any] = {"nodes": args.nodes, "cores": os.cpu_count(), "load_before": os.getloadavg()}
    try:
        state = tmp / "state"
        objs = write_state(state, args.nodes)
        print(
            f"webhook benchmark: {args.nodes:,} nodes, {args.nodes * 8:,} GPUs, state in "
            f"{len(list(state.glob('*.json')))} files; load average {os.getloadavg()[0]:.1f}"
        )
        if args.reloads:
            server = Server(tmp, state, args, args.workers, args.threads)
            print(
                f"server up in {server.startup:.1f} s; {args.reloads} state changes, one every {args.churn_interval} s:"
            )
            churn = Churn(state, objs, args.nodes, args.churn_interval)
            figures["reloads"] = reload_rss(server, churn, args.reloads, args.churn_interval)
            print(f"  changes made: {dict(churn.events)}; server exit code {server.stop()}")
            return _finish(figures, args)
        bodies = request_bodies(objs, 4000)
        if args.sweep:
            figures["sweep"] = {}
            for cfg in args.sweep.split(","):
                w, t = (int(x) for x in cfg.lower().split("x"))
                server = Server(tmp, state, args, w, t)
                churn = Churn(state, objs, args.nodes, args.churn_interval)
                churn.start()
                run_load(server, bodies, args.rate, 5.0, args.clients, args.connections)  # warm-up
                r = run_load(server, bodies, args.rate, args.seconds, args.clients, args.connections)
                churn.stop()
                print_run(f"{w} workers x {t} threads", r)
                figures["sweep"][cfg] = r
                server.stop()
            return _finish(figures, args)
        server = Server(tmp, state, args, args.workers, args.threads)
        rss0 = server.rss_mib()
        print(f"server up (every worker's state loaded) in {server.startup:.1f} s; RSS MiB {_fmt_rss(rss0)}")
        figures["cold_ms"] = cold(server, bodies)
        print("cold (first request per case after startup, new connection each): "
              + ", ".join(f"{k} {v}" for k, v in figures["cold_ms"].items()))  # fmt: skip
        churn = Churn(state, objs, args.nodes, args.churn_interval)
        reloads0 = server.reloads()
        churn.start()
        first = run_load(server, bodies, args.rate, args.warmup, args.clients, args.connections)
        print_run(f"first {args.warmup:g} s at {args.rate:g}/s with churn (warm-up)", first)
        figures["warmup"] = first
        main_run = run_load(server, bodies, args.rate, args.seconds, args.clients, args.connections)
        print_run(f"fixed rate {args.rate:g}/s for {args.seconds:g} s with churn (warm)", main_run)
        figures["main"] = main_run
        rss1 = server.rss_mib()
        print(f"RSS MiB before {_fmt_rss(rss0)}; after the run {_fmt_rss(rss1)}")
        figures["rss_before"], figures["rss_after_main"] = rss0, rss1
        steps = []
        best = None
        for rate in [float(x) for x in args.steps.split(",") if x]:
            r = run_load(server, bodies, rate, args.step_seconds, args.clients, args.connections)
            print_run(f"step {rate:g}/s for {args.step_seconds:g} s", r)
            steps.append(r)
            if r["p99_ms"] <= 100 and r["errors"] == 0:
                best = rate if best is None else max(best, rate)
            if r["p99_ms"] > 1000 or r["achieved_rate"] < 0.9 * rate:
                break  # overloaded: higher rates only queue more
        churn.stop()
        figures["steps"] = steps
        figures["highest_rate_p99_le_100ms"] = best
        publishes = server.reloads() - reloads0
        figures["churn"] = {"changes": dict(churn.events), "publishes_all_workers": publishes}
        figures["rss_end"] = server.rss_mib()
        print(f"highest stepped rate with p99 <= 100 ms and no errors: {best} (every step is listed above)")
        figures["feasibility"] = feasibility_verdicts(server)
        print(f"feasibility verdicts of the whole run (server metrics): {figures['feasibility']}")
        figures["gc"] = gc_pauses(server)
        print("garbage collector pauses in the workers: " + "; ".join(
            f"gen{g} {v['count']} x, {v['seconds']} s in all, each <= {v['max_le_s']} s" for g, v in figures["gc"].items()
        ))  # fmt: skip
        print(f"churn: {dict(churn.events)}; state publishes (all workers): {publishes:.0f}")
        print(f"RSS MiB at the end {_fmt_rss(figures['rss_end'])}; server exit code {server.stop()}")
        ok = main_run["p99_ms"] <= 25 and main_run["errors"] == 0
        print(
            f"target 200/s for 60 s, p99 <= 25 ms, 0 errors: {'met' if ok else 'MISSED'} (indicative on a shared machine)"
        )
        return _finish(figures, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _finish(figures: dict[str, Any], args: argparse.Namespace) -> int:
    figures["load_after"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
