"""`serve --state cluster`: a worker's live state (webhook/state/live) and its metrics."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from webhook.io.sharedjson import SharedParts
from webhook.server import memory, metrics
from webhook.server.options import ServeOptions
from webhook.state.live import KubeClient, LiveState, Observer, load_api_client, watched_for

if TYPE_CHECKING:
    from webhook.state.live.observer import Published
    from webhook.state.store import Snapshot, StateStore

log = logging.getLogger("draguard.state")


class MetricsObserver(Observer):
    """The live state's reports as the metrics docs/webhook.md lists (per worker; prometheus multiprocess),
    and after a whole list is published, malloc's free pages returned (webhook/server/memory.py)."""

    def event(self, kind: str, event_type: str) -> None:
        label = metrics.watch_kind_label(kind)
        metrics.WATCH_EVENTS.labels(label, event_type).inc()
        metrics.WATCH_LAST_EVENT.labels(label).set(time.time())

    def relist(self, kind: str, reason: str) -> None:
        metrics.WATCH_RELISTS.labels(metrics.watch_kind_label(kind), reason).inc()

    def restart(self, kind: str, reason: str) -> None:
        metrics.WATCH_RESTARTS.labels(metrics.watch_kind_label(kind), reason).inc()

    def listed(self, kind: str, objects: int, pages: int, seconds: float) -> None:
        metrics.WATCH_LAST_EVENT.labels(metrics.watch_kind_label(kind)).set(time.time())

    def published(self, snapshot: Published, seconds: float, events: int, latencies: list[float]) -> None:
        for s in latencies:
            metrics.EVENT_TO_VISIBLE.observe(s)
        metrics.STATE_PUBLISHED.set(time.time())
        metrics.STATE_AGE.set(0.0)
        for kind, n in snapshot.counts().items():
            metrics.STATE_OBJECTS.labels(metrics.state_kind_label(kind)).set(n)

    def synced(self, kinds: list[str], all_synced: bool) -> None:
        metrics.STATE_SYNCED.set(1 if all_synced else 0)

    def replaced(self, kinds: list[str]) -> None:
        memory.release_free()  # the pages and the objects the list replaced


def start_live_state(
    options: ServeOptions, store: StateStore, on_first: Callable[[Snapshot], None]
) -> LiveState:
    """This worker's reflectors and applier, started (its own API client: connections are per process;
    its lists and events decoded with equal small objects shared, webhook.io.sharedjson)."""
    metrics.STATE_SYNCED.set(0)
    client = KubeClient(load_api_client(options.kubeconfig), shared=SharedParts())
    live = LiveState(
        client,
        store,
        kinds=watched_for(options.k8s_version),
        observer=MetricsObserver(),
        on_first=on_first,
        page_size=options.list_page_size,
        watch_timeout=options.watch_timeout_seconds,
        read_timeout=options.watch_read_timeout_seconds,
    )
    live.start()
    return live
