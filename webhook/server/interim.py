"""INTERIM ADAPTER — removed when the `state` branch is merged (DESIGN-7 §1).

`InterimStateStore` is the DESIGN-7 `StateStore` writer/reader contract over the admission branch's
`InterimSnapshot` (today's `ClusterState` and batch `Inventory`), rebuilt whole on every `publish`: no
incremental index. Only the server uses it, and only until the real `webhook.state.store` lands.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from webhook.admission.interim_snapshot import InterimSnapshot
from webhook.profile import Profile


class InterimStateStore:
    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._versions = itertools.count(1)
        self._pending: list[dict[str, Any]] = []
        self._snapshot = InterimSnapshot([], profile, 0)

    def snapshot(self) -> InterimSnapshot:
        return self._snapshot

    def replace_all(self, objs: Iterable[dict[str, Any]]) -> None:
        self._pending = list(objs)

    def publish(self) -> InterimSnapshot:
        self._snapshot = InterimSnapshot(self._pending, self.profile, next(self._versions))
        return self._snapshot
