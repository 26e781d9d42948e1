"""The cost `rbac: {enforceNodeBoundStatus: true}` adds to the webhook: `review()` of a ResourceClaim status
UPDATE (the validating endpoint's whole path) from a node-bound driver service account writing its device
status (tests/fixtures/rbac/status/claim.yaml, allocated on kind-worker), with the policy off and on, on an
empty state; and the check alone (webhook/admission/statusauthz.py) on the same request.

    python bench/rbac_bench.py                  # 5 runs of 2,000 reviews per case
    python bench/rbac_bench.py --runs 3 --calls 500

Cases: `off` (policy without rbac), `on, own node` (allowed), `on, other node` (denied). Every run's
figures are printed in µs per review (median, p99), with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "server"))

from test_server_status_authz import DRIVER, status_update, stored, with_device_status  # noqa: E402

from webhook.admission import AdmissionConfig  # noqa: E402
from webhook.admission.request import parse_request  # noqa: E402
from webhook.admission.review import review  # noqa: E402
from webhook.admission.statusauthz import check  # noqa: E402
from webhook.config.policy import PolicySpec, RbacPolicy, combine  # noqa: E402
from webhook.config.profile import load_profile  # noqa: E402
from webhook.state.store import StateStore  # noqa: E402

PROFILE = load_profile("1.37")


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def timed(fn: Any, calls: int) -> list[float]:
    out = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e6)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args(argv)
    store = StateStore(PROFILE)
    store.replace_all([])
    store.publish()
    snap = store.snapshot()
    off = AdmissionConfig(profile=PROFILE, policy=combine([]))
    on = AdmissionConfig(profile=PROFILE, policy=combine([PolicySpec(rbac=RbacPolicy(True))]))
    old = stored()
    new = with_device_status(old)
    own = status_update(new, old, DRIVER, "kind-worker")
    other = status_update(new, old, DRIVER, "kind-worker2")
    cases = {
        "off": (own, off),
        "on, own node": (own, on),
        "on, other node": (other, on),
    }
    for name, (ar, config) in cases.items():
        print(f"  {name}: allowed={review(ar, snap, config)['response']['allowed']}")
    req = parse_request(other)
    for run in range(1, args.runs + 1):
        print(f"run {run} (load average {os.getloadavg()[0]:.2f})")
        for name, (ar, config) in cases.items():
            us = timed(lambda ar=ar, config=config: review(ar, snap, config), args.calls)
            print(f"  {name:15s} review p50 {statistics.median(us):7.1f}  p99 {pct(us, 99):7.1f} µs")
        us = timed(lambda: check(req, True), args.calls)
        print(f"  {'check alone':15s}        p50 {statistics.median(us):7.1f}  p99 {pct(us, 99):7.1f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
