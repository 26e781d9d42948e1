"""The single writer of the live state: one thread takes what the reflectors received off one queue,
applies it to the StateStore and publishes.

Coalescing: whatever is queued is applied, then published once: a batch ends when the queue is empty,
after `max_batch` events or after `max_apply_seconds` of applying, so under a burst the publishes grow
larger instead of falling behind, and a lone event is published at once (no waiting for company). A
`Replace` (a list) makes the kind's objects exactly the listed ones: objects not listed are deleted
(deleted while the watch was down, or during the relist). A kind is synced once its first list is
published; the state is ready once every kind is (after `on_first`, the engine's warm-up).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from webhook.state.live.kinds import WatchedKind, key_of
from webhook.state.live.observer import Observer, Published
from webhook.state.live.reflector import Change, Item, Replace

log = logging.getLogger("draguard.state.live")

MAX_BATCH = 10_000  # events (a list counts as its objects)
MAX_APPLY_SECONDS = 0.05
QUEUE_SIZE = 100_000  # items; a full queue makes the reflectors wait (backpressure on the streams)


class WatchedStore(Protocol):
    """What the applier writes: the StateStore (webhook.state.store), the PolicySet (webhook.config)."""

    def apply(self, obj: dict[str, Any]) -> None: ...

    def delete(self, kind: str, namespace: str | None, name: str) -> None: ...

    def publish(self) -> Published: ...

    def snapshot(self) -> Published: ...


class Applier:
    def __init__(
        self,
        store: WatchedStore,
        kinds: Iterable[WatchedKind],
        observer: Observer | None = None,
        on_first: Callable[[Any], None] | None = None,
        max_batch: int = MAX_BATCH,
        max_apply_seconds: float = MAX_APPLY_SECONDS,
        what: str = "the cluster state",
    ) -> None:
        self.store = store
        self.what = what  # for the log
        self.kinds = list(kinds)
        self.observer = observer or Observer()
        self.on_first = on_first
        self.max_batch = max_batch
        self.max_apply_seconds = max_apply_seconds
        self.queue: queue.Queue[Item | None] = queue.Queue(QUEUE_SIZE)
        self.ready = threading.Event()
        self.synced: frozenset[str] = frozenset()  # kinds whose first list is published
        self.resource_versions: dict[str, str] = {}  # per kind, the last one applied and published
        self._known: dict[str, set[tuple[str, str]]] = {k.kind: set() for k in self.kinds}
        self._applied_rv: dict[str, str] = {}
        self._stopped = threading.Event()
        self.thread: threading.Thread | None = None
        self.publishes = 0

    def put(self, item: Item) -> None:
        """The reflectors' sink (blocks while the queue is full, unless stopping)."""
        while not self._stopped.is_set():
            try:
                self.queue.put(item, timeout=0.5)
                return
            except queue.Full:
                continue

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name="draguard-state-applier", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopped.set()
        try:
            self.queue.put_nowait(None)
        except queue.Full:
            pass
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout)

    def waiting_for(self) -> list[str]:
        """The kinds whose initial list is not published yet."""
        return [k.kind for k in self.kinds if k.kind not in self.synced]

    def run(self) -> None:
        while not self._stopped.is_set():
            item = self.queue.get()
            if item is None:
                return
            try:
                self._batch(item)
            except Exception:  # a bug must not end the writer; the last published state stays
                log.exception("applying watch events failed")

    def _batch(self, first: Item) -> None:
        t0 = time.monotonic()
        items = [first]
        count = self._apply(first)
        while count < self.max_batch and time.monotonic() - t0 < self.max_apply_seconds:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._stopped.set()
                break
            items.append(item)
            count += self._apply(item)
        snapshot = self.store.publish()
        self.publishes += 1
        done = time.monotonic()
        self.resource_versions = dict(self._applied_rv)
        latencies = [done - i.received for i in items if isinstance(i, Change)]
        self.observer.published(snapshot, done - t0, count, latencies)
        new = [i.kind.kind for i in items if isinstance(i, Replace) and i.kind.kind not in self.synced]
        if new:
            self.synced = self.synced | frozenset(new)
            everything = not self.waiting_for()
            if everything and not self.ready.is_set() and self.on_first is not None:
                try:
                    self.on_first(snapshot)
                except Exception:  # a failed warm-up only makes the first requests slower
                    log.exception("warm-up after the initial sync failed")
            self.observer.synced(sorted(set(new)), everything)
            if everything and not self.ready.is_set():
                log.info("%s is synced: %s", self.what, snapshot.counts())
                self.ready.set()
        replaced = sorted({i.kind.kind for i in items if isinstance(i, Replace)})
        if replaced:
            self.observer.replaced(replaced)

    def _apply(self, item: Item) -> int:
        kind = item.kind
        known = self._known[kind.kind]
        if isinstance(item, Replace):
            listed: set[tuple[str, str]] = set()
            for obj in item.objects:
                listed.add(key_of(kind, obj))
                self.store.apply(obj)
            for ns, name in known - listed:
                self.store.delete(kind.kind, ns or None, name)
            self._known[kind.kind] = listed
            if item.resource_version:
                self._applied_rv[kind.kind] = item.resource_version
            return max(1, len(item.objects))
        key = key_of(kind, item.obj)
        if item.type == "DELETED":
            self.store.delete(kind.kind, key[0] or None, key[1])
            known.discard(key)
        else:
            self.store.apply(item.obj)
            known.add(key)
        if item.resource_version:
            self._applied_rv[kind.kind] = item.resource_version
        return 1
