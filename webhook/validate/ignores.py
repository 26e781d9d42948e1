"""`draguard.io/ignore` annotations: an object silences draguard's rules on itself, in offline runs only.

    metadata:
      annotations:
        draguard.io/ignore: "meta.namespace-missing,claim.selector-lint"  # these rules (comma-separated)
        draguard.io/ignore-all: "vendored manifest, checked upstream"     # every rule; the value says why

Modelled on kube-score's `kube-score/ignore` (a comma-separated list of checks) and kube-linter's
`kube-linter.io/ignore-all`. The findings are still made: `suppress` moves them from `violations` to
`suppressed`, so they are not shown in text and are not errors for the exit code, while JSON lists them
(`"suppressed"`) and SARIF keeps them with `suppressions: [{"kind": "inSource"}]`. `ignore-all` never
silences `internal.*` (draguard failing: a bug to report) nor `input.not-checked` (what the deadline left
unvalidated is not known to be fine). A rule id draguard does not have gets a warning on the annotation
(`warn_unknown`): a typo would otherwise silence nothing, silently.

The admission webhook never honours them: it answers as the API server would, and an annotation on the
object under review that waived its errors would let anyone who can write that object waive them.
`webhook.admission` does not call `suppress`; `check_body` (a request body) does not either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webhook.config.policy import Policy
from webhook.model.catalogue import RULES
from webhook.model.report import ObjectResult, Report, Suppression
from webhook.model.text import clip
from webhook.model.violation import Violation

IGNORE = "draguard.io/ignore"
IGNORE_ALL = "draguard.io/ignore-all"
UNKNOWN_RULE = "input.ignore-annotation"
UNKNOWN_FIELD = f"metadata.annotations[{IGNORE}]"
JUSTIFICATION_CHARS = 200  # of each annotation's value, in SARIF's justification


def suppression_of(meta: Mapping[str, Any]) -> Suppression | None:
    """The ignore annotations of an object's `metadata`, or None when it has neither (or they are not
    strings: the schema reports that)."""
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        return None
    listed, everything = annotations.get(IGNORE), annotations.get(IGNORE_ALL)
    if not isinstance(listed, str) and not isinstance(everything, str):
        return None
    rules = (
        frozenset(r.strip() for r in listed.split(",") if r.strip())
        if isinstance(listed, str)
        else frozenset()
    )
    written = [(k, v) for k, v in ((IGNORE, listed), (IGNORE_ALL, everything)) if isinstance(v, str)]
    justification = "; ".join(f"{k}: {clip(v, JUSTIFICATION_CHARS)}" for k, v in written)
    return Suppression(rules, isinstance(everything, str), justification)


def silenced(s: Suppression, rule: str) -> bool:
    """Whether `s` silences findings of `rule`."""
    if rule in s.rules:
        return True
    return (
        s.everything and not rule.startswith("internal.") and rule not in ("input.not-checked", UNKNOWN_RULE)
    )


def suppress(report: Report) -> None:
    """Move every finding an object's annotations silence to its `suppressed` list (again after findings
    are added: what was moved stays moved)."""
    for o in report.objects:
        s = o.suppression
        if s is None or not o.violations:
            continue
        kept: list[Violation] = []
        for v in o.violations:
            (o.suppressed if silenced(s, v.rule) else kept).append(v)
        o.violations = kept


def unknown_rules(o: ObjectResult) -> list[str]:
    """The rule ids of `o`'s `draguard.io/ignore` that the catalogue does not have."""
    if o.suppression is None:
        return []
    return sorted(r for r in o.suppression.rules if r not in RULES)


def warn_unknown(report: Report, policy: Policy | None = None) -> list[ObjectResult]:
    """Add a warning for the unknown rule ids of each object's `draguard.io/ignore` (once), and return
    the objects that got one."""
    changed = []
    for o in report.objects:
        unknown = unknown_rules(o)
        if not unknown or any(v.rule == UNKNOWN_RULE for v in [*o.violations, *o.suppressed]):
            continue
        ids = ", ".join(clip(r) for r in unknown)
        many = len(unknown) > 1
        message = (
            f"draguard has no rule{'s' if many else ''} {ids}: this annotation silences nothing for "
            f"{'them' if many else 'it'} (`draguard rules` lists the rule ids)"
        )
        found = [Violation(UNKNOWN_RULE, RULES[UNKNOWN_RULE].severity, UNKNOWN_FIELD, message)]
        found = policy.apply(found) if policy else found
        if found:
            o.violations.extend(found)
            changed.append(o)
    return changed
