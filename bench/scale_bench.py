"""Issue 18's goals on one replica: the real `draguard serve --state cluster` fed by the API-server stand-in.

    python3 bench/scale_bench.py                                # 1,000 nodes (72,000 devices), 1 worker x 4 threads
    python3 bench/scale_bench.py --nodes 250 --workers 2 --threads 4 --seconds 20   # the A/B's other shape
    python3 bench/scale_bench.py --nodes 2000 --parts sync,bytes                     # the growth curve

Cluster (bench/engine_bench.py's cluster B, grown to the issue's shape): per node a Node, a counter slice,
a slice of 64 MIG-style partitions (8 per GPU) and one of the 8 whole GPUs (72 devices; one slice of 72 is
more than the API server takes when devices consume counters), 10 allocated claims (one
holding a 3g.40gb partition of every GPU, nine holding one partition each), plus the DeviceClass and the
template of the request mix. 1,000 nodes = 72,000 devices, 10,000 allocated claims.

Parts (`--parts`, all by default), every figure printed:
- sync: seconds from starting `draguard serve` to /readyz 200, and the RSS of every process of the
  replica (arbiter + workers) after it;
- load: after `--warmup` seconds at the same rate (printed, not counted), open loop at `--rate` AdmissionReviews/s for `--seconds` (bench/webhook_bench.py's realistic mix:
  slices CREATE/UPDATE, claims with feasibility, Pods with templates, templates, classes, taint rules,
  the mutating endpoint), with the state churning at `--churn-rate` changes/s meanwhile (claims
  allocated/released, slices republished: bench/watch_bench.py's changes): p50/p99/max, errors; RSS after;
- events: `--event-rate` changes/s written to the stand-in for `--event-seconds` (the rate the writer
  achieved is printed: the stand-in is Python on the same cores); RSS after;
- relists: `--relists` times every watch's history expired (410 → a relist of every kind); RSS after each;
- bytes: the state's bytes per device in this process (tracemalloc): the objects as decoded from JSON
  pages (plainly, and as the live state decodes them: equal small objects shared, webhook.io.sharedjson),
  what the StateStore adds, what the engine's warm-up adds (seconds under tracemalloc: slower than bare).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import re
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import engine_bench as eb  # noqa: E402
import watch_bench as wb  # noqa: E402
import webhook_bench as whb  # noqa: E402
from admission_bench import TEMPLATE  # noqa: E402

from tests.standin.process import StandIn  # noqa: E402

PARTS = ("sync", "load", "events", "relists", "bytes")
# the nine single-partition claims per node: (gpu, device)
SINGLES = [(g, f"gpu-{g}-1g-10gb-0") for g in range(8)] + [(0, "gpu-0-2g-20gb-0")]


def cluster(nodes: int) -> list[dict[str, Any]]:
    """The issue's cluster (module docstring)."""
    objs = eb.cluster_b(nodes)
    wholes = []
    for o in objs:
        if o["kind"] == "ResourceSlice":
            o["spec"]["pool"]["resourceSliceCount"] = 3  # counters, partitions, whole GPUs
        if o["kind"] == "ResourceSlice" and o["spec"].get("devices"):
            node = o["spec"]["nodeName"]
            i = int(node.rsplit("-", 1)[1])
            # the whole GPUs in a slice of their own: a slice whose devices consume counters holds at most
            # 64 (the API server rejects more; 64 partitions fill the first)
            whole = copy.deepcopy({k: v for k, v in o.items() if k != "spec"})
            whole["metadata"]["name"] = o["metadata"]["name"].replace("partitions", "whole")
            whole["spec"] = {k: copy.deepcopy(v) for k, v in o["spec"].items() if k != "devices"}
            whole["spec"]["devices"] = []
            wholes.append(whole)
            for g in range(eb.GPUS_PER_NODE):
                attrs = eb._gpu_attributes(i, g, nodes)
                attrs["profile"] = {"string": "whole"}
                whole["spec"]["devices"].append(
                    {
                        "name": f"gpu-{g}",
                        "attributes": attrs,
                        "capacity": {"memory": {"value": "80Gi"}, "multiprocessors": {"value": "132"}},
                        "consumesCounters": [
                            {
                                "counterSet": f"gpu-{g}",
                                "counters": {"memory": {"value": "80Gi"}, "slices": {"value": "8"}},
                            }
                        ],
                    }
                )
    objs += wholes
    claims = []
    for i in range(nodes):
        for j, (_, device) in enumerate(SINGLES):
            claim = eb.claim_for(f"held-{i:05d}-{j}", "gpu", None, 1)
            result = {"request": "gpu", "driver": eb.DRIVER, "pool": eb.node_name(i), "device": device}
            claim["status"] = {"allocation": {"devices": {"results": [result]}}}
            claims.append(claim)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}
    return [ns, *objs, *claims, TEMPLATE]


class Changes(wb.Changes):
    """bench/watch_bench.py's churn on cluster B (its churn device is never one of SINGLES)."""

    def __init__(self, nodes: int, objs: list[dict[str, Any]]) -> None:
        super().__init__("B", nodes, objs)


class Churn(threading.Thread):
    """`rate` changes/s written to the stand-in until stopped (the state churning under the load)."""

    def __init__(self, api: StandIn, changes: Changes, rate: float) -> None:
        super().__init__(daemon=True)
        self.api, self.changes, self.rate = api, changes, rate
        self.done = threading.Event()
        self.written = 0

    def run(self) -> None:
        while not self.done.wait(1.0 / self.rate):
            self.api.seed([self.changes.next()])
            self.written += 1

    def stop(self) -> None:
        self.done.set()
        self.join()


def events(api: StandIn, changes: Changes, rate: float, seconds: float) -> tuple[int, float]:
    """Changes written on a clock at `rate`/s (batched) until `seconds` have passed: (count, seconds)."""
    t0 = time.monotonic()
    sent = 0
    while (now := time.monotonic() - t0) < seconds:
        due = min(int(now * rate) + 1, sent + wb.MAX_WRITE_BATCH)
        if due > sent:
            api.seed([changes.next() for _ in range(due - sent)])
            sent = due
        else:
            time.sleep(min(0.01, (sent + 1) / rate - now))
    return sent, time.monotonic() - t0


def cpu_seconds(serve: wb.Serve) -> float:
    """User + system CPU seconds of the replica's processes so far (the arbiter and its children)."""
    total = 0.0
    for pid in [serve.proc.pid, *wb._children(serve.proc.pid)]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def load_avg() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def rss_line(serve: wb.Serve) -> str:
    r = serve.rss_all()
    workers = [v for k, v in r.items() if k.startswith("worker")]
    return (
        f"RSS total {r['total']} MiB (arbiter {r['arbiter']}, workers {workers}), PSS total {r['pss']} MiB "
        f"[{load_avg()}]"
    )


def state_bytes(objs: list[dict[str, Any]], shared: bool) -> str:
    """Bytes per device of the state, measured in this process (module docstring); `shared`: the pages
    decoded as the live state decodes them (webhook.io.sharedjson), else plainly."""
    from webhook.config.profile import load_profile
    from webhook.engine.warm import warm_up
    from webhook.io.deepjson import loads
    from webhook.io.sharedjson import SharedParts
    from webhook.state.store import StateStore

    pages = [json.dumps({"items": objs[i : i + 500]}) for i in range(0, len(objs), 500)]
    hook = SharedParts().hook if shared else None
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    decoded = [o for p in pages for o in loads(p, 1000, hook)["items"]]
    decoding = time.perf_counter() - t0
    devices = wb.devices(decoded)
    raw = tracemalloc.get_traced_memory()[0]
    store = StateStore(load_profile("1.37", {}))
    t0 = time.perf_counter()
    for o in decoded:
        store.apply(o)
    snap = store.publish()
    seconds = time.perf_counter() - t0
    del decoded
    gc.collect()
    stored = tracemalloc.get_traced_memory()[0]
    warm_up(snap.state)
    gc.collect()
    warm = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (
        f"{warm / devices:,.0f} B per device: objects as decoded {raw / devices:,.0f} ({decoding:.2f} s), "
        f"held after apply + "
        f"publish {stored / devices:,.0f} (apply + publish {seconds:.2f} s under tracemalloc), "
        f"+ warm-up {(warm - stored) / devices:,.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="request threads per worker (default: serve's, 4)")
    p.add_argument("--parts", default=",".join(PARTS), help="any of " + ",".join(PARTS))
    p.add_argument("--rate", type=float, default=500.0, help="AdmissionReviews/s of the load part")
    p.add_argument("--seconds", type=float, default=60.0, help="length of the load part")
    p.add_argument("--warmup", type=float, default=10.0, help="seconds at --rate before the load part")
    p.add_argument("--clients", type=int, default=2, help="client processes of the load")
    p.add_argument("--connections", type=int, default=16, help="kept-alive connections per client process")
    p.add_argument("--churn-rate", type=float, default=10.0, help="state changes/s during the load")
    p.add_argument("--event-rate", type=float, default=1000.0)
    p.add_argument("--event-seconds", type=float, default=60.0)
    p.add_argument("--relists", type=int, default=3)
    p.add_argument("--page-size", type=int, default=500)
    args = p.parse_args(argv)
    parts = set(args.parts.split(","))
    objs = cluster(args.nodes)
    claims = sum(1 for o in objs if o["kind"] == "ResourceClaim")
    print(
        f"== {args.nodes} nodes, {wb.devices(objs):,} devices, {claims:,} allocated claims, {len(objs):,} "
        f"objects; serve --workers {args.workers} --threads {args.threads or 4} [{load_avg()}; 2-core machine "
        "shared with other jobs, client and stand-in on the same cores]"
    )
    if parts & {"sync", "load", "events", "relists"}:
        run_server(args, parts, objs)
    if "bytes" in parts:
        for shared in (False, True):
            how = "shared decoding (serve --state cluster)" if shared else "plain decoding"
            print(f"  state bytes, {how}: {state_bytes(objs, shared)} [{load_avg()}]")
    return 0


def run_server(args: argparse.Namespace, parts: set[str], objs: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as d:
        tmp = Path(d)
        api = StandIn(tmp, extra=["--history-limit", "200000", "--bookmark-interval", "60"])
        try:
            t = time.monotonic()
            for i in range(0, len(objs), wb.SEED_BATCH):
                api.seed(objs[i : i + wb.SEED_BATCH])
            print(f"  stand-in seeded in {time.monotonic() - t:.1f} s")
            serve = wb.Serve(
                tmp, api.kubeconfig(tmp / "kubeconfig"), args.page_size, args.workers, args.threads
            )
            try:
                serve.wait_ready()  # then every worker synced (each warms its engine once, after its lists)
                serve._wait(lambda: serve.text().count("warmed up") >= args.workers)
                sync = time.monotonic() - serve.t0
                lists = serve.listed("ResourceSlice", "initial")
                warm = re.findall(r"engine caches warmed up in ([0-9.]+) s", serve.text())
                print(
                    f"  sync: ready after {sync:.2f} s (ResourceSlice list {lists[0] if lists else float('nan'):.2f} s, "
                    f"engine warm-up {float(warm[0]) if warm else float('nan'):.2f} s); {rss_line(serve)}"
                )
                changes = Changes(args.nodes, objs)
                if "load" in parts:
                    mix = [o for o in objs if o["kind"] != "ResourceSlice" or o["spec"].get("devices")]
                    bodies = whb.request_bodies(mix, 4000)
                    churn = Churn(api, changes, args.churn_rate)
                    churn.start()
                    try:
                        if args.warmup > 0:
                            w = whb.run_load(
                                serve, bodies, args.rate, args.warmup, args.clients, args.connections
                            )
                            whb.print_run(f"  warm-up {args.rate:g}/s x {args.warmup:g} s (not counted)", w)
                        cpu = cpu_seconds(serve)
                        r = whb.run_load(
                            serve, bodies, args.rate, args.seconds, args.clients, args.connections
                        )
                        cpu = cpu_seconds(serve) - cpu
                    finally:
                        churn.stop()
                    whb.print_run(
                        f"  load {args.rate:g}/s x {args.seconds:g} s ({churn.written} state changes meanwhile)",
                        r,
                    )
                    per = cpu / max(1, r["requests"])
                    print(
                        f"  replica CPU during the load: {cpu:.1f} s for {r['requests']} requests = {per * 1000:.1f} ms "
                        f"a request (state changes and watches included): ~{1 / per:.0f} requests/s per core"
                    )
                    print(f"  after the load: {rss_line(serve)}")
                if "events" in parts:
                    sent, span = events(api, changes, args.event_rate, args.event_seconds)
                    rv = api.state()["resourceVersion"]
                    serve._wait(
                        lambda: (
                            max(serve.resource_version(k) for k in ("ResourceSlice", "ResourceClaim"))
                            >= int(rv)
                        )
                    )
                    print(
                        f"  events: {sent} written in {span:.1f} s, {sent / span:.0f}/s (target "
                        f"{args.event_rate:g}/s for {args.event_seconds:g} s; the stand-in's writes are the "
                        f"limit), all visible; {rss_line(serve)}"
                    )
                if "relists" in parts:
                    for k in range(1, args.relists + 1):
                        t = time.monotonic()
                        rv = api.expire(drop=True)
                        serve._wait(lambda rv=rv: serve.resource_version("ResourceSlice") >= rv)
                        print(
                            f"  relist {k}: ResourceSlice published after {time.monotonic() - t:.2f} s; "
                            f"{rss_line(serve)}"
                        )
            finally:
                serve.stop()
        finally:
            api.stop()


if __name__ == "__main__":
    raise SystemExit(main())
