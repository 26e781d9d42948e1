"""The background audit's cost (`serve --audit-interval`, webhook/audit/incremental.py): a full pass vs an
incremental pass after one watch event, on audit_bench.py's generated cluster.

    python bench/audit_incremental_bench.py --nodes 100 --pending 20

Times, in this process: the audit as `draguard audit` does it (load every object, then audit), the first
pass of an `IncrementalAudit` (everything judged: a server's first audit), then a pass after one
ResourceSlice changed (a device attribute), after one allocated ResourceClaim changed (an annotation),
and after one Pending Pod was deleted. Each incremental pass's report is checked against a fresh full
pass of the same objects (identical, or the bench fails); what each pass re-did is printed (`counts`).
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import audit_bench as ab  # noqa: E402

from webhook.audit.incremental import IncrementalAudit  # noqa: E402
from webhook.audit.objects import AuditObjects  # noqa: E402
from webhook.audit.run import AuditOptions, audit  # noqa: E402
from webhook.model.budget import Deadline  # noqa: E402
from webhook.server.liveaudit import AUDITED_KINDS  # noqa: E402
from webhook.simulate.explainpod import load_objects  # noqa: E402
from webhook.state.live.listing import pod_summary  # noqa: E402


def deadline() -> Deadline:
    return Deadline(time.monotonic() + 3600)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--pending", type=int, default=20)
    args = ap.parse_args(argv)
    slices, claims, pods = ab.generate(args.nodes, args.pending)
    objects = AuditObjects()
    for obj in [*slices, *claims, *pods]:
        objects.apply(obj)
    opts = AuditOptions(
        version="1.37", search_runs=0, jobs=1, deadline_seconds=3600, max_pending_pods=args.pending
    )
    devices = sum(len(s["spec"].get("devices") or []) for s in slices if s["kind"] == "ResourceSlice")
    print(
        f"{args.nodes} nodes, {devices} devices, {len(claims)} claims, {len(pods)} Pods ({args.pending} pending)"
    )

    def short() -> dict[tuple[str, str], dict[str, Any]]:
        return {k: pod_summary(p) for k, p in objects.publish().objects("Pod").items()}

    snap = objects.publish()
    t = time.perf_counter()
    d = deadline()
    full = audit(load_objects(snap.everything(AUDITED_KINDS), opts, d), opts, d, live=True, pods=short())
    print(f"full audit (load + audit, as draguard audit): {time.perf_counter() - t:.2f} s, {full.counts()}")
    inc = IncrementalAudit()
    t = time.perf_counter()
    first = inc.run(snap.everything(AUDITED_KINDS), opts, deadline(), short())
    print(f"incremental, first pass: {time.perf_counter() - t:.2f} s, re-did {dict(inc.counts)}")
    if first.to_dict() != full.to_dict():
        print("FIRST PASS DIFFERS FROM THE FULL AUDIT", file=sys.stderr)
        return 1

    def event(what: str, change: Any) -> bool:
        change()
        snap = objects.publish()
        t = time.perf_counter()
        got = inc.run(snap.everything(AUDITED_KINDS), opts, deadline(), short())
        took = time.perf_counter() - t
        t = time.perf_counter()
        fresh = IncrementalAudit().run(snap.everything(AUDITED_KINDS), opts, deadline(), short())
        full_took = time.perf_counter() - t
        same = got.to_dict() == fresh.to_dict()
        print(
            f"after {what}: incremental {took:.2f} s (re-did {dict(inc.counts)}), full pass {full_took:.2f} s; "
            f"reports {'identical' if same else 'DIFFER'}"
        )
        return same

    one_slice = copy.deepcopy(
        next(s for s in slices if s["kind"] == "ResourceSlice" and s["spec"].get("devices"))
    )
    one_slice["spec"]["devices"][0].setdefault("attributes", {})["bench.example.com/touched"] = {"bool": True}
    one_claim = copy.deepcopy(next(c for c in claims if c.get("status")))
    one_claim["metadata"].setdefault("annotations", {})["bench.example.com/touched"] = "yes"
    pending = next(p for p in pods if "nodeName" not in p["spec"])
    ok = event("one ResourceSlice changed", lambda: objects.apply(one_slice))
    ok = event("one ResourceClaim changed", lambda: objects.apply(one_claim)) and ok
    meta = pending["metadata"]
    ok = (
        event("one pending Pod deleted", lambda: objects.delete("Pod", meta["namespace"], meta["name"]))
        and ok
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
