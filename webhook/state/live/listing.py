"""One listing of a cluster, without a watch: what a command that reads the cluster once needs
(`draguard explain pod`). Each kind is listed in pages as the reflector lists it, its objects kept as
the live state keeps them (`kinds.kept`); a kind the API server does not serve (404: an API version or
a feature gate off) lists as empty. Pods are kept whole only for the one Pod asked about; the others as
what a report says of them (name, node, phase)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from webhook.model.budget import Deadline
from webhook.state.live.client import ApiError, KubeClient
from webhook.state.live.kinds import WatchedKind, kept
from webhook.state.live.reflector import PAGE_SIZE

POD = WatchedKind("Pod", "v1", "pods", True)


@dataclass
class Listing:
    objects: list[dict[str, Any]] = field(default_factory=list)  # the listed kinds' objects, as kept
    pod: dict[str, Any] | None = None  # the Pod asked about, whole (None: the cluster has none)
    pods: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # every Pod, in short
    not_served: list[str] = field(default_factory=list)  # kinds the API server does not serve


def list_kind(
    client: KubeClient,
    kind: WatchedKind,
    keep: Callable[[dict[str, Any]], dict[str, Any] | None],
    page_size: int = PAGE_SIZE,
    deadline: Deadline | None = None,
) -> list[dict[str, Any]]:
    """Every object of `kind`, each as `keep` makes it (None: dropped). Raises `ApiError` (404 when the
    kind is not served), `Unreachable`, and `DeadlinePassed` between pages once `deadline` passed."""
    out: list[dict[str, Any]] = []
    cont = ""
    while True:
        if deadline is not None:
            deadline.check()
        page = client.list_page(kind.path, page_size, cont)
        for item in page.get("items") or []:
            if isinstance(item, dict):
                obj = keep(kept(kind, item))
                if obj is not None:
                    out.append(obj)
        cont = str((page.get("metadata") or {}).get("continue") or "")
        if not cont:
            return out


def _part(obj: dict[str, Any], name: str) -> dict[str, Any]:
    value = obj.get(name)
    return value if isinstance(value, dict) else {}


def pod_summary(pod: dict[str, Any]) -> dict[str, Any]:
    """What a report says of a Pod other than the one asked about: its name, node and phase."""
    meta, spec, status = _part(pod, "metadata"), _part(pod, "spec"), _part(pod, "status")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid") if k in meta},
        "spec": {"nodeName": spec["nodeName"]} if "nodeName" in spec else {},
        "status": {"phase": status["phase"]} if "phase" in status else {},
    }


def list_cluster(
    client: KubeClient,
    kinds: Iterable[WatchedKind],
    pod: tuple[str, str],
    page_size: int = PAGE_SIZE,
    deadline: Deadline | None = None,
) -> Listing:
    """The objects of `kinds` and the Pods (`pod`, namespace and name, kept whole)."""
    out = Listing()
    for kind in kinds:
        try:
            out.objects += list_kind(client, kind, lambda o: o, page_size, deadline)
        except ApiError as e:
            if e.status != 404:
                raise
            out.not_served.append(kind.kind)

    def keep(obj: dict[str, Any]) -> dict[str, Any]:
        meta = _part(obj, "metadata")
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if key == pod:
            out.pod = obj
        short = pod_summary(obj)
        out.pods[key] = short
        return short

    list_kind(client, POD, keep, page_size, deadline)
    return out


def list_for_audit(
    client: KubeClient,
    kinds: Iterable[WatchedKind],
    policies: WatchedKind | None = None,
    page_size: int = PAGE_SIZE,
    deadline: Deadline | None = None,
) -> tuple[Listing, list[dict[str, Any]]]:
    """The objects of `kinds`, the Pods (kept whole while no node is bound to them: the Pods an audit
    explains; the others in short), and the objects of `policies` (the cluster's DraguardPolicies; a
    kind the API server does not serve lists as none)."""
    out = Listing()
    for kind in kinds:
        try:
            out.objects += list_kind(client, kind, lambda o: o, page_size, deadline)
        except ApiError as e:
            if e.status != 404:
                raise
            out.not_served.append(kind.kind)

    def keep(obj: dict[str, Any]) -> dict[str, Any] | None:
        meta = _part(obj, "metadata")
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        short = pod_summary(obj)
        out.pods[key] = short
        return None if _part(obj, "spec").get("nodeName") else obj

    out.objects += list_kind(client, POD, keep, page_size, deadline)
    found: list[dict[str, Any]] = []
    if policies is not None:
        try:
            found = list_kind(client, policies, lambda o: o, page_size, deadline)
        except ApiError as e:
            if e.status != 404:
                raise
            out.not_served.append(policies.kind)
    return out, found
