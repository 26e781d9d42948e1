"""Workloads expanded into the Pods their controllers create, and the report per workload.

- Deployment: `replicas` (default 1) Pods of its ReplicaSet `<deployment>-<pod-template-hash>`, named
  `<replicaset>-xxxxx`; ReplicaSet and ReplicationController: `<name>-xxxxx`; StatefulSet: `<name>-<ordinal>`
  from `spec.ordinals.start` (default 0); DaemonSet: one Pod per eligible node (webhook.simulate.daemonset);
  Job: `min(parallelism, completions)` Pods at once (parallelism default 1; no completions: parallelism),
  none while suspended, Indexed ones named `<job>-<index>-xxxxx`; CronJob: the Pods of one Job,
  `<cronjob>-<minutes>`; PodTemplate: none (no controller runs it).
- Random parts of names (`xxxxx`, the pod-template-hash, the CronJob's scheduled minute) are derived from
  stable data, so a simulation is reproducible; they are stand-ins for what the controllers pick.

Replicas of one workload (other than a DaemonSet's) are the same Pod under other names: once one of them
leaves the cluster state unchanged (it failed, or it needed no new allocation), every later one would get
the same answer, so the rest are reported with it instead of being tried one by one."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webhook.model import names
from webhook.model.plain import as_dict, deep_copy, json_dumps
from webhook.model.workloads import get_path, template_keys, template_prefix
from webhook.simulate.daemonset import daemon_nodes, pin_to_node
from webhook.simulate.podclaims import RANDOM_ALPHABET, generated_name, key_of

MAX_GENERATED_BASE = 58  # names.MaxGeneratedNameLength: 63 - 5 random characters

CONTROLLER = {  # workload kind -> the kind of the Pods' controller (Deployment: its ReplicaSet)
    "Deployment": ("apps/v1", "ReplicaSet"),
    "ReplicaSet": ("apps/v1", "ReplicaSet"),
    "StatefulSet": ("apps/v1", "StatefulSet"),
    "DaemonSet": ("apps/v1", "DaemonSet"),
    "Job": ("batch/v1", "Job"),
    "CronJob": ("batch/v1", "Job"),
    "ReplicationController": ("v1", "ReplicationController"),
}


def _count(v: Any, default: int) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else default


def slice_nodes(objs: list[dict[str, Any]]) -> list[str]:
    """The node names node-local ResourceSlices use (the nodes of a cluster without Node objects)."""
    out = set()
    for o in objs:
        spec = o.get("spec")
        if o.get("kind") == "ResourceSlice" and isinstance(spec, dict):
            name = spec.get("nodeName")
            if isinstance(name, str) and name:
                out.add(name)
    return sorted(out)


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x00".join(parts).encode()).digest()


def safe_encode(text: str) -> str:
    """apimachinery's rand.SafeEncodeString: each character mapped into the alphabet without vowels."""
    return "".join(RANDOM_ALPHABET[ord(c) % len(RANDOM_ALPHABET)] for c in text)


def template_hash(template: Any) -> str:
    """A stand-in for the Deployment controller's pod-template-hash (upstream hashes Go's in-memory form
    of the template, which cannot be reproduced here): the same encoding of a 32-bit hash of its JSON."""
    text = json_dumps(template, sort_keys=True, separators=(",", ":"), default=str)
    return safe_encode(str(int.from_bytes(_digest(text)[:4], "big")))


def pods_prefix(controller: str) -> str:
    """getPodsPrefix: `<controller>-`, or the bare name when that is not a valid generateName (a DNS
    subdomain once apimachinery masks the trailing dash)."""
    prefix = f"{controller}-"
    masked = prefix[:-2] + "a" if len(prefix) > 1 else prefix
    return prefix if not names.dns_subdomain(masked) else controller


def indexed_prefix(job: str, index: int) -> str:
    """The Job controller's podGenerateNameWithIndex: `<job>-<index>-`, the job name cut to fit."""
    tail = f"-{index}-"
    base = job + tail
    if len(base) > MAX_GENERATED_BASE:
        base = base[: MAX_GENERATED_BASE - len(tail)] + tail
    return base


def cron_job_name(namespace: str, cronjob: str) -> str:
    """`<cronjob>-<scheduled time in minutes>`; the minute is a stand-in derived from the CronJob's name
    (upstream: the time of the run), so that output does not depend on the clock."""
    minutes = 20_000_000 + int.from_bytes(_digest("cronjob", namespace, cronjob)[:4], "big") % 10_000_000
    return f"{cronjob}-{minutes}"


@dataclass
class Expansion:
    """What a workload's controller creates now: `count` Pods, made by `pod(i)`."""

    kind: str
    namespace: str
    name: str
    prefix: str  # the template's field path in the workload (`spec.template`)
    count: int
    how: str  # how the count was decided, in the user's terms
    interchangeable: bool = True  # the Pods differ only in their names (not a DaemonSet)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # DaemonSet: (node, why no Pod there)
    nodes: list[str] = field(default_factory=list)  # DaemonSet: the node of Pod i
    template: dict[str, Any] = field(default_factory=dict)
    owner: tuple[str, str, str] = ("", "", "")  # (apiVersion, kind, name) of the Pods' controller
    base: str = ""  # the controller's name the Pods are named after (ReplicaSet, Job)
    indexed: bool = False
    ordinal_start: int = 0

    def pod(self, i: int) -> dict[str, Any]:
        """Pod number `i` (0-based) as the controller would create it."""
        if self.kind == "StatefulSet":
            name, generate = f"{self.base}-{self.ordinal_start + i}", None
        else:
            if self.indexed:
                generate = indexed_prefix(self.base, i)
            else:
                generate = pods_prefix(self.base)
            seed = f"{self.kind}/{self.namespace}/{self.name}/{self.nodes[i] if self.nodes else i}"
            name = generated_name(generate, seed)
        tmeta = as_dict(self.template.get("metadata"))
        meta: dict[str, Any] = {"name": name, "namespace": self.namespace}
        if generate is not None:
            meta["generateName"] = generate[:MAX_GENERATED_BASE]
        for part in ("labels", "annotations"):
            if isinstance(tmeta.get(part), dict):
                meta[part] = dict(tmeta[part])
        if self.indexed:
            meta.setdefault("annotations", {})["batch.kubernetes.io/job-completion-index"] = str(i)
        api, kind, owner = self.owner
        meta["ownerReferences"] = [
            {"apiVersion": api, "kind": kind, "name": owner, "controller": True, "blockOwnerDeletion": True}
        ]
        spec = as_dict(self.template.get("spec"))
        spec = pin_to_node(spec, self.nodes[i]) if self.kind == "DaemonSet" else deep_copy(spec)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _job(exp: Expansion, spec: dict[str, Any], where: str) -> None:
    """The Job controller's active Pods: min(parallelism, completions) (no completions: parallelism)."""
    if spec.get("suspend") is True:
        exp.count, exp.how = 0, f"{where}suspend: true: no Pods"
        return
    parallelism = _count(spec.get("parallelism"), 1)
    completions = spec.get("completions")
    exp.indexed = spec.get("completionMode") == "Indexed"
    if isinstance(completions, int) and not isinstance(completions, bool) and completions >= 0:
        exp.count = min(parallelism, completions)
        exp.how = f"{where}parallelism {parallelism}, completions {completions}: {exp.count} Pod(s) at once"
    else:
        exp.count = parallelism
        exp.how = f"{where}parallelism {parallelism} (no completions): {exp.count} Pod(s) at once"


def expand(obj: dict[str, Any], nodes: list[dict[str, Any]], slice_nodes: list[str]) -> Expansion:
    """The Pods a (valid, stored) workload's controller creates on a cluster with `nodes` (Node objects;
    without any, the node names `slice_nodes` the ResourceSlices use stand for the nodes)."""
    kind = str(obj.get("kind"))
    keys = template_keys(obj.get("apiVersion"), kind) or ("spec", "template")
    namespace, name = key_of(obj)
    template = as_dict(get_path(obj, keys))
    spec = as_dict(obj.get("spec"))
    exp = Expansion(kind, namespace, name, template_prefix(keys), 0, "", template=template)
    controller = CONTROLLER.get(kind)
    if controller is None:
        exp.how = "a PodTemplate is not run by any controller: its template is checked, no Pod is simulated"
        return exp
    exp.owner, exp.base = (*controller, name), name
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"):
        replicas = spec.get("replicas")
        exp.count = _count(replicas, 1)
        exp.how = f"spec.replicas {exp.count}" if replicas is not None else "spec.replicas unset: 1"
        if kind == "Deployment":
            exp.base = f"{name}-{template_hash(template)}"
            exp.owner = (*controller, exp.base)
        if kind == "StatefulSet":
            exp.ordinal_start = _count(as_dict(spec.get("ordinals")).get("start"), 0)
    elif kind == "DaemonSet":
        found = daemon_nodes(as_dict(template.get("spec")), nodes, slice_nodes)
        exp.interchangeable = False
        exp.nodes, exp.skipped, exp.count = found.eligible, found.skipped, len(found.eligible)
        total = len(found.eligible) + len(found.skipped)
        if not total:
            exp.how = "one Pod per node, and the input has no Node objects and no node-local ResourceSlices"
        elif found.known:
            exp.how = f"one Pod per eligible node: {exp.count} of {total} Node(s)"
        else:
            exp.how = (
                f"one Pod per node: the input has no Node objects, so the {total} node(s) its ResourceSlices "
                "name stand for them (labels and taints unknown)"
            )
    elif kind == "Job":
        _job(exp, spec, "")
    elif kind == "CronJob":
        job_spec = as_dict(get_path(spec, ("jobTemplate", "spec")))
        exp.base = cron_job_name(namespace, name)
        exp.owner = (*controller, exp.base)
        if spec.get("suspend") is True:
            exp.how = "spec.suspend: true: no Job is started"
        else:
            _job(exp, job_spec, f"one Job ({exp.base}): ")
    return exp


@dataclass
class WorkloadReport:
    """The answer for one workload: its Pods' simulations, and the replicas answered like the last one."""

    source: str
    line: int
    expansion: Expansion
    sims: list[Any] = field(default_factory=list)  # PodSimulation, in creation order
    same_as_last: int = 0  # replicas after the last simulated one that share its answer
    rest_reason: str = ""
    start: int = 0  # position of its first Pod among the run's Pod simulations

    def counts(self) -> dict[str, int]:
        out = {"feasible": 0, "infeasible": 0, "undecided": 0}
        for i, sim in enumerate(self.sims):
            n = 1 + (self.same_as_last if i == len(self.sims) - 1 else 0)  # the rest share the last answer
            out[
                "feasible" if sim.feasible is True else "infeasible" if sim.feasible is False else "undecided"
            ] += n
        return out

    def label(self) -> str:
        e = self.expansion
        return f"{e.kind} {e.namespace}/{e.name}"

    def ref(self) -> dict[str, str]:
        e = self.expansion
        return {"kind": e.kind, "namespace": e.namespace, "name": e.name}

    def to_dict(self) -> dict[str, Any]:
        e = self.expansion
        out: dict[str, Any] = {
            **self.ref(),
            "source": self.source,
            "line": self.line,
            "pods": e.count,
            "how": e.how,
            **self.counts(),
            "simulated": [s.pod for s in self.sims],
            "sameAsLast": self.same_as_last,
        }
        if e.kind == "DaemonSet":
            out["nodes"] = list(e.nodes)
            out["skippedNodes"] = [{"node": n, "reason": why} for n, why in e.skipped]
        return out


def run_workload(
    report: WorkloadReport,
    try_pod: Callable[[dict[str, Any]], Any],
    commits: Callable[[], int],
) -> None:
    """Simulate the workload's Pods one after another (`try_pod(pod)` -> PodSimulation; `commits()`
    counts the allocations added to the state so far). Interchangeable replicas stop being tried once
    one leaves the state unchanged: the rest share its answer (see the module docstring)."""
    e = report.expansion
    for i in range(e.count):
        before = commits()
        sim = try_pod(e.pod(i))
        report.sims.append(sim)
        if e.interchangeable and i + 1 < e.count and commits() == before:
            report.same_as_last = e.count - i - 1
            what = "feasible" if sim.feasible else "infeasible" if sim.feasible is False else "undecided"
            report.rest_reason = (
                f"{report.same_as_last} more Pod(s) like the last one: {what} (the same Pod under another "
                "name, and the cluster did not change since)"
            )
            return
