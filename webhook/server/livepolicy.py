"""`serve --state cluster`: a worker's DraguardPolicies. They are listed and watched with the live state's
machinery (a reflector and an applier of their own, so a burst of DRA events never delays a policy), into a
`PolicySet` (webhook/config/policyset.py); after each publish the applier thread hands the policy in force
to `on_policy` (the worker swaps its admission configs) and the status writes to a `StatusWriter`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from webhook.config.policy import Policy, PolicySpec
from webhook.config.policyset import PolicySet, PolicySnapshot
from webhook.config.profile import Profile
from webhook.model.catalogue import RULES
from webhook.server import metrics
from webhook.server.livestate import MetricsObserver
from webhook.server.options import ServeOptions
from webhook.state.live import KubeClient, LiveState, load_api_client
from webhook.state.live.kinds import POLICIES
from webhook.state.live.status import StatusWriter, WriteResult

if TYPE_CHECKING:
    from webhook.state.live.observer import Published

log = logging.getLogger("draguard.policy")


class PolicyObserver(MetricsObserver):
    """The watch metrics of DraguardPolicies, and after each publish: the policy to `on_policy` (when it is
    a new one), the status writes to `writer`."""

    def __init__(self, on_policy: Callable[[Policy], None], writer: StatusWriter) -> None:
        self.on_policy = on_policy
        self.writer = writer
        self._policy: Policy | None = None
        self._invalid: dict[str, str] = {}  # name -> the message last logged

    def published(self, snapshot: Published, seconds: float, events: int, latencies: list[float]) -> None:
        if not isinstance(snapshot, PolicySnapshot):
            return
        if snapshot.policy is not self._policy:
            self._policy = snapshot.policy
            self.on_policy(snapshot.policy)
            metrics.POLICY_CHANGES.inc()
            log.info(
                "policy version %d in force: %s",
                snapshot.version,
                ", ".join(snapshot.policy.sources) or "no DraguardPolicy",
            )
        for w in snapshot.writes:
            self.writer.submit(w.name, w.patch)
        in_force = sum(s.applied is not None for s in snapshot.states.values())
        invalid = sum(not s.verdict.valid for s in snapshot.states.values())
        metrics.POLICIES.labels("in_force").set(in_force)
        metrics.POLICIES.labels("invalid").set(invalid)
        invalid_now = {
            s.name: s.verdict.invalid.message for s in snapshot.states.values() if not s.verdict.valid
        }
        for name, message in invalid_now.items():
            if self._invalid.get(name) != message:
                log.warning(
                    "DraguardPolicy %s is invalid (the last valid version stays in force): %s", name, message
                )
        self._invalid = invalid_now

    def synced(self, kinds: list[str], all_synced: bool) -> None:
        """Readiness reports it (the worker waits for it); draguard_state_synced is the cluster state's."""


def _status_written(result: WriteResult) -> None:
    metrics.POLICY_STATUS_WRITES.labels(result).inc()


class LivePolicies:
    """One worker's DraguardPolicies: the PolicySet, its watch, and the status writer."""

    def __init__(self, policies: PolicySet, live: LiveState, writer: StatusWriter) -> None:
        self.policies = policies
        self.live = live
        self.writer = writer

    @property
    def ready(self) -> threading.Event:
        """Set once the initial list is published (its policy handed to `on_policy`)."""
        return self.live.ready

    def snapshot(self) -> PolicySnapshot:
        return self.policies.snapshot()

    def stop(self, timeout: float = 5.0) -> None:
        self.live.stop(timeout)
        self.writer.stop(timeout)
        self.writer.client.close()


def start_live_policies(
    options: ServeOptions,
    profile: Profile,
    base: Sequence[PolicySpec],
    on_policy: Callable[[Policy], None],
) -> LivePolicies:
    """This worker's policy watch and status writer, started (its own API clients: one for the watch,
    which LiveState closes, one for the writes). `base`: what `--policy FILE` sets, combined with them."""
    for metric_state in metrics.POLICY_STATES:
        metrics.POLICIES.labels(metric_state).set(0)
    for result in ("ok", "conflict", "error"):
        metrics.POLICY_STATUS_WRITES.labels(result)  # every series exists at 0: alerts can see it
    policies = PolicySet(RULES, profile, base)
    writer = StatusWriter(
        KubeClient(load_api_client(options.kubeconfig)),
        POLICIES.path,
        options.field_manager,
        on_result=_status_written,
    )
    live = LiveState(
        KubeClient(load_api_client(options.kubeconfig)),
        policies,
        kinds=[POLICIES],
        observer=PolicyObserver(on_policy, writer),
        page_size=options.list_page_size,
        watch_timeout=options.watch_timeout_seconds,
        read_timeout=options.watch_read_timeout_seconds,
        what="the DraguardPolicies",
    )
    writer.start()
    live.start()
    return LivePolicies(policies, live, writer)
