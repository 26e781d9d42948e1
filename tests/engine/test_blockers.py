"""What keeps a request's matching devices from it (webhook/engine/blockers.py): the claims holding them
exclusively, by shares of a device's capacity or by the counters they draw on, and the taints it does not
tolerate — per node, only on the nodes asked about, and bounded by the budget."""

from __future__ import annotations

from typing import Any

from engine_fixtures import claim, gpu_class, node_slice, req, state_of

from tests.builders import allocated, result
from webhook.engine import Budget
from webhook.engine.blockers import blockers

BROKEN = {"key": "broken", "value": "yes", "effect": "NoSchedule"}
GPUS = [
    {"name": "g0"},
    {"name": "g1"},
    {"name": "g2", "taints": [BROKEN]},
    {"name": "g3", "taints": [{"key": "info", "effect": "None"}]},
]


def holder(name: str, node: str, *devices: str) -> dict[str, Any]:
    return claim(req(), name=name, status=allocated(*(result("gpu", node, d) for d in devices)))


def test_exclusive_holders_and_untolerated_taints_per_node() -> None:
    state = state_of(
        [
            gpu_class(),
            node_slice("n1", GPUS),
            node_slice("n2", GPUS),
            holder("a", "n1", "g0"),
            holder("b", "n1", "g1"),
            holder("c", "n2", "g0", "g1"),
        ]
    )
    got = blockers(state, [claim(req(count=2), name="want")], ["n1"])
    assert got.complete
    (b,) = got.found  # n2 was not asked about
    assert (b.claim, b.request, b.node) == ("ns/want", "gpu", "n1")
    assert b.held == {"ns/a": 1, "ns/b": 1}
    assert b.taints == (BROKEN,)  # effect None blocks nothing
    tolerant = req(count=2, tolerations=[{"key": "broken", "operator": "Exists"}])
    (b,) = blockers(state, [claim(tolerant, name="want")], ["n2"]).found
    assert b.held == {"ns/c": 2} and b.taints == ()


def partition(name: str, counter_set: str, gib: int) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {"size": {"int": gib}},
        "consumesCounters": [{"counterSet": counter_set, "counters": {"memory": {"value": f"{gib}Gi"}}}],
    }


def test_counter_sets_are_held_by_the_claims_drawing_on_them() -> None:
    sets = [{"name": f"gpu-{g}", "counters": {"memory": {"value": "8Gi"}}} for g in (0, 1)]
    parts = [partition("whole", "gpu-0", 8), partition("half-a", "gpu-0", 4), partition("half-b", "gpu-0", 4)]
    state = state_of(
        [
            gpu_class(),
            node_slice("n1", [*parts, partition("other", "gpu-1", 4)], sharedCounters=sets),
            holder("half", "n1", "half-a"),
            holder("elsewhere", "n1", "other"),
        ]
    )
    whole = req(selectors=['device.attributes["gpu.example.com"].size == 8'])
    (b,) = blockers(state, [claim(whole, name="w")], ["n1"]).found
    assert b.held == {"ns/half": 1}  # the claim on gpu-1 holds nothing the request needs


def test_a_budget_that_runs_out_returns_what_was_found() -> None:
    state = state_of([gpu_class(), node_slice("n1", GPUS), holder("a", "n1", "g0")])
    want = [claim(req(count=2), name="want")]
    got = blockers(state, want, ["n1"], budget=Budget(steps=0, seconds=0.0))
    assert not got.complete and got.found == []
