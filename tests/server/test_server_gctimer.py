"""The collector's pauses are timed without touching a metric inside the gc callback (a thread holding a
prometheus_client lock when a collection starts would deadlock on it): pauses wait in a deque until an
ordinary code path flushes them."""

from __future__ import annotations

import threading

from webhook.server import metrics


def _count(generation: str) -> float:
    for family in metrics.GC_PAUSES.collect():
        for sample in family.samples:
            if sample.name.endswith("_count") and sample.labels.get("generation") == generation:
                return sample.value
    return 0.0


def test_the_gc_callback_only_queues_and_flush_observes() -> None:
    timer = metrics.GCTimer()
    before = _count("7")
    # the callback, run while this thread holds a lock the metric would need, returns at once
    lock = threading.Lock()
    with lock:
        timer("start", {"generation": 7})
        timer("stop", {"generation": 7})
    assert _count("7") == before and len(timer.pending) == 1
    timer.flush()
    assert _count("7") == before + 1 and not timer.pending


def test_pauses_waiting_for_a_flush_are_bounded() -> None:
    timer = metrics.GCTimer()
    for _ in range(metrics.GCTimer.KEPT + 10):
        timer("start", {"generation": 8})
        timer("stop", {"generation": 8})
    assert len(timer.pending) == metrics.GCTimer.KEPT
