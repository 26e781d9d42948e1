"""INTERIM ADAPTERS — removed when the `state` and `admission` branches are merged (DESIGN-7 §1, §2).

`InterimStateStore` is the DESIGN-7 `StateStore` contract over today's `ClusterState`, rebuilt whole on
every `replace_all` (no incremental index, no cross-object rules). `interim_review` answers every
well-formed AdmissionReview with `allowed: true` and raises `BadReview` for anything else. Only the server
uses them, and only until the real `webhook.state.store` and `webhook.admission` land.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from webhook.model.budget import Deadline
from webhook.policy import Policy
from webhook.profile import Profile
from webhook.state import ClusterState


class BadReview(ValueError):
    """A body that is no AdmissionReview (the server answers 400 with the message)."""


@dataclass(frozen=True)
class AdmissionConfig:
    profile: Profile
    policy: Policy | None = None
    endpoint: str = "validate"
    deadline_seconds: float = 5.0
    failure_mode: str = "open"


class Snapshot:
    def __init__(self, version: int, state: ClusterState, objects: list[dict[str, Any]]) -> None:
        self.version = version
        self.published_at = time.monotonic()
        self.state = state
        self._counts = dict(Counter(str(o.get("kind")) for o in objects))

    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def cross_object_violations(self, obj: dict[str, Any], old: dict[str, Any] | None) -> list[Any]:
        return []


class InterimStateStore:
    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._versions = itertools.count(1)
        self._pending: list[dict[str, Any]] = []
        self._snapshot = Snapshot(0, ClusterState(profile), [])

    def snapshot(self) -> Snapshot:
        return self._snapshot

    def replace_all(self, objs: Iterable[dict[str, Any]]) -> None:
        self._pending = list(objs)

    def publish(self) -> Snapshot:
        state = ClusterState.from_objects(self._pending, self.profile)
        self._snapshot = Snapshot(next(self._versions), state, self._pending)
        return self._snapshot


def interim_review(
    ar: Any, snapshot: Snapshot, config: AdmissionConfig, deadline: Deadline | None = None
) -> dict[str, Any]:
    if not isinstance(ar, dict):
        raise BadReview("the body is not a JSON object")
    if ar.get("apiVersion") != "admission.k8s.io/v1" or ar.get("kind") != "AdmissionReview":
        raise BadReview(
            f"expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, got "
            f"{ar.get('apiVersion')!r} / {ar.get('kind')!r}"
        )
    request = ar.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str) or not request["uid"]:
        raise BadReview("request.uid is missing: an AdmissionReview request carries a uid to answer with")
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": request["uid"], "allowed": True},
    }
