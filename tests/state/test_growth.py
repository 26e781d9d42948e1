"""A StateStore that publishes thousands of changes holds no more than after the first few hundred: no version,
record or cache entry outlives what bounds it (issue 18). Counted in allocated memory blocks, not time."""

from __future__ import annotations

import gc
import json
import sys
from typing import Any

from tests.standin import objects as o
from webhook.config.profile import load_profile
from webhook.engine import allocate
from webhook.io.deepjson import loads
from webhook.io.sharedjson import SharedParts
from webhook.state import StateStore

NODES = 8
DEVICES = 8


def _change(i: int) -> dict[str, Any]:
    """The i-th change: a claim allocated on / released from a node, or a node's slice republished with
    one device's attribute changed (50 different values: contents recur, serials never do)."""
    if i % 2:
        node = f"node-{(i // 4) % NODES}"
        claim = o.claim(f"churn-{(i // 4) % NODES}", 1)
        if i % 4 == 1:
            claim["status"] = o.allocation(node, [DEVICES - 1])
        return claim
    node = f"node-{i % NODES}"
    sl = o.resource_slice(node, DEVICES)
    sl["spec"]["devices"][0]["attributes"]["uuid"] = {"string": f"GPU-{i % 50}"}
    return sl


def _blocks() -> int:
    gc.collect()
    return sys.getallocatedblocks()


def test_no_growth_over_3000_publishes() -> None:
    store = StateStore(load_profile("1.37"))
    parts = SharedParts()  # objects decoded as the live state decodes them

    def publish(obj: dict[str, Any]) -> None:
        store.apply(loads(json.dumps(obj), 100, parts.hook))
        store.publish()

    for obj in [o.device_class(), *(o.node(f"node-{n}") for n in range(NODES))]:
        publish(obj)
    for n in range(NODES):
        publish(o.resource_slice(f"node-{n}", DEVICES))
    counts: dict[int, int] = {}
    for i in range(1, 3001):
        publish(_change(i))
        if i % 10 == 0:  # requests meanwhile: the engine's caches fill as they would
            assert allocate(store.snapshot().state, [o.claim("probe", 2)]).feasible
        if i in (300, 3000):
            counts[i] = _blocks()
    assert store.snapshot().version == 3000 + 2 * NODES + 1  # every change published
    grown = counts[3000] - counts[300]
    # a leak of one small object per publish would be 2,700 blocks
    assert grown < 500, f"{grown} more memory blocks after 3,000 publishes than after 300: {counts}"


def test_a_store_fed_shared_decoding_equals_one_fed_plain_decoding() -> None:
    """The live state's decoding (equal small objects shared) changes no object and no answer."""
    objs = [o.device_class(), *(o.node(f"node-{n}") for n in range(NODES))]
    objs += [o.resource_slice(f"node-{n}", DEVICES, model="A100" if n % 2 else "H100") for n in range(NODES)]
    objs += [_change(i) for i in range(1, 40)]
    parts = SharedParts()
    stores = [StateStore(load_profile("1.37")) for _ in range(2)]
    for obj in objs:
        text = json.dumps(obj)
        stores[0].apply(loads(text, 100, None))
        stores[1].apply(loads(text, 100, parts.hook))
    plain, shared = (s.publish() for s in stores)
    assert shared.counts() == plain.counts()
    for kind in ("ResourceSlice", "ResourceClaim", "Node", "DeviceClass"):
        assert dict(shared.objects(kind)) == dict(plain.objects(kind))
    slices = list(shared.objects("ResourceSlice").values())
    assert slices[0]["spec"]["devices"][1]["capacity"] is slices[1]["spec"]["devices"][1]["capacity"]
    for count in (1, 4, DEVICES, DEVICES + 1):
        a = allocate(plain.state, [o.claim("probe", count)])
        b = allocate(shared.state, [o.claim("probe", count)])
        assert (a.feasible, a.node) == (b.feasible, b.node)
