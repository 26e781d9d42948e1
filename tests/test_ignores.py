"""`draguard.io/ignore` annotations (webhook.validate.ignores, issue 15 §3): what they silence, offline only."""

from __future__ import annotations

from webhook.config.context import Context
from webhook.model.report import ObjectResult, Report, Suppression
from webhook.model.violation import Severity, Violation
from webhook.validate import check_file_text
from webhook.validate.ignores import UNKNOWN_RULE, silenced, suppress, suppression_of, warn_unknown

BAD_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: Bad_Name
  annotations:
    draguard.io/ignore: " meta.name ,, no.such-rule"
spec: {}
"""


def test_the_annotations_are_read_as_written() -> None:
    s = suppression_of({"annotations": {"draguard.io/ignore": " a.b , c.d,,", "other": "x"}})
    assert s == Suppression(frozenset({"a.b", "c.d"}), False, "draguard.io/ignore:  a.b , c.d,,")
    s = suppression_of({"annotations": {"draguard.io/ignore-all": "vendored"}})
    assert s == Suppression(frozenset(), True, "draguard.io/ignore-all: vendored")
    assert suppression_of({"annotations": {"draguard.io/ignore": ["a.b"]}}) is None  # not a string
    assert suppression_of({"annotations": "x"}) is None and suppression_of({}) is None


def test_ignore_all_silences_every_rule_but_draguards_own_failures_and_what_was_not_checked() -> None:
    everything = Suppression(frozenset(), True, "")
    assert silenced(everything, "meta.name") and silenced(everything, "feasibility.infeasible")
    assert not silenced(everything, "internal.rule-crash")
    assert not silenced(everything, "input.not-checked")
    assert not silenced(everything, UNKNOWN_RULE)
    listed = Suppression(frozenset({"input.not-checked"}), False, "")
    assert silenced(listed, "input.not-checked") and not silenced(listed, "meta.name")  # named: as asked


def test_suppress_moves_the_silenced_findings_and_keeps_them() -> None:
    v = [Violation(r, Severity.ERROR, "f", "m") for r in ("a.b", "c.d")]
    o = ObjectResult(
        "f.yaml", 1, "v1", "Pod", "ns", "p", list(v), suppression=Suppression(frozenset({"a.b"}))
    )
    report = Report([o])
    suppress(report)
    suppress(report)  # again (after more findings are added): what was moved stays moved, once
    assert (o.violations, o.suppressed) == ([v[1]], [v[0]])
    assert report.errors == 1 and report.summary()["suppressed"] == 1
    assert o.to_dict()["suppressed"] == [v[0].to_dict()]


def test_validation_records_the_annotations_and_unknown_ids_get_one_warning() -> None:
    report = Report(check_file_text(BAD_CLASS, "c.yaml", Context()).objects)
    [o] = report.objects
    assert [v.rule for v in o.violations] == ["meta.name"]  # check_file_text alone silences nothing
    suppress(report)
    assert ([v.rule for v in o.violations], [v.rule for v in o.suppressed]) == ([], ["meta.name"])
    assert warn_unknown(report) == [o]
    assert warn_unknown(report) == []  # once
    [w] = o.violations
    assert (w.rule, w.severity, w.field) == (
        UNKNOWN_RULE,
        Severity.WARNING,
        "metadata.annotations[draguard.io/ignore]",
    )
    assert (
        w.message
        == "draguard has no rule no.such-rule: this annotation silences nothing for it (`draguard rules` lists the rule ids)"
    )
