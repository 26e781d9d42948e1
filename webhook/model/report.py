"""Validation results per object and for a whole run, in the JSON shape later tools depend on:
`{"objects": [{"source", "line", "apiVersion", "kind", "namespace", "name", "violations": [...]}],
"summary": {"objects", "errors", "warnings", "skipped"}}` (and `"notChecked"` when a deadline left objects
or rests of files unvalidated; `"notObjects"`, `"excluded"`, `"suppressed"` when there are any,
`"cluster"` / `"context"` with `--cluster` / `--context`). An object whose `draguard.io/ignore` annotation
silenced findings (offline, `webhook.validate.ignores`) lists them in `"suppressed"`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webhook.model.violation import Severity, Violation


@dataclass(frozen=True)
class Suppression:
    """What an object's `draguard.io/ignore` / `draguard.io/ignore-all` annotations silence (offline)."""

    rules: frozenset[str] = frozenset()  # rule ids listed in draguard.io/ignore
    everything: bool = False  # draguard.io/ignore-all
    justification: str = ""  # the annotations as written, for SARIF's `suppressions`


@dataclass
class ObjectResult:
    source: str
    line: int
    api_version: str | None
    kind: str | None
    namespace: str | None
    name: str | None
    violations: list[Violation] = field(default_factory=list)
    root_line: int = 0  # where its document starts (a List's first node for an item); 0 = `line`
    prefix: str = ""  # its path in that document ("items[3]." for an item of a List)
    suppression: Suppression | None = None  # its ignore annotations, if any
    suppressed: list[Violation] = field(default_factory=list)  # findings they silenced (offline)
    unread: bool = False  # a whole file the deadline left unread (its first violation says so)

    @property
    def errors(self) -> int:
        return sum(1 for v in self.violations if v.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for v in self.violations if v.severity is Severity.WARNING)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "line": self.line,
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "violations": [v.to_dict() for v in self.violations],
            **({"suppressed": [v.to_dict() for v in self.suppressed]} if self.suppressed else {}),
        }


@dataclass
class Report:
    objects: list[ObjectResult] = field(default_factory=list)
    skipped: int = 0  # documents of kinds draguard does not check (or skipped with --skip)
    not_checked: int = 0  # objects or rests of files the run's deadline left unvalidated
    cluster: int = 0  # objects of `--cluster` (context for the input, not reported unless they have errors)
    not_objects: int = 0  # documents that are not Kubernetes objects (counted in `skipped` too)
    not_object_files: int = 0  # files holding them
    first_not_object: str = ""  # "file:line" of the first
    excluded: int = 0  # paths left out by --exclude (a directory counts once), never read
    # objects of `--context` not shown (no finding the input causes: webhook.offline.repocontext)
    context: int = 0

    @property
    def complete(self) -> bool:
        """Whether every input was checked (the deadline, if any, did not cut the run short)."""
        return not self.not_checked

    @property
    def errors(self) -> int:
        return sum(o.errors for o in self.objects)

    @property
    def warnings(self) -> int:
        return sum(o.warnings for o in self.objects)

    @property
    def infos(self) -> int:
        return sum(1 for o in self.objects for v in o.violations if v.severity is Severity.INFO)

    def summary(self) -> dict[str, int]:
        out = {
            "objects": len(self.objects),
            "errors": self.errors,
            "warnings": self.warnings,
            "info": self.infos,
            "skipped": self.skipped,
        }
        if self.not_checked:  # only when the deadline cut the run short
            out["notChecked"] = self.not_checked
        if self.cluster:  # only with --cluster
            out["cluster"] = self.cluster
        if self.not_objects:
            out["notObjects"] = self.not_objects
        if self.excluded:
            out["excluded"] = self.excluded
        suppressed = sum(len(o.suppressed) for o in self.objects)
        if suppressed:
            out["suppressed"] = suppressed
        if self.context:  # only with --context
            out["context"] = self.context
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"objects": [o.to_dict() for o in self.objects], "summary": self.summary()}


UNREAD_NAMED = 3  # files named on the text line that sums up the files the deadline left unread


def unread_line(unread: list[ObjectResult], deadline_seconds: float | None = None) -> str:
    """One text line for the files the deadline left unread (not one line each: a deadline that passes
    early leaves thousands), naming the first few; `-o json` lists every one."""
    first = unread[0]
    severity = first.violations[0].severity.value if first.violations else "warning"
    names = ", ".join(o.source for o in unread[:UNREAD_NAMED])
    more = len(unread) - UNREAD_NAMED
    flag = f" (--deadline-seconds {deadline_seconds:g})" if deadline_seconds is not None else ""
    return (
        f"{first.source}:{first.line}: {severity} input.not-checked: {len(unread)} files not read before "
        f"the deadline{flag}: {names}{f' and {more} more' if more > 0 else ''} (-o json lists each)"
    )
