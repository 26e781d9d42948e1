"""One kind's LIST + WATCH loop, as client-go's reflector runs it (admission.md §6).

- LIST: paginated (`limit`, `continue`), a consistent read (resourceVersion unset: a relist never goes
  back in time); a continue token that expired (410) restarts the list from its first page. The list's
  `metadata.resourceVersion` is where the watch starts (never an item's).
- WATCH from that resourceVersion with `allowWatchBookmarks` and a server-side `timeoutSeconds` (random
  300-600 s per watch unless set); every ADDED/MODIFIED/DELETED/BOOKMARK advances the resourceVersion.
  A stream the server ends is reopened from the last resourceVersion (no relist).
- 410 Expired (an ERROR event or the answer to the WATCH) → relist; another error event, or a WATCH
  refused with a status that retrying cannot fix (400, 403, 404 ...) → relist after a backoff.
- A kind the API server does not serve (404 on its first LIST: an API version or a feature gate off) is
  taken as empty, so the state can be ready, and listed again every 5 minutes.
- Connection failures, 429 and 5xx, streams that break or stay silent for the read timeout → reopen after
  a capped exponential backoff with jitter (at least the Retry-After of a 429/503), reset once a list
  succeeds or a watch delivers.

The reflector only reads the network: everything it receives goes to `sink` (the applier's queue) as
`Replace` (a whole list) or `Change` (one event), with the object in the form the state keeps.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from webhook.state.live.client import ApiError, Expired, KubeClient, Unreachable, WatchStream, status_error
from webhook.state.live.kinds import WatchedKind, kept, key_of
from webhook.state.live.observer import Observer

log = logging.getLogger("draguard.state.live")

WATCH_TIMEOUT_RANGE = (300, 600)  # seconds, as client-go's reflector picks them
READ_TIMEOUT = 150.0  # a watch silent this long is dead (the API server sends a bookmark about every minute)
PAGE_SIZE = 500
RETRIABLE = frozenset({429, 500, 502, 503, 504})
NOT_SERVED_RECHECK = 300.0  # seconds between two lists of a kind the API server does not serve


class Backoff:
    """Capped exponential backoff with jitter: delay n is min(cap, initial·2ⁿ·(1 + jitter·U[0,1)))."""

    def __init__(self, initial: float = 0.8, cap: float = 30.0, jitter: float = 1.0, rng: Any = None) -> None:
        self.initial, self.cap, self.jitter = initial, cap, jitter
        self._rng = rng or random.Random()
        self._n = 0

    def next(self, at_least: float = 0.0) -> float:
        delay = min(self.cap, self.initial * (2**self._n) * (1.0 + self.jitter * self._rng.random()))
        self._n = min(self._n + 1, 32)
        return max(at_least, float(delay))

    def reset(self) -> None:
        self._n = 0


@dataclass
class Replace:
    """A whole list: the kind's objects are exactly these now."""

    kind: WatchedKind
    objects: list[dict[str, Any]]
    resource_version: str
    reason: str  # initial | expired | error


@dataclass
class Change:
    kind: WatchedKind
    type: str  # ADDED | MODIFIED | DELETED
    obj: dict[str, Any]
    resource_version: str
    received: float  # time.monotonic() when the event was read


Item = Replace | Change


class Reflector:
    def __init__(
        self,
        client: KubeClient,
        kind: WatchedKind,
        sink: Callable[[Item], None],
        stop: threading.Event,
        observer: Observer | None = None,
        page_size: int = PAGE_SIZE,
        watch_timeout: int | None = None,
        read_timeout: float = READ_TIMEOUT,
        backoff: Backoff | None = None,
        recheck_seconds: float = NOT_SERVED_RECHECK,
        stored: Callable[[str], Mapping[tuple[str, str], dict[str, Any]]] | None = None,
    ) -> None:
        self.client = client
        self.kind = kind
        self.sink = sink
        self.stop = stop
        self.observer = observer or Observer()
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.read_timeout = read_timeout
        self.backoff = backoff or Backoff()
        self.recheck_seconds = recheck_seconds
        self.stored = stored  # the published objects of a kind (read-only: a snapshot's map)
        self._listed_once_served = False
        self._reported_not_served = False
        self.resource_version = ""  # the last one seen (list, event or bookmark)
        self._stream: WatchStream | None = None
        self._lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(
            target=self.run, name=f"draguard-watch-{self.kind.plural}", daemon=True
        )
        self.thread.start()

    def interrupt(self) -> None:
        """End the current watch (another thread; used on stop)."""
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def _wait(self, seconds: float) -> bool:
        """Sleep unless stopped; True when stopped."""
        return self.stop.wait(seconds)

    def run(self) -> None:
        pending: str | None = "initial"  # why the next list runs; None while the watch can resume
        while not self.stop.is_set():
            try:
                if pending is not None:
                    self._list(pending)
                    pending = None
                pending = self._watch()
            except Expired as e:  # a list's continue token expired: list again from the start
                log.info("%s: %s; listing again", self.kind.kind, e)
                pending = "expired"
            except ApiError as e:
                if e.status == 404 and not self._listed_once_served:
                    self._not_served(e)
                    pending = "error"
                    continue
                delay = self.backoff.next(e.retry_after or 0.0)
                log.warning("%s: list failed (%s); retrying in %.1f s", self.kind.kind, e, delay)
                pending = "error"
                self._wait(delay)
            except Unreachable as e:
                delay = self.backoff.next()
                log.warning("%s: list failed (%s); retrying in %.1f s", self.kind.kind, e, delay)
                pending = "error"
                self._wait(delay)
            except Exception:  # a bug must not end the thread: the last published state stays
                delay = self.backoff.next()
                log.exception("%s: list/watch failed; retrying in %.1f s", self.kind.kind, delay)
                pending = pending or "error"
                self._wait(delay)

    def _not_served(self, e: ApiError) -> None:
        """The API server does not serve this kind (404 on the collection: an API version or feature
        gate off, e.g. DeviceTaintRules before 1.37): the kind counts as listed, with no objects, so
        the state can be ready; the list is tried again every `recheck_seconds`."""
        if not self._reported_not_served:
            log.warning(
                "%s: %s is not served by the API server (%s); taken as empty, checked again every %.0f s",
                self.kind.kind,
                self.kind.path,
                e,
                self.recheck_seconds,
            )
            self._reported_not_served = True
        self.resource_version = ""
        self.sink(Replace(self.kind, [], "", "error"))
        self._wait(self.recheck_seconds)

    def _list(self, reason: str) -> None:
        self.observer.relist(self.kind.kind, reason)
        t0 = time.monotonic()
        objects: list[dict[str, Any]] = []
        stored = self.stored(self.kind.kind) if self.stored is not None else {}
        cont, rv, pages = "", "", 0
        while True:
            page = self.client.list_page(self.kind.path, self.page_size, cont)
            pages += 1
            meta = page.get("metadata") or {}
            if not cont:
                rv = str(meta.get("resourceVersion") or "")
            for item in page.get("items") or []:
                if isinstance(item, dict):
                    obj = kept(self.kind, item)
                    same = stored.get(key_of(self.kind, obj))
                    # an unchanged object: the stored one is kept and this copy freed at once, so a relist
                    # holds one page, not a second copy of the cluster
                    objects.append(same if same is not None and same == obj else obj)
            del page
            cont = str(meta.get("continue") or "")
            if not cont or self.stop.is_set():
                break
        if self.stop.is_set():
            return
        seconds = time.monotonic() - t0
        self.observer.listed(self.kind.kind, len(objects), pages, seconds)
        log.info(
            "%s: listed %d object(s) in %d page(s), %.2f s (%s) at resourceVersion %s",
            self.kind.kind,
            len(objects),
            pages,
            seconds,
            reason,
            rv,
        )
        self.resource_version = rv
        self.sink(Replace(self.kind, objects, rv, reason))
        self._listed_once_served = True  # from now on a 404 is an error like another (retried)
        self.backoff.reset()

    def _watch(self) -> str | None:
        """One watch; returns the reason to relist, or None to reopen the watch from the last rv."""
        timeout = self.watch_timeout or random.randint(*WATCH_TIMEOUT_RANGE)
        read_timeout = max(self.read_timeout, 1.0)
        started = time.monotonic()
        try:
            stream = self.client.watch(self.kind.path, self.resource_version, timeout, read_timeout)
        except Expired as e:
            log.info(
                "%s: watch from resourceVersion %s: %s; relisting", self.kind.kind, self.resource_version, e
            )
            return "expired"
        except ApiError as e:
            delay = self.backoff.next(e.retry_after or 0.0)
            self.observer.restart(self.kind.kind, "error")
            log.warning("%s: watch refused (%s); retrying in %.1f s", self.kind.kind, e, delay)
            self._wait(delay)
            return None if e.status in RETRIABLE else "error"
        except Unreachable as e:
            delay = self.backoff.next()
            self.observer.restart(self.kind.kind, "error")
            log.warning("%s: watch failed (%s); retrying in %.1f s", self.kind.kind, e, delay)
            self._wait(delay)
            return None
        with self._lock:
            self._stream = stream
        if self.stop.is_set():  # stopped while the watch was opening: interrupt() did not see it
            stream.close()
            return None
        events = 0
        try:
            for event in stream:
                if self.stop.is_set():
                    return None
                kind = event.get("type")
                obj = event["object"]
                if kind == "ERROR":
                    err = status_error(obj)
                    if isinstance(err, Expired):
                        log.info("%s: watch: %s; relisting", self.kind.kind, err)
                        return "expired"
                    delay = self.backoff.next()
                    log.warning("%s: watch error %s; relisting in %.1f s", self.kind.kind, err, delay)
                    self._wait(delay)
                    return "error"
                meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
                rv = str(meta.get("resourceVersion") or "")
                if kind == "BOOKMARK":
                    self.observer.event(self.kind.kind, "BOOKMARK")
                    if rv:
                        self.resource_version = rv
                    continue
                if kind not in ("ADDED", "MODIFIED", "DELETED"):
                    continue
                received = time.monotonic()
                self.observer.event(self.kind.kind, kind)
                self.sink(Change(self.kind, kind, kept(self.kind, obj), rv, received))
                if rv:
                    self.resource_version = rv
                events += 1
                if events == 1:
                    self.backoff.reset()
        except Unreachable as e:
            if self.stop.is_set():
                return None
            delay = self.backoff.next()
            self.observer.restart(self.kind.kind, "error")
            log.warning("%s: watch broke off (%s); reopening in %.1f s", self.kind.kind, e, delay)
            self._wait(delay)
            return None
        finally:
            with self._lock:
                self._stream = None
            stream.close()
        if self.stop.is_set():
            return None
        lasted = time.monotonic() - started
        if lasted >= timeout - 1:
            self.observer.restart(self.kind.kind, "timeout")
            return None
        self.observer.restart(self.kind.kind, "closed")
        if events == 0 and lasted < 1.0:  # closed at once: do not spin against the server
            self._wait(self.backoff.next())
        return None
