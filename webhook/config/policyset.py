"""The DraguardPolicies of a cluster as one server process holds them: one writer (the watch's applier
thread: `apply`, `delete`, `publish`, the interface `webhook.state.live`'s applier writes), any number of
readers of immutable snapshots (the `Policy` in force, each object's verdict).

    policies = PolicySet(RULES, profile, base=specs_of_the_policy_file)
    policies.apply(obj); policies.delete("DraguardPolicy", None, "name")     # the writer
    snap = policies.publish()            # snap.policy: combine(base + every object's last valid version)
    snap.writes                          # the status writes this publish decided (the caller sends them)

Each object's last valid version stays in force while a newer generation is invalid (a new object of the
same name, another uid, starts afresh); the status written says why. A status is written when the
object's does not already say the verdict, and at most once per verdict and generation, so two servers
that disagree (different draguard versions during a rollout) do not overwrite each other forever.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from webhook.config.policy import Policy, PolicySpec, combine
from webhook.config.policyobject import KIND, check_policy_object, generation_of, policy_name
from webhook.config.policystatus import Verdict, says, status_patch, verdict_of
from webhook.config.profile import Profile

Key = tuple[str, str]  # ("", name): cluster-scoped, as the live state keys objects


def rfc3339_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class PolicyState:
    """One object as a snapshot reports it."""

    name: str
    generation: int
    applied: int | None  # the generation in force; None: no valid one seen
    verdict: Verdict


@dataclass(frozen=True)
class StatusWrite:
    """A JSON merge patch for the status subresource of the DraguardPolicy `name`."""

    name: str
    patch: Mapping[str, Any]


@dataclass(frozen=True)
class PolicySnapshot:
    version: int
    policy: Policy
    states: Mapping[str, PolicyState] = field(default_factory=dict)
    writes: tuple[StatusWrite, ...] = ()
    stored: Mapping[Key, dict[str, Any]] = field(default_factory=dict)

    def objects(self, kind: str) -> Mapping[Key, dict[str, Any]]:
        """The objects as last applied (the watch compares a relist with them)."""
        return self.stored if kind == KIND else {}

    def counts(self) -> dict[str, int]:
        return {KIND: len(self.stored)}


@dataclass
class _Entry:
    uid: str
    generation: int
    obj: dict[str, Any]
    verdict: Verdict
    good: PolicySpec | None
    good_generation: int | None


def _uid(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    uid = meta.get("uid") if isinstance(meta, dict) else None
    return uid if isinstance(uid, str) else ""


class PolicySet:
    def __init__(
        self,
        known_rules: Mapping[str, Any],
        profile: Profile,
        base: Sequence[PolicySpec] = (),
        clock: Callable[[], str] = rfc3339_now,
    ) -> None:
        self.known_rules = known_rules
        self.profile = profile
        self.base = tuple(base)
        self.clock = clock
        self._entries: dict[str, _Entry] = {}
        self._touched: set[str] = set()  # names whose status is to be looked at by the next publish
        self._changed = False  # whether the policy in force may change with the next publish
        self._written: dict[str, tuple[str, int, Verdict]] = {}  # name -> (uid, generation, verdict) written
        self._snapshot = PolicySnapshot(0, combine(self.base))

    def snapshot(self) -> PolicySnapshot:
        return self._snapshot

    def apply(self, obj: dict[str, Any]) -> None:
        name, uid, generation = policy_name(obj), _uid(obj), generation_of(obj)
        old = self._entries.get(name)
        self._touched.add(name)
        if (
            old is not None
            and (old.uid, old.generation) == (uid, generation)
            and old.obj.get("spec") == obj.get("spec")
        ):
            old.obj = obj  # the status (or metadata) changed, not what the policy sets
            return
        result = check_policy_object(obj, self.known_rules, self.profile)
        same = old is not None and old.uid == uid
        if isinstance(result, PolicySpec):
            entry = _Entry(uid, generation, obj, verdict_of(generation, []), result, generation)
        else:
            good, good_gen = (old.good, old.good_generation) if same and old is not None else (None, None)
            entry = _Entry(uid, generation, obj, verdict_of(generation, result), good, good_gen)
        self._changed = self._changed or old is None or entry.good is not old.good
        self._entries[name] = entry

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        if self._entries.pop(name, None) is not None:
            self._changed = True
        self._written.pop(name, None)
        self._touched.discard(name)

    def publish(self) -> PolicySnapshot:
        prev = self._snapshot
        policy = prev.policy
        if self._changed:
            policy = combine([*self.base, *(e.good for _, e in sorted(self._entries.items()) if e.good)])
        writes = tuple(w for name in sorted(self._touched) if (w := self._status_write(name)) is not None)
        states = {
            name: PolicyState(name, e.generation, e.good_generation, e.verdict)
            for name, e in sorted(self._entries.items())
        }
        stored = {("", name): e.obj for name, e in self._entries.items()}
        self._snapshot = PolicySnapshot(
            prev.version + 1, policy, MappingProxyType(states), writes, MappingProxyType(stored)
        )
        self._touched.clear()
        self._changed = False
        return self._snapshot

    def _status_write(self, name: str) -> StatusWrite | None:
        e = self._entries.get(name)
        if e is None or says(e.obj.get("status"), e.verdict):
            return None
        status = e.obj.get("status")
        judged = isinstance(status, dict) and status.get("observedGeneration") == e.generation
        if judged and self._written.get(name) == (e.uid, e.generation, e.verdict):
            return None  # another server said otherwise after this one wrote: do not fight over it
        self._written[name] = (e.uid, e.generation, e.verdict)
        return StatusWrite(name, status_patch(e.obj, e.verdict, self.clock()))
