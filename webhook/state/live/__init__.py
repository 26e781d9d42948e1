"""The cluster state kept current from the API server: one reflector thread per kind lists and watches
(reflector.py over client.py), one applier thread is the StateStore's only writer (applier.py). The same
machinery keeps draguard's DraguardPolicies in a PolicySet (`kinds.POLICIES`, webhook/server/livepolicy.py),
whose status status.py writes.

    live = LiveState(KubeClient(load_api_client(kubeconfig)), store, observer=...)
    live.start(); live.ready.wait()          # every kind's initial list applied and published
    live.stop()
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from webhook.state.live.applier import Applier, WatchedStore
from webhook.state.live.client import ApiError, ConfigError, Expired, KubeClient, Unreachable, load_api_client
from webhook.state.live.kinds import WATCHED, WatchedKind, watched_for
from webhook.state.live.observer import Observer
from webhook.state.live.reflector import NOT_SERVED_RECHECK, PAGE_SIZE, READ_TIMEOUT, Backoff, Reflector

__all__ = [
    "ApiError",
    "Backoff",
    "ConfigError",
    "Expired",
    "KubeClient",
    "LiveState",
    "Observer",
    "Unreachable",
    "WATCHED",
    "watched_for",
    "load_api_client",
]


class LiveState:
    """Reflectors for `kinds` feeding one applier that writes `store`."""

    def __init__(
        self,
        client: KubeClient,
        store: WatchedStore,
        kinds: Iterable[WatchedKind] = WATCHED,
        observer: Observer | None = None,
        on_first: Callable[[Any], None] | None = None,
        page_size: int = PAGE_SIZE,
        watch_timeout: int | None = None,
        read_timeout: float = READ_TIMEOUT,
        backoff: Callable[[], Backoff] = Backoff,
        recheck_seconds: float = NOT_SERVED_RECHECK,
        what: str = "the cluster state",
    ) -> None:
        self.client = client
        self.kinds = list(kinds)
        self._stop = threading.Event()
        self.applier = Applier(store, self.kinds, observer, on_first, what=what)
        self.reflectors = [
            Reflector(
                client,
                kind,
                self.applier.put,
                self._stop,
                observer,
                page_size=page_size,
                watch_timeout=watch_timeout,
                read_timeout=read_timeout,
                backoff=backoff(),
                recheck_seconds=recheck_seconds,
                stored=lambda kind: store.snapshot().objects(kind),
            )
            for kind in self.kinds
        ]

    @property
    def ready(self) -> threading.Event:
        return self.applier.ready

    def waiting_for(self) -> list[str]:
        return self.applier.waiting_for()

    def resource_versions(self) -> dict[str, str]:
        """Per kind, the resourceVersion of the last list or event published."""
        return self.applier.resource_versions

    def start(self) -> None:
        self.applier.start()
        for r in self.reflectors:
            r.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the threads, waiting `timeout` seconds in all (they are daemons: a reflector reading a
        list page cannot be interrupted and ends with the process)."""
        end = time.monotonic() + timeout
        self._stop.set()
        for r in self.reflectors:
            r.interrupt()
        self.applier.stop(timeout)
        for r in self.reflectors:
            if r.thread is not None:
                r.thread.join(max(0.0, end - time.monotonic()))
        self.client.close()
