"""Writes to the status subresource of a kind's objects, off the threads that read the watch: one thread
sends the latest patch per object (a newer patch for an object replaces one not yet sent) as a JSON merge
patch. A 409 Conflict (the object changed since the patch was made) or 404 (it is gone) drops the patch:
the watch delivers the newer object, which gets its own. Failures of the network or the server (429,
5xx, no answer) are retried after a backoff, `attempts` times in all; others (403: RBAC) are logged.

    writer = StatusWriter(client, "/apis/draguard.io/v1alpha1/draguardpolicies", field_manager="draguard")
    writer.start(); writer.submit("gpu-tenants", {"status": {...}}); writer.stop()
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal

from webhook.state.live.client import ApiError, KubeClient, Unreachable
from webhook.state.live.reflector import RETRIABLE, Backoff

log = logging.getLogger("draguard.state.live")

WriteResult = Literal["ok", "conflict", "error"]
ATTEMPTS = 5


class StatusWriter:
    def __init__(
        self,
        client: KubeClient,
        collection: str,
        field_manager: str,
        on_result: Callable[[WriteResult], None] | None = None,
        attempts: int = ATTEMPTS,
        backoff: Backoff | None = None,
    ) -> None:
        self.client = client
        self.collection = collection.rstrip("/")
        self.field_manager = field_manager
        self.on_result = on_result or (lambda result: None)
        self.attempts = attempts
        self.backoff = backoff or Backoff(initial=0.5, cap=10.0)
        self._pending: dict[str, tuple[dict[str, Any], int]] = {}  # name -> (patch, attempts made)
        self._cond = threading.Condition()
        self._stopped = threading.Event()
        self.thread: threading.Thread | None = None

    def submit(self, name: str, patch: Mapping[str, Any]) -> None:
        """Send `patch` to `<collection>/<name>/status` (replacing a patch for it not yet sent)."""
        with self._cond:
            self._pending.pop(name, None)  # to the end of the line, with its newest patch
            self._pending[name] = (dict(patch), 0)
            self._cond.notify()

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name="draguard-status-writer", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopped.set()
        with self._cond:
            self._cond.notify_all()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout)

    def idle(self) -> bool:
        """Whether nothing is waiting to be sent (a write in flight is not waiting)."""
        with self._cond:
            return not self._pending

    def run(self) -> None:
        while not self._stopped.is_set():
            with self._cond:
                while not self._pending and not self._stopped.is_set():
                    self._cond.wait()
                if self._stopped.is_set():
                    return
                name = next(iter(self._pending))
                patch, made = self._pending.pop(name)
            try:
                self._send(name, patch, made)
            except Exception:  # a bug must not end the writer
                log.exception("writing the status of %s failed", name)

    def _send(self, name: str, patch: dict[str, Any], made: int) -> None:
        path = f"{self.collection}/{name}/status"
        try:
            self.client.merge_patch(path, patch, self.field_manager)
        except ApiError as e:
            if e.status in (404, 409):
                log.debug("status of %s not written (%s): a newer version decides", name, e)
                self.on_result("conflict")
                return
            self._failed(name, patch, made, e, retry=e.status in RETRIABLE, at_least=e.retry_after or 0.0)
            return
        except Unreachable as e:
            self._failed(name, patch, made, e, retry=True)
            return
        self.backoff.reset()
        self.on_result("ok")

    def _failed(
        self, name: str, patch: dict[str, Any], made: int, e: Exception, retry: bool, at_least: float = 0.0
    ) -> None:
        if not retry or made + 1 >= self.attempts:
            log.warning("the status of %s could not be written: %s", name, e)
            self.on_result("error")
            return
        delay = self.backoff.next(at_least)
        log.info("writing the status of %s failed (%s); retrying in %.1f s", name, e, delay)
        if self._stopped.wait(delay):
            return
        with self._cond:
            if name not in self._pending:  # a newer patch, submitted meanwhile, wins
                self._pending[name] = (patch, made + 1)
                self._cond.notify()
