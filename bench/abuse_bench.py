"""`draguard serve` under hostile clients (issue 14): the real server (HTTPS on 127.0.0.1, its defaults:
one worker per core x 4 threads, the embedded examples/ state) of the checkout given by --repo.

    python3 bench/abuse_bench.py                                   # this checkout, every part once
    python3 bench/abuse_bench.py --repo /path/to/old --runs 2      # another checkout's server, twice
    python3 bench/abuse_bench.py --parts held,drain --held 300 --seconds 6 --json out.json

Parts (a fresh server for each, and for each memory shape; killed, process group and all, afterwards):
  held      valid reviews at 20/s (open loop, latency from the scheduled send time; kept-alive connections
            and every 10th on a new one) while --held hostile connections of one kind are held by one
            asyncio process that re-opens any the server closes: silent TCP, 11 bytes of a ClientHello,
            a request head at 1 byte/s, a body at 1 byte/s (Content-Length 100000); then all four at once
  amplify   one review whose ResourceClaim is named with 1,000,000 `é`: bytes in and out, status, time
  memory    8 requests at once at the body limit, per adversarial shape; RSS (/proc VmRSS) of the arbiter
            and every worker sampled every 50 ms: idle before, peak per process, peak of the sum
  deadline  a 5 MB valid review sent with ?timeout=1s: time to the answer, status, gist
  drain     17 kept-alive connections each did a review; SIGTERM to the arbiter, /readyz right after, then
            one review per kept-alive connection and a few on new connections over the next seconds

Every request has a client timeout (10 s; 60 s for the large ones), so a server that never answers shows
as timeouts. The clients share the machine with the server (2 cores here): figures are indicative.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import multiprocessing as mp
import os
import random
import resource
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from serveproc import ServeProcess, rss  # noqa: E402
from webhook_bench import pct  # noqa: E402

TIMEOUT = 10.0  # seconds a client waits for one ordinary review
BIG_TIMEOUT = 60.0  # ... for one of the large ones
KINDS = ("silent", "hello", "head", "body")
KIND_TITLES = {
    "silent": "silent TCP",
    "hello": "11 B of ClientHello",
    "head": "head at 1 B/s",
    "body": "body at 1 B/s",
    "all": "all four at once",
}
REVIEW = json.loads((ROOT / "examples" / "admission" / "claim-create.json").read_text())


# --- the server ------------------------------------------------------------------------------------
def draguard(repo: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    cmd = [sys.executable, "-m", "webhook.cli.main", *args]
    return subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=False, **kw)


class Server(ServeProcess):
    """`draguard serve --port 0 --certs DIR` of `repo`, in its own process group."""

    def __init__(self, repo: Path, tmp: Path) -> None:
        self.certs = tmp / "certs"
        if not (self.certs / "tls.crt").exists():
            p = draguard(repo, "certs", "--dir", str(self.certs), "--dns", "localhost", "--ip", "127.0.0.1")
            assert p.returncode == 0, p.stderr
        log_path = tmp / f"server-{time.monotonic_ns()}.log"
        super().__init__(["--port", "0", "--certs", str(self.certs)], log_path, repo, start_new_session=True)
        self.ctx = ssl.create_default_context(cafile=str(self.certs / "ca.crt"))
        try:
            self.port = self._wait(self.listening, "listen")
            workers = len(os.sched_getaffinity(0))
            self._wait(lambda: len(self.worker_pids()) >= workers and self.get("/readyz")[0] == 200, "ready")
            time.sleep(0.5)
            self._wait(lambda: all(self.get("/readyz")[0] == 200 for _ in range(4 * workers)), "ready")
        except BaseException:
            self.kill()
            raise

    def _wait(self, check: Any, what: str, timeout: float = 120.0) -> Any:
        end = time.monotonic() + timeout
        while not (value := check()):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise SystemExit(f"draguard serve did not {what}:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.05)
        return value

    def connection(self, timeout: float = TIMEOUT) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            return send(self.connection(), "GET", path, None)[:2]
        except (OSError, http.client.HTTPException):
            return 0, b""

    def rss_mib(self) -> dict[str, float]:
        out = {"arbiter": rss(self.proc.pid)}
        for pid in self.worker_pids():
            out[f"worker {pid}"] = rss(pid)
        return out

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()


# --- requests ------------------------------------------------------------------------------------------
def send(
    conn: http.client.HTTPSConnection, method: str, path: str, body: bytes | None
) -> tuple[int, bytes, str]:
    """One request on `conn` (closed unless the answer keeps it alive): status, body, Connection header."""
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.will_close:
        conn.close()
    return r.status, data, r.getheader("Connection") or ""


def valid_review() -> tuple[bytes, str]:
    uid = str(uuid.uuid4())
    return json.dumps({**REVIEW, "request": {**REVIEW["request"], "uid": uid}}).encode(), uid


def check_answer(status: int, data: bytes, uid: str) -> str | None:
    if status != 200:
        return f"HTTP {status}"
    response = json.loads(data).get("response") or {}
    if response.get("uid") != uid:
        return "wrong uid"
    return None if response.get("allowed") is True else "denied"


def error_kind(e: BaseException) -> str:
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    if isinstance(e, TimeoutError):
        return "timeout"
    resets = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected, ssl.SSLEOFError)
    if isinstance(e, (*resets, ssl.SSLZeroReturnError)):
        return "reset"
    return type(e).__name__


def gist(data: bytes) -> str:
    """What an answer says, in a line: allowed and its first message, or a Status's message."""
    try:
        doc = json.loads(data)
    except ValueError:
        return repr(data[:80])
    if "response" in doc:
        r = doc["response"]
        msg = (r.get("status") or {}).get("message") or "; ".join(r.get("warnings") or [])
        return f"allowed={r.get('allowed')} {msg[:110]!r}"
    return f"{doc.get('kind')} {doc.get('code')} {str(doc.get('message'))[:110]!r}"


def one_big(server: Server, body: bytes, path: str = "/validate?timeout=10s") -> dict[str, Any]:
    """One request on a new connection: status, bytes out, seconds, gist (or the error)."""
    t0 = time.monotonic()
    try:
        status, data, _ = send(server.connection(BIG_TIMEOUT), "POST", path, body)
        out = {"status": status, "response_bytes": len(data), "gist": gist(data)}
    except (OSError, http.client.HTTPException) as e:
        out = {"status": error_kind(e), "response_bytes": 0, "gist": f"{type(e).__name__}: {e}"[:120]}
    return {"request_bytes": len(body), "seconds": round(time.monotonic() - t0, 3), **out}


# --- part held: hostile connections in one asyncio process ------------------------------------------
def client_hello_prefix() -> bytes:
    """The first 11 bytes of a real ClientHello."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    with contextlib.suppress(ssl.SSLWantReadError):
        obj.do_handshake()  # writes the ClientHello, then wants the server's answer
    return outgoing.read()[:11]


HEAD = b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Slow: a\r\n" * 5000
BODY_HEAD = b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
BODY_HEAD += b"Content-Length: 100000\r\n\r\n"
BODY = b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", ' + b'"x": "' + b"a" * 99000


async def _hold(port: int, kind: str, n: int, stop: Any, out: Any) -> None:
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    hello = client_hello_prefix()
    stats: Counter[str] = Counter()
    held = 0
    connecting = asyncio.Semaphore(64)

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes) -> None:
        await asyncio.sleep(random.random())  # spread the 1-byte writes over the second
        for i in range(len(data)):
            writer.write(data[i : i + 1])
            with contextlib.suppress(TimeoutError):  # a second without a word: the next byte
                await asyncio.wait_for(reader.read(1), 1.0)
                return  # an answer (408) or EOF: the server is done with us

    async def one() -> None:
        nonlocal held
        first = True
        while True:
            try:
                async with connecting:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                stats["connect failed"] += 1
                await asyncio.sleep(0.2)
                continue
            stats["reconnects"] += not first
            first = False
            held += 1
            try:
                if kind == "hello":
                    writer.write(hello)
                if kind in ("head", "body"):
                    await writer.start_tls(ctx, ssl_handshake_timeout=600)
                if kind == "head":
                    await trickle(reader, writer, HEAD)
                elif kind == "body":
                    writer.write(BODY_HEAD)
                    await trickle(reader, writer, BODY)
                else:
                    await reader.read(1)
                stats["closed by server"] += 1
            except (OSError, asyncio.IncompleteReadError, TimeoutError):
                stats["closed by server"] += 1
            except Exception as e:  # noqa: BLE001 (counted and reported, the connection re-opened)
                stats[f"error {type(e).__name__}"] += 1
            finally:
                held -= 1
                writer.transport.abort()

    tasks = [asyncio.create_task(one()) for _ in range(n)]
    ramp_end = time.monotonic() + 30
    while held < n and time.monotonic() < ramp_end:
        await asyncio.sleep(0.1)
    out.put(("ready", held))
    peak_low = held
    while not stop.is_set():
        await asyncio.sleep(0.1)
        peak_low = min(peak_low, held)
    out.put(("done", {"held_at_end": held, "lowest_held": peak_low, **stats}))
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _hostile_main(port: int, kind: str, n: int, stop: Any, out: Any) -> None:
    asyncio.run(_hold(port, kind, n, stop, out))


class ValidLoad:
    """Open-loop valid reviews: `conns` threads on kept-alive connections (opened and used once before
    the attack), every `fresh_every`-th request on a new connection."""

    def __init__(self, server: Server, conns: int = 8, fresh_every: int = 10) -> None:
        self.server, self.fresh_every = server, fresh_every
        self.conns = [server.connection() for _ in range(conns)]
        for c in self.conns:
            body, uid = valid_review()
            assert check_answer(*send(c, "POST", "/validate?timeout=10s", body)[:2], uid) is None

    def run(self, rate: float, seconds: float) -> list[tuple[float, bool, str | None]]:
        work: list[tuple[float, int]] = []
        lock = threading.Condition()
        results: list[tuple[float, bool, str | None]] = []
        start = time.monotonic() + 0.2
        total = int(rate * seconds)

        def worker(k: int) -> None:
            while True:
                with lock:
                    while not work:
                        lock.wait()
                    at, i = work.pop(0)
                if i < 0:
                    return
                fresh = i % self.fresh_every == self.fresh_every - 1
                left = at + TIMEOUT - time.monotonic()
                if left <= 0:
                    results.append((TIMEOUT, fresh, "timeout (queued)"))
                    continue
                conn = self.server.connection(left) if fresh else self.conns[k]
                if conn.sock is not None:
                    conn.sock.settimeout(left)
                conn.timeout = left
                body, uid = valid_review()
                try:
                    err = check_answer(*send(conn, "POST", "/validate?timeout=10s", body)[:2], uid)
                except (OSError, http.client.HTTPException, ValueError) as e:
                    conn.close()
                    err = error_kind(e)
                if fresh:
                    conn.close()
                results.append((time.monotonic() - at, fresh, err))

        threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(len(self.conns))]
        for t in threads:
            t.start()
        for i in range(total):
            at = start + i / rate
            time.sleep(max(0.0, at - time.monotonic()))
            with lock:
                work.append((at, i))
                lock.notify()
        with lock:
            work.extend([(0.0, -1)] * len(threads))
            lock.notify_all()
        for t in threads:
            t.join(TIMEOUT + 5)
        return results

    def close(self) -> None:
        for c in self.conns:
            c.close()


def held_row(server: Server, kind: str, n: int, rate: float, seconds: float) -> dict[str, Any]:
    load = ValidLoad(server)
    ctx = mp.get_context("fork")
    stop, out = ctx.Event(), ctx.Queue()
    kinds = KINDS if kind == "all" else (kind,) if kind != "baseline" else ()
    procs = [ctx.Process(target=_hostile_main, args=(server.port, k, n, stop, out)) for k in kinds]
    row: dict[str, Any] = {"kind": kind, "held_target": n * len(kinds)}
    try:
        for p in procs:
            p.start()
        row["held_at_start"] = sum(out.get(timeout=60)[1] for _ in procs)
        results = load.run(rate, seconds)
        stop.set()
        stats: Counter[str] = Counter()
        for _ in procs:
            stats.update(out.get(timeout=30)[1])
    finally:
        stop.set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
        load.close()
    lat = [r[0] * 1000 for r in results]
    errors = Counter(r[2] for r in results if r[2])
    row.update(
        sent=len(results),
        answered=len(results) - sum(errors.values()),
        errors=dict(errors),
        p50_ms=round(pct(lat, 50), 1),
        p99_ms=round(pct(lat, 99), 1),
        max_ms=round(max(lat), 1),
        fresh_max_ms=round(max((r[0] for r in results if r[1]), default=float("nan")) * 1000, 1),
        **dict(stats),
    )
    return row


def part_held(repo: Path, tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    print(
        f"held: valid reviews at {args.rate:g}/s for {args.seconds:g} s beside {args.held} hostile connections"
    )
    print(f"  {'hostile kind':20} {'held':>11} {'answered':>9} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
          f"{'new-conn max':>12} {'held at end':>11} {'closed by srv':>13} {'reconnects':>10}  errors")  # fmt: skip
    server = Server(repo, tmp)
    try:
        for kind in ("baseline", *KINDS, "all")[: None if args.all_at_once else -1]:
            r = held_row(server, kind, args.held, args.rate, args.seconds)
            rows.append(r)
            title = KIND_TITLES.get(kind, "none (baseline)")
            print(
                f"  {title:20} {r.get('held_at_start', 0):5d}/{r['held_target']:<5d} "
                f"{r['answered']:4d}/{r['sent']:<4d} {r['p50_ms']:7.1f} {r['p99_ms']:7.1f} {r['max_ms']:7.1f} "
                f"{r['fresh_max_ms']:12.1f} {r.get('held_at_end', 0):11d} {r.get('closed by server', 0):13d} "
                f"{r.get('reconnects', 0):10d}  {r['errors'] or ''}"
                + (f" connect failed {r['connect failed']}" if r.get("connect failed") else ""),
                flush=True,
            )
            time.sleep(1.0)
    finally:
        server.kill()
    return rows


# --- parts amplify, memory, deadline -------------------------------------------------------------------
def claim_review(
    name: str = "big", labels: dict[str, str] | None = None, requests: Any = None
) -> dict[str, Any]:
    review = json.loads(json.dumps(REVIEW))
    review["request"]["uid"] = str(uuid.uuid4())
    review["request"]["name"] = review["request"]["object"]["metadata"]["name"] = name
    if labels is not None:
        review["request"]["object"]["metadata"]["labels"] = labels
    if requests is not None:
        review["request"]["object"]["spec"]["devices"]["requests"] = requests
    return review


def slice_review() -> dict[str, Any]:
    """A ResourceSlice CREATE whose devices are "@@" (for `filled`)."""
    review = claim_review("node-1-gpus")
    request = review["request"]
    request.pop("namespace")
    for key in ("kind", "requestKind"):
        request[key]["kind"] = "ResourceSlice"
    for key in ("resource", "requestResource"):
        request[key]["resource"] = "resourceslices"
    pool = {"name": "node-1", "generation": 1, "resourceSliceCount": 1}
    spec = {"driver": "gpu.example.com", "pool": pool, "nodeName": "node-1", "devices": "@@"}
    meta = {"name": "node-1-gpus"}
    request["object"] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": meta,
        "spec": spec,
    }
    return review


def filled(review: dict[str, Any], item: Any, size: int, wrap: str = "[]") -> bytes:
    """`review` with its "@@" value replaced by a JSON list (or map) of items made by `item(i)`, as many
    as make the body `size` bytes at most."""
    text = json.dumps(review, ensure_ascii=False, separators=(",", ":")).encode()
    room = size - len(text)
    parts, used, i = [], 2, 0
    while True:
        piece = item(i).encode()
        if used + len(piece) + 1 > room:
            break
        parts.append(piece)
        used += len(piece) + 1
        i += 1
    return text.replace(b'"@@"', wrap[0].encode() + b",".join(parts) + wrap[1].encode(), 1)


def amplify_body() -> bytes:
    return json.dumps(claim_review("é" * 1_000_000), ensure_ascii=False).encode()


def memory_shapes(limit: int) -> dict[str, bytes]:
    size = limit - 1024
    name = claim_review("é" * 1_000_000)
    name["request"]["object"]["metadata"]["annotations"] = {"pad": "@@"}
    pad = size - len(json.dumps(name, ensure_ascii=False).encode()) - 4
    return {
        "1M-é name + padding": json.dumps(name, ensure_ascii=False).encode().replace(b"@@", b"x" * pad),
        "claim of empty {} requests": filled(claim_review(requests="@@"), lambda i: "{}", size),
        "label map": filled(claim_review(labels="@@"), lambda i: f'"k{i}":"v"', size, "{}"),  # type: ignore[arg-type]
    }


def part_amplify(repo: Path, tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    server = Server(repo, tmp)
    try:
        r = one_big(server, amplify_body())
    finally:
        server.kill()
    print("amplify: one review, ResourceClaim named with 1,000,000 'é'")
    print(f"  request {r['request_bytes']:,} B -> HTTP {r['status']}, response {r['response_bytes']:,} B "
          f"in {r['seconds']:.2f} s; {r['gist']}")  # fmt: skip
    return r


def under_rss_sampler(
    server: Server, body: bytes, concurrent: int
) -> tuple[list[dict[str, Any]], dict[str, float], float, float]:
    """`concurrent` copies of `body` at once, RSS sampled every 50 ms: answers, peak per process, peak
    of the sum, wall seconds."""
    peaks: dict[str, float] = {}
    peak_total = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak_total
        while not stop.wait(0.05):
            rss = server.rss_mib()
            peak_total = max(peak_total, sum(rss.values()))
            for k, v in rss.items():
                peaks[k] = max(peaks.get(k, 0.0), v)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    answers: list[dict[str, Any]] = []
    t0 = time.monotonic()
    senders = [
        threading.Thread(target=lambda: answers.append(one_big(server, body))) for _ in range(concurrent)
    ]
    for t in senders:
        t.start()
    for t in senders:
        t.join(BIG_TIMEOUT + 10)
    wall = time.monotonic() - t0
    time.sleep(0.3)
    stop.set()
    sampler.join()
    return answers, peaks, peak_total, wall


def part_memory(repo: Path, tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    shapes = memory_shapes(args.max_body)
    print(
        f"memory: {args.concurrent} requests at once per shape, bodies just under {args.max_body:,} B; RSS MiB"
    )
    rows = []
    for label, body in shapes.items():
        server = Server(repo, tmp)
        try:
            pids_before = server.worker_pids()
            idle = server.rss_mib()
            answers, peaks, peak_total, wall = under_rss_sampler(server, body, args.concurrent)
            restarted = sorted(set(pids_before) - set(server.worker_pids()))
        finally:
            server.kill()
        r = {
            "shape": label,
            "body_bytes": len(body),
            "statuses": dict(Counter(str(a["status"]) for a in answers)),
            "wall_s": round(wall, 2),
            "slowest_s": max(a["seconds"] for a in answers),
            "idle_mib": {k: round(v, 1) for k, v in idle.items()},
            "idle_total_mib": round(sum(idle.values()), 1),
            "peak_mib": {k: round(v, 1) for k, v in peaks.items()},
            "peak_total_mib": round(peak_total, 1),
            "workers_gone": restarted,
            "gist": answers[0]["gist"] if answers else "",
        }
        rows.append(r)
        workers = [k for k in r["peak_mib"] if k != "arbiter"]
        print(
            f"  {label:27} {len(body):,} B: {r['statuses']} in {wall:.1f} s; idle {r['idle_total_mib']:.0f} "
            f"(arbiter {idle['arbiter']:.0f}, workers "
            + ", ".join(f"{idle.get(w, 0):.0f}" for w in workers)
            + f") -> peak total {peak_total:.0f} (arbiter {peaks.get('arbiter', 0):.0f}, workers "
            + ", ".join(f"{peaks[w]:.0f}" for w in workers)
            + ")"
            + (f"; workers gone (killed/restarted): {restarted}" if restarted else "")
        )
        print(f"  {'':27} answer: {r['gist']}", flush=True)
    return rows


def deadline_shapes(size: int) -> dict[str, bytes]:
    def request(i: int) -> str:
        return json.dumps({"name": f"r{i}", "exactly": {"deviceClassName": "example-gpu", "count": 1}})

    def device(i: int) -> str:
        attrs = {"model": {"string": "A100"}, "index": {"int": i}, "driverVersion": {"version": "550.1.0"}}
        return json.dumps(
            {"name": f"gpu-{i}", "attributes": attrs, "capacity": {"memory": {"value": "80Gi"}}}
        )

    return {
        "ResourceSlice of 5 MB of devices": filled(slice_review(), device, size),
        "claim of 5 MB valid requests": filled(claim_review(requests="@@"), request, size),
        "claim with a 5 MB label map": filled(claim_review(labels="@@"), lambda i: f'"k{i}":"v"', size, "{}"),  # type: ignore[arg-type]
    }


def part_deadline(repo: Path, tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    print("deadline: one 5 MB valid review sent with ?timeout=1s (new server per shape)")
    rows = []
    for label, body in deadline_shapes(5_000_000).items():
        server = Server(repo, tmp)
        try:
            r = {"shape": label, **one_big(server, body, "/validate?timeout=1s")}
        finally:
            server.kill()
        rows.append(r)
        print(f"  {label:29} {r['request_bytes']:,} B -> {r['status']} in {r['seconds']:.2f} s; {r['gist']}")
    return rows


# --- part drain ----------------------------------------------------------------------------------------
def part_drain(repo: Path, tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    server = Server(repo, tmp)
    results: list[tuple[str, float, str, str]] = []  # (connection, at, outcome, Connection header)
    try:
        conns = [server.connection() for _ in range(args.drain_conns)]
        for c in conns:
            body, uid = valid_review()
            assert check_answer(*send(c, "POST", "/validate?timeout=10s", body)[:2], uid) is None
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        time.sleep(0.05)
        exited: list[float] = []
        watcher = threading.Thread(
            target=lambda: exited.append(server.proc.wait() * 0 + time.monotonic() - t0)
        )
        watcher.start()
        try:
            status, data, _ = send(server.connection(), "GET", "/readyz", None)
            ready_gist = f"{status} {data[:100].decode(errors='replace')!r}"
        except (OSError, http.client.HTTPException) as e:
            ready_gist = error_kind(e)

        def review_at(conn: http.client.HTTPSConnection | None, at: float, label: str) -> None:
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            body, uid = valid_review()
            try:
                status, data, header = send(
                    conn or server.connection(), "POST", "/validate?timeout=10s", body
                )
                outcome = check_answer(status, data, uid) or "answered"
            except (OSError, http.client.HTTPException) as e:
                outcome, header = error_kind(e), ""
            results.append((label, at, "answered" if outcome == "answered" else outcome, header))

        plan = [(c, 0.25 * (k + 1), "kept-alive") for k, c in enumerate(conns)]
        plan += [(None, at, "new") for at in (1.0, 2.0, 3.0, 4.0, 6.0, 8.0)]
        senders = [threading.Thread(target=review_at, args=p) for p in plan]
        for t in senders:
            t.start()
        for t in senders:
            t.join(TIMEOUT + 10)
        watcher.join(60)
        exit_s, code = (round(exited[0], 2) if exited else None), server.proc.returncode
        for c in conns:
            c.close()
    finally:
        server.kill()
    out: dict[str, Any] = {"readyz_after_sigterm": ready_gist, "exit_seconds": exit_s, "exit_code": code}
    print(f"drain: {args.drain_conns} kept-alive connections, SIGTERM, then one review on each (every 0.25 s) "
          "and new connections at 1, 2, 3, 4, 6, 8 s")  # fmt: skip
    print(f"  /readyz 50 ms after SIGTERM: {ready_gist}")
    for label in ("kept-alive", "new"):
        rows = sorted(r for r in results if r[0] == label)
        outcomes = Counter(r[2] for r in rows)
        closes = sum(r[3].lower() == "close" for r in rows)
        out[label] = {
            "outcomes": dict(outcomes),
            "connection_close": closes,
            "timeline": [r[1:3] for r in rows],
        }
        print(f"  {label:10}: {dict(outcomes)} ({closes} with Connection: close); "
              + ", ".join(f"{at:g}s {o}" for _, at, o, _ in rows))  # fmt: skip
    print(f"  arbiter exited {exit_s} s after SIGTERM (code {code})", flush=True)
    return out


PARTS = {"held": part_held, "amplify": part_amplify, "memory": part_memory, "deadline": part_deadline}
PARTS["drain"] = part_drain


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=ROOT, help="the checkout whose `draguard serve` runs")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    ap.add_argument("--runs", type=int, default=1, help="repeat every part (every run is printed)")
    ap.add_argument("--held", type=int, default=1000, help="hostile connections per kind (default 1000)")
    ap.add_argument("--seconds", type=float, default=12.0, help="valid load per held row (default 12)")
    ap.add_argument("--rate", type=float, default=20.0, help="valid reviews per second (default 20)")
    ap.add_argument("--no-all-at-once", dest="all_at_once", action="store_false", help="skip that held row")
    ap.add_argument("--max-body", type=int, default=7 << 20, help="the server's body limit (default 7 MiB)")
    ap.add_argument("--concurrent", type=int, default=8, help="memory: requests at once (default 8)")
    ap.add_argument("--drain-conns", type=int, default=17, help="drain: kept-alive connections (default 17)")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    args = ap.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    unknown = set(parts) - set(PARTS)
    if unknown:
        ap.error(f"unknown parts {sorted(unknown)}")
    repo = args.repo.resolve()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    head = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%h %s"], capture_output=True, text=True
    )
    flags = draguard(repo, "serve", "--help").stdout
    has = [f for f in ("--read-timeout", "--max-connections", "--drain-seconds") if f in flags]
    print(f"abuse benchmark of {repo} ({head.stdout.strip()[:90]})")
    print(f"serve flags of its own: {', '.join(has) or 'none of --read-timeout, --max-connections, --drain-seconds'}; "
          f"cores {os.cpu_count()}, open files {hard}, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    figures: dict[str, Any] = {"repo": str(repo), "commit": head.stdout.strip(), "flags": has, "runs": []}
    tmp = Path(tempfile.mkdtemp(prefix="draguard-abuse-bench-"))
    try:
        for run in range(1, args.runs + 1):
            print(f"\n=== run {run} of {args.runs} (load average {os.getloadavg()[0]:.1f})")
            figures["runs"].append({})
            for p in parts:
                figures["runs"][-1][p] = PARTS[p](repo, tmp, args)  # type: ignore[operator]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
