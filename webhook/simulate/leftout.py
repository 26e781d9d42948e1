"""Which input objects a simulation leaves out, and why: only those the API server would reject (errors of
object rules that mirror its validation, decoding and input errors) and the second and later definitions
of a name. Errors the API server does not make (cross-object findings such as a pool with a duplicate
device — the scheduler handles those itself — or a lint raised to an error by a policy) never change
what is simulated. `input.duplicate-object` reports every definition of a name defined twice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webhook.model.violation import Severity, Violation
from webhook.policy import Policy
from webhook.report import ObjectResult, Report
from webhook.rules.registry import RULES, declare

DUPLICATE = "input.duplicate-object"
REJECTING_TAGS = ("api", "schema", "input", "skew")
CLUSTER_SCOPED = ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "Node", "Namespace")
LISTED = 3  # other definitions a duplicate finding names

declare(
    DUPLICATE,
    summary="`simulate` / `validate --feasibility`: the input defines the same kind, namespace and name "
    "more than once (one cluster holds one such object); every definition names the others' file:line, the "
    "first one is simulated and the later ones are left out",
    field="metadata.name",
    tag="input",
)


def rejection(result: ObjectResult | None) -> list[Violation]:
    """The violations the API server would reject the object for (by the rule's own severity: a policy
    that re-grades or silences a finding changes the report, not the cluster)."""
    if result is None:
        return []
    out = []
    for v in result.violations:
        rule = RULES.get(v.rule)
        if rule is None or v.rule == DUPLICATE:
            continue
        if v.rule == "internal.rule-crash" or (
            rule.scope == "object" and rule.tag in REJECTING_TAGS and rule.severity is Severity.ERROR
        ):
            out.append(v)
    return out


def why(source: str, line: int, violations: list[Violation]) -> str:
    """`file:line: rule: field: message (and N more)` for the first of `violations`."""
    first = violations[0]
    more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
    where = f"{first.field}: " if first.field else ""
    return f"{source}:{line}: {first.rule}: {where}{first.message}{more}"


@dataclass
class LeftOut:
    """An object the simulation does not use, and why (`file:line: rule: ...`)."""

    kind: str
    namespace: str | None  # None for cluster-scoped kinds
    name: str
    source: str
    line: int
    why: str
    obj: dict[str, Any] | None  # as stored when it could be decoded (else None)
    result: ObjectResult | None
    raw: dict[str, Any] | None = None  # the document as written, when it could not be decoded

    def label(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f'{self.kind} "{ns}{self.name}"'


def identity(api_version: Any, kind: Any, obj: Any, namespace: str) -> tuple[str, str, str, str] | None:
    """(API group, kind, namespace or "", name) of an object with a metadata.name; None without one."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name or not isinstance(kind, str):
        return None
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    return group, kind, "" if kind in CLUSTER_SCOPED else namespace, name


@dataclass
class Definition:
    source: str
    line: int
    key: tuple[str, str, str, str]
    result: ObjectResult | None  # None for Nodes (not validated)


def report_duplicates(defs: list[Definition], report: Report, policy: Policy | None) -> set[int]:
    """Add `input.duplicate-object` to every definition of a name defined more than once (a Node gets a
    result of its own in `report`), and return the positions (in `defs`) of the later definitions."""
    by_key: dict[tuple[str, str, str, str], list[int]] = {}
    for i, d in enumerate(defs):
        by_key.setdefault(d.key, []).append(i)
    later: set[int] = set()
    for key, where in by_key.items():
        if len(where) < 2:
            continue
        later.update(where[1:])
        _, kind, ns, name = key
        label = f"{kind} {ns + '/' if ns else ''}{name}"
        first = defs[where[0]]
        for i in where:
            d = defs[i]
            others = [f"{defs[j].source}:{defs[j].line}" for j in where if j != i]
            shown = ", ".join(others[:LISTED]) + (
                f" and {len(others) - LISTED} more" if len(others) > LISTED else ""
            )
            used = (
                "this definition is simulated, the later ones are left out"
                if i == where[0]
                else f"the first, at {first.source}:{first.line}, is simulated and this one is left out"
            )
            message = (
                f"{label} is defined {len(where)} times in the input (also at {shown}): a cluster holds one "
                f"object of a name (kubectl apply keeps the last, kubectl create rejects the later ones); {used}"
            )
            v = Violation(DUPLICATE, RULES[DUPLICATE].severity, "metadata.name", message)
            kept = policy.apply([v]) if policy else [v]
            if not kept:
                continue
            result = d.result
            if result is None:
                result = ObjectResult(d.source, d.line, "v1", kind, None, name)
                report.objects.append(result)
                d.result = result
            result.violations.extend(kept)
    return later
