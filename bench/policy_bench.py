"""Policies in the cluster: how fast a DraguardPolicy change is in force, and what policies cost a review.

    python bench/policy_bench.py                          # both parts, deploy/'s shape (2 workers)
    python bench/policy_bench.py --changes 10 --seconds 10 --rate 100    # a quick look

Part 1, change → effect: the API-server stand-in (tests/standin, a separate process, HTTPS) and the real
`draguard serve --state cluster --workers W`. A client keeps reviewing the same unsatisfiable
ResourceClaim (4 GPUs, the node has 2) on K kept-alive connections (gunicorn spreads them over the
workers); the script then flips a DraguardPolicy between `feasibility: {kinds: {ResourceClaim: enforce}}`
and `warn` (create, then a PUT per change, as `kubectl apply` does) and measures, from the moment the
write was sent, (a) the first review answered by the new policy and (b) the moment every connection has
answered by it (all workers). Each worker has its own watch, so (b) is the cluster-wide figure.

Part 2, 20 policies vs none in the same run: two `draguard serve --state DIR` servers on the same state
(bench/webhook_bench.py's cluster A and request mix), one with no policy, one with `--policy FILE` holding
20 DraguardPolicy objects (rule severities, feasibility per kind and namespace, tenant entries with
namespace selectors, allowed classes, limits — every one applying to the mix's namespace). The load is
open loop at --rate for --seconds against each server in turn, alternating A, B, A, B (--rounds), so drift
of the machine's load hits both; every round's figures are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from webhook_bench import Server, print_run, request_bodies, run_load, write_state  # noqa: E402

from tests.server.server_proc import Server as ServeProc  # noqa: E402
from tests.server.server_proc import make_certs, review_of  # noqa: E402
from tests.standin import objects as o  # noqa: E402
from tests.standin.process import StandIn  # noqa: E402

TOKEN = "system:serviceaccount:draguard-system:draguard"
COLLECTION = "/apis/draguard.io/v1alpha1/draguardpolicies"
NAMESPACE = "bench"  # the namespace of bench/admission_bench.py's namespaced objects


def _policy(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "draguard.io/v1alpha1",
        "kind": "DraguardPolicy",
        "metadata": {"name": name},
        "spec": spec,
    }


def _mode(enforce: bool) -> dict[str, Any]:
    return {"feasibility": {"kinds": {"ResourceClaim": "enforce" if enforce else "warn"}}}


def _verdict(answer: dict[str, Any]) -> str:
    response = answer["response"]
    return "denied" if not response["allowed"] else "allowed"


class Clients:
    """K threads, each reviewing the claim on its own kept-alive connection, recording (time, verdict)."""

    def __init__(self, server: ServeProc, k: int) -> None:
        self.server = server
        self.body = review_of(o.claim("four", 4))
        self.seen: list[list[tuple[float, str]]] = [[] for _ in range(k)]
        self.stop_flag = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(k)]
        for t in self.threads:
            t.start()

    def _run(self, i: int) -> None:
        conn = self.server.connection()
        try:
            while not self.stop_flag.is_set():
                sent = time.monotonic()
                status, answer = self.server.review(self.body, conn=conn)
                if status == 200:
                    self.seen[i].append((sent, _verdict(answer)))
        finally:
            conn.close()

    def wait(self, verdict: str, since: float, timeout: float = 30.0) -> tuple[float, float]:
        """(first, all): when the first review sent after `since` answered `verdict`, and when every
        connection had one (seconds after `since`; the time of the review's send, so the resolution is
        one review)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            firsts = []
            for seen in self.seen:
                at = next((t for t, v in list(seen) if t >= since and v == verdict), None)
                firsts.append(at)
            if all(f is not None for f in firsts):
                done = [f for f in firsts if f is not None]
                return min(done) - since, max(done) - since
            time.sleep(0.002)
        raise RuntimeError(f"no {verdict} answer on every connection within {timeout} s")

    def stop(self) -> None:
        self.stop_flag.set()
        for t in self.threads:
            t.join(30)


def change_latency(tmp: Path, workers: int, changes: int, connections: int) -> dict[str, Any]:
    with StandIn.start(tmp, tls=True) as api:
        api.seed([o.node("node-a"), o.device_class(), o.resource_slice("node-a", 2)])
        certs = tmp / "certs"
        make_certs(certs)
        os.environ["KUBECONFIG"] = str(api.kubeconfig(tmp / "kubeconfig", token=TOKEN))
        os.environ.pop("KUBERNETES_SERVICE_HOST", None)
        t0 = time.monotonic()
        server = ServeProc(
            tmp, "--state", "cluster", "--certs", str(certs), "--workers", str(workers), certs=certs
        )
        ready = time.monotonic() - t0
        clients = Clients(server, connections)
        firsts: list[float] = []
        alls: list[float] = []
        try:
            clients.wait("allowed", 0.0)  # every connection answered once: warm
            enforce = True
            sent = time.monotonic()
            code, obj, _ = api.request("POST", COLLECTION, _policy("claims", _mode(enforce)))
            assert code == 201, obj
            first, every = clients.wait("denied", sent)
            firsts.append(first)
            alls.append(every)
            for _ in range(changes - 1):
                enforce = not enforce
                code, current, _ = api.request("GET", f"{COLLECTION}/claims")
                current["spec"] = _mode(enforce)
                sent = time.monotonic()
                code, updated, _ = api.request("PUT", f"{COLLECTION}/claims", current)
                assert code == 200, updated
                first, every = clients.wait("denied" if enforce else "allowed", sent)
                firsts.append(first)
                alls.append(every)
                time.sleep(0.05)
        finally:
            clients.stop()
            server.stop()
    return {"workers": workers, "ready_s": round(ready, 2), "first_ms": firsts, "all_ms": alls}


def _ms(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return f"p50 {statistics.median(ms):.0f} / p95 {p95:.0f} / max {ms[-1]:.0f} ms"


def twenty_policies(namespace: str, count: int) -> list[dict[str, Any]]:
    """`count` policies a platform team could hold: each applies to `namespace` and allows the mix."""
    classes = ["gpu", "gpu.example.com"]  # the mix asks for class gpu
    out = []
    for i in range(count):
        spec: dict[str, Any] = {
            "rules": {"slice.driver.uppercase": "error"} if i % 4 == 0 else {},
            "feasibility": {
                "kinds": {"ResourceClaim": "warn"},
                "namespaces": [{"name": f"team-{i}", "default": "enforce"}],
            },
            "tenants": [
                {
                    "name": f"tenant-{i}",
                    "mode": ("Enforce", "Warn", "Audit")[i % 3],
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
                    if i % 2
                    else {},
                    "exclude": {"namespaces": [f"sandbox-{i}"]},
                    "allowedDeviceClasses": [*classes, f"extra-{i}"],
                    "maxDevicesPerClaim": 16,
                    "maxDevicesPerPod": 64,
                    "adminAccess": False,
                    "extendedResources": True,
                }
            ],
        }
        if not spec["rules"]:
            del spec["rules"]
        out.append(_policy(f"platform-{i:02d}", spec))
    return out


def policy_cost(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    import yaml

    state = tmp / "state"
    objs = write_state(state, args.nodes)
    policy_file = tmp / "policies.yaml"
    policy_file.write_text(yaml.safe_dump_all(twenty_policies(NAMESPACE, args.policies), sort_keys=False))
    bodies = request_bodies(objs, 4000)
    servers = {
        "none": Server(tmp, state, args, args.workers, args.threads),
        f"{args.policies} policies": Server(
            tmp, state, args, args.workers, args.threads, ["--policy", str(policy_file)]
        ),
    }
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in servers}
    try:
        for server in servers.values():
            run_load(server, bodies, args.rate, 5.0, args.clients, args.connections)  # warm-up
        for r in range(args.rounds):
            for name, server in servers.items():
                result = run_load(server, bodies, args.rate, args.seconds, args.clients, args.connections)
                print_run(f"round {r + 1}, {name}", result)
                rounds[name].append(result)
    finally:
        for server in servers.values():
            server.stop()
    return rounds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--changes", type=int, default=20, help="policy changes measured (part 1)")
    ap.add_argument("--change-workers", default="1,2", help="worker counts of part 1's servers")
    ap.add_argument("--connections", type=int, default=8, help="kept-alive connections per client")
    ap.add_argument("--nodes", type=int, default=250, help="cluster A's nodes (part 2)")
    ap.add_argument("--policies", type=int, default=20)
    ap.add_argument("--rate", type=float, default=200.0, help="requests/s (part 2)")
    ap.add_argument("--seconds", type=float, default=20.0, help="seconds per round (part 2)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--reload-interval", type=float, default=1.0)
    ap.add_argument("--skip", choices=("latency", "cost"), help="leave a part out")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    figures: dict[str, Any] = {"cores": os.cpu_count(), "load_before": os.getloadavg()}
    print(f"policy benchmark; load average {os.getloadavg()[0]:.1f}")
    if args.skip != "latency":
        figures["latency"] = []
        for w in (int(x) for x in args.change_workers.split(",")):
            tmp = Path(tempfile.mkdtemp(prefix="draguard-policy-bench-"))
            try:
                r = change_latency(tmp, w, args.changes, args.connections)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            figures["latency"].append(r)
            print(
                f"policy change → effect, {w} worker(s), {args.changes} changes, {args.connections} connections "
                f"(ready in {r['ready_s']} s): first review {_ms(r['first_ms'])}; "
                f"every connection {_ms(r['all_ms'])}"
            )
    if args.skip != "cost":
        tmp = Path(tempfile.mkdtemp(prefix="draguard-policy-bench-"))
        try:
            print(
                f"admission with {args.policies} policies vs none: {args.nodes} nodes, {args.rate:g}/s open loop, "
                f"{args.rounds} rounds of {args.seconds:g} s each, servers alternating"
            )
            figures["cost"] = policy_cost(tmp, args)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for name, runs in figures["cost"].items():
            print(
                f"  {name}: p50 {', '.join(str(r['p50_ms']) for r in runs)} ms; "
                f"p99 {', '.join(str(r['p99_ms']) for r in runs)} ms; errors {sum(r['errors'] for r in runs)}"
            )
    figures["load_after"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
