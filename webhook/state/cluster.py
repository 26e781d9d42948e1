"""ClusterState: a StateStore for one thread that publishes every change at once — the convenience the
CLI (`simulate` places Pods one after another) and tests use. Reads go to the current version
(`view`, a webhook.state.view.StateView); `allocate()` accepts either.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from webhook.config.profile import Profile
from webhook.model.budget import Deadline, OutOfBudget
from webhook.state.store import StateStore
from webhook.state.view import StateView


class ClusterState:
    """The cluster state, changed in place; every change is published immediately."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.store = StateStore(profile)

    @classmethod
    def from_objects(
        cls, objs: Iterable[dict[str, Any]], profile: Profile, deadline: Deadline | None = None
    ) -> ClusterState:
        """A state holding `objs`; raises `OutOfBudget` if `deadline` passes while building it."""
        state = cls(profile)
        for n, obj in enumerate(objs):
            if deadline is not None and n % 256 == 255 and deadline.expired():
                raise OutOfBudget()
            state.store.apply(obj)
        state.store.publish(deadline)
        return state

    @property
    def view(self) -> StateView:
        """The current version."""
        return self.store.snapshot().state

    @property
    def version(self) -> int:
        return self.store.snapshot().version

    def enabled(self, gate: str) -> bool:
        return self.profile.enabled(gate)

    def apply(self, obj: dict[str, Any]) -> None:
        """Add or replace one object; other kinds are ignored."""
        self.store.apply(obj)
        self.store.publish()

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        """Remove one object (unknown names are ignored)."""
        self.store.delete(kind, namespace, name)
        self.store.publish()

    def __getattr__(self, name: str) -> Any:
        # reads of the current version: pools_for, node, candidate_nodes, allocated, slices, classes, ...
        if name.startswith("__") or name == "store":  # copy/pickle probing a half-built instance
            raise AttributeError(name)
        return getattr(self.store.snapshot().state, name)
