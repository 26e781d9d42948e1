"""`draguard test PATH...`: run policy test files (`draguard-test.yaml`, `*.draguard-test.yaml`, found
recursively) and compare each expected result with draguard's (webhook.offline.policytest). Exit codes: 0
every expectation met, 1 any mismatch (with what differs), 2 usage or a test file that cannot be run
(file, line, field path)."""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from webhook.cli.options import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, add_profile_args
from webhook.model.text import one_line, xml_text

if TYPE_CHECKING:
    from webhook.offline.policytest import Case, TestRun

OUTPUTS = ("text", "json")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    t = sub.add_parser(
        "test",
        help="run policy tests (draguard-test.yaml files): expected results per resource and rule",
        description="Run policy test files: each names policies, the objects under test (and optionally "
        "the cluster they meet) and the expected result per resource and rule (pass, fail, warn, info, "
        "skip) or the object after mutation (patchedResource). Directories are searched recursively for "
        "draguard-test.yaml and *.draguard-test.yaml.",
    )
    t.add_argument("paths", nargs="+", metavar="PATH", help="test files or directories holding them")
    t.add_argument("-o", "--output", "--format", dest="format", choices=OUTPUTS, default="text")
    t.add_argument(
        "--junit", metavar="FILE", help="also write JUnit XML (one testcase per expectation) to FILE"
    )
    t.add_argument("--fail-only", action="store_true", help="text output: list only the mismatches")
    add_profile_args(t, runtime_config=False)
    t.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from webhook.config.profile import load_profile, parse_feature_gates
    from webhook.offline.policytest import TestOptions, run_tests

    gates = parse_feature_gates(args.feature_gates)
    load_profile(args.k8s_version, gates, args.feature_gates)  # a bad gate is a usage error now
    result = run_tests(args.paths, TestOptions(args.k8s_version, tuple(sorted(gates.items()))))
    for error in result.errors:
        sys.stderr.write(f"draguard: error: {error}\n")
    if args.format == "json":
        sys.stdout.write(json.dumps(to_dict(result), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(result, args.fail_only))
    if args.junit:
        with open(args.junit, "w", encoding="utf-8") as f:
            f.write(render_junit(result))
    sys.stdout.flush()
    if result.errors:
        return EXIT_USAGE
    return EXIT_ERRORS if result.failed else EXIT_OK


def _title(c: Case) -> str:
    return f"{c.resource} {c.rule}"


def render_text(result: TestRun, fail_only: bool = False) -> str:
    out: list[str] = []
    for f in result.files:
        if f.error is not None:
            continue
        out.append(f"{f.path}: {f.name or '(no name)'}: {len(f.cases) - f.failed}/{len(f.cases)} passed")
        for c in f.cases:
            if c.ok:
                if not fail_only:
                    out.append(
                        f"  ok    {_title(c)}: {c.actual if c.rule != 'patchedResource' else c.expected}"
                    )
                continue
            what = f"expected {c.expected}, got {c.actual}"
            out.append(f"  FAIL  {_title(c)}: {what} ({f.path}:{c.line})")
            out.extend(f"        {one_line(d)}" for d in c.detail)
            out.extend(f"        {line}" for line in c.diff.splitlines())
    bad = len(result.errors)
    tail = f", {bad} test file(s) not run" if bad else ""
    out.append(f"draguard test: {result.passed} passed, {result.failed} failed{tail}")
    return "\n".join(out) + "\n"


def _case(c: Case) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource": c.resource,
        "rule": c.rule,
        "expected": c.expected,
        "actual": c.actual,
        "ok": c.ok,
        "line": c.line,
        "detail": c.detail,
    }
    if c.diff:
        out["diff"] = c.diff
    return out


def to_dict(result: TestRun) -> dict[str, Any]:
    return {
        "tests": [
            {
                "file": f.path,
                "name": f.name,
                "results": [_case(c) for c in f.cases],
                **({"error": f.error.problems} if f.error is not None else {}),
            }
            for f in result.files
        ],
        "summary": {"passed": result.passed, "failed": result.failed, "errors": len(result.errors)},
    }


def render_junit(result: TestRun) -> str:
    """One testsuite per test file, one testcase per expectation (and resource); a mismatch is a
    failure, a file that cannot be run an error."""
    suites = ET.Element("testsuites", name="draguard test")
    for f in result.files:
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=xml_text(f.name or f.path),
            tests=str(len(f.cases) + (1 if f.error else 0)),
            failures=str(f.failed),
            errors="1" if f.error else "0",
            skipped="0",
            file=xml_text(f.path),
        )
        if f.error is not None:
            case = ET.SubElement(suite, "testcase", classname=xml_text(f.path), name="test file")
            err = ET.SubElement(case, "error", message="the test file cannot be run", type="TestFileError")
            err.text = "\n".join(xml_text(p) for p in f.error.problems)
        for c in f.cases:
            case = ET.SubElement(suite, "testcase", classname=xml_text(f.path), name=xml_text(_title(c)))
            if not c.ok:
                failure = ET.SubElement(
                    case,
                    "failure",
                    message=xml_text(f"expected {c.expected}, got {c.actual}"),
                    type="Mismatch",
                )
                failure.text = "\n".join(xml_text(line) for line in [*c.detail, *c.diff.splitlines()])
    suites.set("tests", str(sum(int(s.get("tests", "0")) for s in suites)))
    suites.set("failures", str(result.failed))
    suites.set("errors", str(len(result.errors)))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
