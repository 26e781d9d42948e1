"""What the live state reports as it runs (the server turns it into metrics; tests and benches record it).
Every method is called from the reflector threads or the applier thread and must not block."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Published(Protocol):
    """A published version of what the applier writes (a StateStore's Snapshot, a PolicySet's)."""

    def objects(self, kind: str) -> Mapping[tuple[str, str], dict[str, Any]]: ...

    def counts(self) -> dict[str, int]: ...


class Observer:
    """No-op defaults; override what you need."""

    def event(self, kind: str, event_type: str) -> None:
        """A watch event received (ADDED, MODIFIED, DELETED, BOOKMARK)."""

    def relist(self, kind: str, reason: str) -> None:
        """A LIST started: initial, expired (410), error (a watch that cannot resume)."""

    def restart(self, kind: str, reason: str) -> None:
        """A watch ended and is reopened from its resourceVersion: timeout (the server-side timeout),
        closed (the server ended it early), error (broken, silent for the read timeout, refused)."""

    def listed(self, kind: str, objects: int, pages: int, seconds: float) -> None:
        """A LIST finished (all pages read)."""

    def published(self, snapshot: Published, seconds: float, events: int, latencies: list[float]) -> None:
        """The applier published a batch: `latencies` are the event → visible seconds of its watch
        events (relists not included), `seconds` the time of applying and publishing."""

    def synced(self, kinds: list[str], all_synced: bool) -> None:
        """These kinds' initial lists are now published; `all_synced` once every kind's is."""

    def replaced(self, kinds: list[str]) -> None:
        """A batch holding whole lists of these kinds (an initial list or a relist) is published: the
        objects they replaced are released (after `on_first` and `synced` for the initial sync)."""
