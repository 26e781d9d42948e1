"""What an audit finds: one result per (resource, rule), with the PolicyReport vocabulary (result,
severity, category), and the run's totals."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from webhook.model.catalogue import RULES
from webhook.model.violation import Severity

ResultKind = Literal["pass", "fail", "warn", "error", "skip"]
ReportSeverity = Literal["critical", "high", "medium", "low", "info"]
RESULT_KINDS: tuple[ResultKind, ...] = ("pass", "fail", "warn", "error", "skip")
MAX_PENDING_PODS = 200  # Pods pending on DRA one audit explains (the rest: skipped, the audit incomplete)
SOURCE = "draguard"
BUILT_IN = "draguard"  # the policy of the rules no DraguardPolicy re-grades
PASS_RULE = "draguard.rules"  # a resource with no finding: one pass for every rule that ran
SEVERITY: dict[Severity, ReportSeverity] = {
    Severity.ERROR: "high",
    Severity.WARNING: "medium",
    Severity.INFO: "info",
}
CATEGORY = {
    "api": "API validation",
    "alloc": "Allocation",
    "xobj": "Cross-object",
    "lint": "Lint",
    "schema": "Schema",
    "skew": "Version skew",
    "input": "Input",
}
SCHEDULING = "Scheduling"


class ResourceRef(TypedDict, total=False):
    """An audited resource as a PolicyReport names it (ObjectReference's fields)."""

    apiVersion: str
    kind: str
    name: str
    namespace: str
    uid: str


@dataclass(frozen=True)
class AuditResult:
    resource: ResourceRef
    rule: str  # a rule id of the catalogue (PASS_RULE for a clean resource)
    result: ResultKind
    severity: ReportSeverity
    message: str
    field: str = ""  # the apiserver-style path the finding is about ("" : the whole object)
    policy: str = BUILT_IN  # the DraguardPolicy that set the rule's grade, else BUILT_IN
    existing: bool = False  # an error an UPDATE would let stand (ratcheted): reported as warn

    @property
    def category(self) -> str:
        rule = RULES.get(self.rule)
        if self.rule.startswith("feasibility."):
            return SCHEDULING
        if self.rule == PASS_RULE:
            return "Validation"
        return CATEGORY.get(rule.tag, "Other") if rule is not None else "Other"

    @property
    def namespace(self) -> str:
        return self.resource.get("namespace", "")

    def to_dict(self) -> dict[str, object]:
        return {
            "resource": dict(self.resource),
            "policy": self.policy,
            "rule": self.rule,
            "result": self.result,
            "severity": self.severity,
            "category": self.category,
            "field": self.field,
            "message": self.message,
            "existingViolation": self.existing,
        }


@dataclass
class AuditReport:
    results: list[AuditResult] = field(default_factory=list)
    resources: int = 0  # resources audited
    pending_pods: int = 0  # Pods pending on DRA grounds found
    explained: int = 0  # of them explained (the rest: skipped by --max-pending-pods or the deadline)
    incomplete: str = ""  # why the audit stopped short ("" : it did not)
    policies: tuple[str, ...] = ()  # the DraguardPolicies in force
    invalid_policies: list[str] = field(default_factory=list)  # "name: why" of the cluster's invalid ones

    def counts(self) -> dict[ResultKind, int]:
        got = Counter(r.result for r in self.results)
        return {k: got.get(k, 0) for k in RESULT_KINDS}

    @property
    def exit_code(self) -> int:
        """0 nothing failed, 1 something failed, 3 nothing failed but the audit is incomplete."""
        if any(r.result == "fail" for r in self.results):
            return 1
        return 3 if self.incomplete else 0

    def to_dict(self) -> dict[str, object]:
        return {
            "summary": self.counts(),
            "resources": self.resources,
            "pendingPods": self.pending_pods,
            "explained": self.explained,
            "incomplete": self.incomplete or None,
            "policies": list(self.policies),
            "invalidPolicies": list(self.invalid_policies),
            "results": [r.to_dict() for r in self.results],
        }
