"""Renderers for validation reports: text (compiler style), json, junit, sarif 2.1.0.

Whatever the input holds, the output cannot be forged or broken: a text line is one finding (fields from
the input are escaped by `one_line`), JUnit is valid XML 1.0 (`xml_text`), SARIF locations are
percent-encoded URIs, and JSON escapes what it must itself.
"""

from __future__ import annotations

import json
import os
from urllib.parse import quote
from xml.etree import ElementTree as ET

from webhook import __version__
from webhook.model.catalogue import RULES
from webhook.model.report import ObjectResult, Report, unread_line
from webhook.model.text import clip, compact, one_line, xml_text
from webhook.model.violation import Severity, Violation

FORMATS = ("text", "json", "junit", "sarif")
# The repository (the README's pre-commit example names the same) and, in it, the rule reference whose
# table gives every rule an anchor of its id (`rules_table`): SARIF's helpUri, which must be absolute.
PROJECT_URL = "https://example.invalid/draguard"
RULES_DOC = "docs/rules.md"
SRCROOT = "%SRCROOT%"  # SARIF's base of relative artifact URIs: the directory draguard ran in
TEXT_FIELD = 1024  # characters of a field path on a text line (rules clip a long map key already)
TEXT_MESSAGE = 4096  # characters of a message on a text line (rules clip a long value already)
# info rules whose every finding is its own line (each names a different command to run)
UNGROUPED_INFO = frozenset({"input.helm-chart"})


def _label(o: ObjectResult) -> str:
    ns = f"{clip(o.namespace)}/" if o.namespace else ""
    return f"{clip(o.kind or '?')} {ns}{clip(o.name or '?')}"


def rule_help_uri(rule_id: str) -> str:
    """The absolute URI of a rule's row in the rule reference."""
    return f"{PROJECT_URL}/blob/main/{RULES_DOC}#{rule_anchor(rule_id)}"


def rule_anchor(rule_id: str) -> str:
    """A rule's anchor in the rule reference: its id (letters, digits, `.` and `-`), percent-encoded."""
    return quote(rule_id, safe="")


def _line(o: ObjectResult, v: Violation, tail: str = "") -> str:
    where = f"{clip(v.field, TEXT_FIELD)}: " if v.field else ""
    label = f" [{_label(o)}]" if o.kind or o.name else ""  # a file or a document that is not an object
    return one_line(
        f"{o.source}:{v.line or o.line}: {v.severity.value} {v.rule}: {where}{clip(compact(v.message), TEXT_MESSAGE)}{label}{tail}"
    )


def _example(items: list[tuple[ObjectResult, Violation]]) -> tuple[ObjectResult, Violation]:
    """The finding that stands for an info rule's findings: the first on a field that no warning or error
    names already (that object is shown anyway)."""
    for o, v in items:
        if not any(w.field == v.field and w.severity is not Severity.INFO for w in o.violations):
            return o, v
    return items[0]


def render_text(report: Report, summary: bool = False, deadline_seconds: float | None = None) -> str:
    """`file:line: severity rule: field: message`, one line per error or warning; info findings are summed
    up, one line per rule (its first finding, and how many more: `-o json` lists every one), and so are
    two or more files the deadline left unread (`deadline_seconds`: the run's, named on that line)."""
    lines = []
    infos: dict[str, list[tuple[ObjectResult, Violation]]] = {}
    unread = [o for o in report.objects if o.unread]
    grouped = len(unread) > 1
    for o in report.objects:
        violations = o.violations
        if grouped and o.unread:
            if o is unread[0]:
                lines.append(one_line(unread_line(unread, deadline_seconds)))
            violations = violations[1:]  # its own "not read" finding is on the line above
        for v in violations:
            if v.severity is Severity.INFO and v.rule not in UNGROUPED_INFO:
                infos.setdefault(v.rule, []).append((o, v))
            else:
                lines.append(_line(o, v))
    for items in infos.values():
        more = len(items) - 1
        lines.append(
            _line(*_example(items), f" (and {more} more like it: -o json lists each)" if more else "")
        )
    if summary:
        s = report.summary()
        cut = sum(1 for o in report.objects if any(v.rule == "input.not-checked" for v in o.violations))
        lines.append(
            f"Summary: {s['objects'] - cut} objects checked, {s['errors']} errors, {s['warnings']} warnings, "
            f"{s['info']} info, {s['skipped']} skipped"
            + (f" ({report.not_objects} not Kubernetes objects)" if report.not_objects else "")
            + (f", {report.not_checked} not checked (the deadline passed)" if report.not_checked else "")
            + (
                f", {report.cluster} cluster objects (--cluster: context, not shown)"
                if report.cluster
                else ""
            )
            + (f", {s['suppressed']} suppressed (draguard.io/ignore)" if s.get("suppressed") else "")
            + (
                f", {report.excluded} path{'s' if report.excluded != 1 else ''} excluded (--exclude)"
                if report.excluded
                else ""
            )
            + (f", {report.context} context objects (--context: not shown)" if report.context else "")
        )
    return "\n".join(lines) + ("\n" if lines else "")


def not_objects_line(report: Report) -> str:
    """The one line of a run about the documents it skipped as not Kubernetes objects (on stderr with
    text output: stdout holds findings only, one per line; JSON counts them in its summary)."""
    n, files = report.not_objects, report.not_object_files
    what = f"{n} documents in {files} file{'s' if files != 1 else ''} are not Kubernetes objects"
    if n == 1:
        what = "1 document is not a Kubernetes object"
    return one_line(
        f"draguard: info: {what} (other tools' files: no apiVersion and kind, a list, a Helm Chart.yaml "
        f"or index.yaml, a kind without apiVersion such as a kustomization.yaml): skipped "
        f"(the first: {report.first_not_object})"
    )


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n"


def render_junit(report: Report) -> str:
    """One testsuite per file, one testcase per object; errors are failures, warnings go to system-out."""
    suites = ET.Element("testsuites", name="draguard")
    by_file: dict[str, list[ObjectResult]] = {}
    for o in report.objects:
        by_file.setdefault(o.source, []).append(o)
    total = failures = 0
    for source, objs in by_file.items():
        failed = sum(1 for o in objs if o.errors)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=_xml(source),
            tests=str(len(objs)),
            failures=str(failed),
            errors="0",
            skipped="0",
        )
        for o in objs:
            case = ET.SubElement(suite, "testcase", classname=_xml(source), name=_xml(_case_name(o)))
            errs = [v for v in o.violations if v.severity.value == "error"]
            others = [v for v in o.violations if v.severity.value != "error"]
            if errs:
                f = ET.SubElement(case, "failure", message=f"{len(errs)} error(s)", type="ValidationError")
                f.text = "\n".join(
                    _xml(f"line {v.line or o.line}: {v.rule}: {_where(v)}{v.message}") for v in errs
                )
            if others:
                out = ET.SubElement(case, "system-out")
                out.text = "\n".join(
                    _xml(f"line {v.line or o.line}: {v.severity.value} {v.rule}: {_where(v)}{v.message}")
                    for v in others
                )
        total += len(objs)
        failures += failed
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _where(v: Violation) -> str:
    return f"{v.field}: " if v.field else ""


def _case_name(o: ObjectResult) -> str:
    """A testcase's name: its object, or its file for a finding on no object (a parse error, a file the
    deadline left unread)."""
    return f"{_label(o) if o.kind or o.name else o.source} (line {o.line})"


def _xml(text: str) -> str:
    """One line of valid XML text: line breaks and controls escaped, nothing XML 1.0 forbids."""
    return xml_text(one_line(text))


def artifact_uri(source: str) -> str:
    """A SARIF `artifactLocation.uri`: a relative path as a percent-encoded URI reference, an absolute
    one as a `file://` URI (the original bytes of a name that is not UTF-8 are kept)."""
    raw = os.fsencode(source) if source != "<stdin>" else b"<stdin>"
    if os.sep != "/":
        raw = raw.replace(os.sep.encode(), b"/")
    path = quote(raw, safe="/")
    return f"file://{path}" if raw.startswith(b"/") else path


def artifact_location(source: str) -> dict[str, str]:
    """A SARIF `artifactLocation`: a relative path's URI is relative to SRCROOT (`uriBaseId`, as SARIF
    asks of relative references; GitHub code scanning reads it from the repository root), an absolute
    path's is a `file://` URI; stdin has no file."""
    uri = artifact_uri(source)
    if source == "<stdin>" or uri.startswith("file://"):
        return {"uri": uri}
    return {"uri": uri, "uriBaseId": SRCROOT}


def _srcroot() -> str:
    """The directory draguard ran in, as a `file://` URI ending with `/` (SARIF `originalUriBaseIds`)."""
    return artifact_uri(os.path.join(os.getcwd(), ""))


_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render_sarif(report: Report) -> str:
    """SARIF 2.1.0: one run, rules from the registry, one result per violation."""
    used = sorted({v.rule for o in report.objects for v in [*o.violations, *o.suppressed]})
    rules = []
    index = {}
    for i, rid in enumerate(used):
        r = RULES.get(rid)
        index[rid] = i
        rules.append(
            {
                "id": rid,
                "shortDescription": {"text": r.summary if r else rid},
                "helpUri": rule_help_uri(rid),
                "defaultConfiguration": {"level": _LEVEL[r.severity.value] if r else "error"},
                "properties": {"field": r.field if r else "", "tag": r.tag if r else ""},
            }
        )
    results = []
    for o in report.objects:
        for n, v in enumerate([*o.violations, *o.suppressed]):
            location: dict[str, object] = {
                "physicalLocation": {
                    "artifactLocation": artifact_location(o.source),
                    "region": {"startLine": max(1, v.line or o.line)},
                }
            }
            if o.kind or o.name:  # a finding on a file (a parse error) has no object
                location["logicalLocations"] = [
                    {"fullyQualifiedName": f"{_label(o)}:{v.field}", "kind": "object"}
                ]
            results.append(
                {
                    "ruleId": v.rule,
                    "ruleIndex": index[v.rule],
                    "level": _LEVEL[v.severity.value],
                    "message": {"text": f"{v.field}: {v.message}" if v.field else v.message},
                    "locations": [location],
                }
            )
            if n >= len(o.violations):  # silenced by the object's draguard.io/ignore annotation
                results[-1]["suppressions"] = _suppressions(o)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "draguard",
                        "version": __version__,
                        "informationUri": PROJECT_URL,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": _srcroot()}},
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def _suppressions(o: ObjectResult) -> list[dict[str, str]]:
    """SARIF 2.1.0 §3.35: a result silenced in the source, with the annotation as the justification."""
    why = o.suppression.justification if o.suppression else ""
    return [{"kind": "inSource", "status": "accepted", "justification": why}]


def render(report: Report, fmt: str, summary: bool = False, deadline_seconds: float | None = None) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "junit":
        return render_junit(report)
    if fmt == "sarif":
        return render_sarif(report)
    return render_text(report, summary, deadline_seconds)


def rules_table(fmt: str = "markdown") -> str:
    """The rule reference (docs/rules.md's table is generated from this: webhook/cli/readme.py)."""
    rows = sorted(RULES.values(), key=lambda r: r.id)
    if fmt == "json":
        return (
            json.dumps(
                [
                    {
                        "id": r.id,
                        "severity": r.severity.value,
                        "tag": r.tag,
                        "kinds": list(r.kinds),
                        "field": r.field,
                        "summary": r.summary,
                    }
                    for r in rows
                ],
                indent=2,
            )
            + "\n"
        )
    if fmt == "text":
        return "".join(f"{r.id:40} {r.severity.value:8} {r.field}\n    {r.summary}\n" for r in rows)
    out = ["| rule | severity | kind | field | what it checks |", "|---|---|---|---|---|"]
    for r in rows:
        kinds = ", ".join(r.kinds) if r.kinds else "(any)"
        # a `|` must be escaped in every cell, code spans too, or it splits the cell (GitHub tables)
        summary = r.summary.replace("|", "\\|")
        field = f"`{r.field}`".replace("|", "\\|") if r.field else ""
        out.append(f"| `{r.id}` | {r.severity.value} | {kinds} | {field} | {summary} |")
    return "\n".join(out) + "\n"
