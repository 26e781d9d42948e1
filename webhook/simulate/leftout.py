"""Which input objects a simulation leaves out, and why: only those the API server would reject (errors of
object rules that mirror its validation, decoding and input errors) and the second and later definitions
of a name. Errors the API server does not make (cross-object findings such as a pool with a duplicate
device — the scheduler handles those itself — or a lint raised to an error by a policy) never change
what is simulated. A name defined twice is one object when the copies are identical; with different
content `input.duplicate-object` names what differs (see `report_duplicates`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webhook.config.policy import Policy
from webhook.model.catalogue import RULES
from webhook.model.plain import deep_equal
from webhook.model.report import ObjectResult, Report
from webhook.model.violation import Severity, Violation

DUPLICATE = "input.duplicate-object"
REJECTING_TAGS = ("api", "schema", "input", "skew")
CLUSTER_SCOPED = ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "Node", "Namespace")
LISTED = 3  # other definitions a duplicate finding names


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
    obj: dict[str, Any] | None = None  # as stored (None: not comparable, e.g. it could not be decoded)
    valid: bool = True  # False: left out for its own errors (never the definition that is used)


@dataclass
class Duplicates:
    """Positions (in the definitions) of later definitions of a name: `different` ones are left out of
    the simulation and reported; `same` ones (identical content) are the same object again: dropped
    without a finding."""

    different: set[int] = field(default_factory=set)
    same: set[int] = field(default_factory=set)


# Metadata the API server sets or a client adds on apply: two copies that differ only there are one object
_VOLATILE_META = ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink")
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
DIFFS_SHOWN = 3


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without what the API server sets or `kubectl apply` records (resourceVersion, uid,
    managedFields, the last-applied annotation, ...): what makes two definitions the same object."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    meta = {k: v for k, v in meta.items() if k not in _VOLATILE_META}
    notes = meta.get("annotations")
    if isinstance(notes, dict) and _LAST_APPLIED in notes:
        notes = {k: v for k, v in notes.items() if k != _LAST_APPLIED}
        if notes:
            meta["annotations"] = notes
        else:
            del meta["annotations"]
    return {**obj, "metadata": meta}


def differences(a: Any, b: Any, limit: int = DIFFS_SHOWN) -> tuple[list[str], int]:
    """The first `limit` field paths where `a` and `b` differ (`spec.selectors[0].cel.expression`), and
    how many there are in all (lists of different lengths differ at the list itself)."""
    found: list[str] = []
    count = 0
    stack: list[tuple[Any, Any, str]] = [(a, b, "")]  # explicit: objects may nest 10,000 levels
    while stack:
        x, y, path = stack.pop()
        if x is y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            keys = list(x) + [k for k in y if k not in x]
            stack.extend(
                (x.get(k, _ABSENT), y.get(k, _ABSENT), f"{path}.{k}" if path else str(k))
                for k in reversed(keys)
            )
            continue
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            stack.extend(
                (u, v, f"{path}[{i}]") for i, (u, v) in reversed(list(enumerate(zip(x, y, strict=True))))
            )
            continue
        if not isinstance(x, dict | list) and not isinstance(y, dict | list) and x == y:
            continue  # equal scalars
        count += 1
        if len(found) < limit:
            found.append(path or "<object>")
    return found, count


_ABSENT = object()


def _differs(defs: list[Definition], i: int, j: int) -> str:
    a, b = defs[i].obj, defs[j].obj
    if a is None or b is None:
        return "content differs"
    paths, count = differences(comparable(a), comparable(b))
    more = f" and {count - len(paths)} more" if count > len(paths) else ""
    return f"{', '.join(paths)}{more} {'differ' if count > 1 else 'differs'}"


def _same(defs: list[Definition], i: int, j: int) -> bool:
    a, b = defs[i].obj, defs[j].obj
    return a is not None and b is not None and deep_equal(comparable(a), comparable(b))


def report_duplicates(
    defs: list[Definition], report: Report, policy: Policy | None, strict: bool = True
) -> Duplicates:
    """Sort the definitions of every name defined more than once. The first valid one is the object
    (one that is left out for its own errors never is); a later one with the same content (after
    defaulting, `comparable`) is that object again: no finding. One with different content gets
    `input.duplicate-object` naming the differing fields, and so does the one used, naming the others'
    file:line: an error when `strict` (`simulate`, `validate --feasibility`: the input is one cluster)
    or within one file; across files of a plain `validate` a warning (a kustomize base and its
    overlays define one name in several directories, on purpose). A Node gets a result of its own in
    `report` when it is reported."""
    by_key: dict[tuple[str, str, str, str], list[int]] = {}
    for i, d in enumerate(defs):
        by_key.setdefault(d.key, []).append(i)
    out = Duplicates()
    for key, where in by_key.items():
        valid = [i for i in where if defs[i].valid]
        if len(where) < 2 or not valid:
            continue
        used = valid[0]
        different = []
        for i in valid[1:]:
            if _same(defs, i, used):
                out.same.add(i)
            else:
                out.different.add(i)
                different.append(i)
        if not different:
            continue
        _, kind, ns, name = key
        label = f"{kind} {ns + '/' if ns else ''}{name}"
        if not strict and kind in ("Node", "Namespace"):
            continue  # not validated by `validate`: their copies are the cluster's business
        first = defs[used]
        for i in different:
            d = defs[i]
            message = (
                f"{label} is defined again with different content ({_differs(defs, used, i)}; first at "
                f"{first.source}:{first.line}): a cluster holds one object of a name (kubectl apply keeps the "
                "last, kubectl create rejects the later ones); the first is used and this one is left out"
            )
            _add(d, kind, name, _finding(message, strict or d.source == first.source), report, policy)
        shown = [f"{defs[j].source}:{defs[j].line}" for j in different]
        listed = ", ".join(shown[:LISTED]) + (
            f" and {len(shown) - LISTED} more" if len(shown) > LISTED else ""
        )
        message = (
            f"{label} is defined again with different content at {listed} "
            f"({_differs(defs, used, different[0])}): a cluster holds one object of a name; this "
            "definition is used and the later ones are left out"
        )
        same_file = any(defs[j].source == first.source for j in different)
        _add(first, kind, name, _finding(message, strict or same_file), report, policy)
    return out


def _finding(message: str, error: bool) -> Violation:
    return Violation(DUPLICATE, Severity.ERROR if error else Severity.WARNING, "metadata.name", message)


def _add(d: Definition, kind: str, name: str, v: Violation, report: Report, policy: Policy | None) -> None:
    kept = policy.apply([v]) if policy else [v]
    if not kept:
        return
    result = d.result
    if result is None:
        result = ObjectResult(d.source, d.line, "v1", kind, None, name)
        report.objects.append(result)
        d.result = result
    result.violations.extend(kept)
