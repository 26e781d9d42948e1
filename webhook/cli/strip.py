"""`draguard strip PATH...`: print objects as an API server of the target version would store them (the
fields the version or its feature gates drop are dropped, each reported on stderr). Exit codes: 0 done,
1 an input could not be read or parsed, 2 usage."""

from __future__ import annotations

import argparse
import sys

from webhook.cli.options import EXIT_ERRORS, EXIT_OK, add_input_args, add_profile_args, runtime_config
from webhook.config.profile import load_profile, parse_feature_gates
from webhook.io.files import InputFileError
from webhook.model.text import one_line


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    s = sub.add_parser(
        "strip",
        help="print objects as an API server of the target version would store them",
        description="Drop the fields that the target version/feature gates would silently drop "
        "(version skew) and print the objects as YAML; each dropped field is reported on stderr.",
    )
    s.add_argument("paths", nargs="+", metavar="PATH")
    add_profile_args(s)
    add_input_args(s)
    s.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from webhook.apiserver.skew import strip_disabled_fields
    from webhook.config.context import Context
    from webhook.io.documents import DocumentError, discover_all, not_an_object, parse, read_text
    from webhook.io.findinglines import FileLines
    from webhook.io.yamlload import expansion_error, expansion_limit
    from webhook.io.yamlout import dump_documents
    from webhook.model.catalogue import RULES
    from webhook.model.jsontext import json_size
    from webhook.validate import chart_message
    from webhook.validate.versioned import strip_versioned

    def say(line: str) -> None:
        sys.stderr.write(one_line(line) + "\n")

    ctx = Context(
        profile=load_profile(args.k8s_version, parse_feature_gates(args.feature_gates)),
        runtime_config=runtime_config(args),
    )
    status = EXIT_OK
    out = []
    found = discover_all(args.paths, args.exclude)
    for skipped in found.skipped:
        say(f"{skipped.path}:1: warning input.skipped-file: {skipped.reason}")
    for chart in found.charts:
        say(f"{chart.chart_file}:1: info input.helm-chart: {chart_message(chart)}")
    for path in found.files:
        source = "<stdin>" if path == "-" else path
        try:
            text = read_text(path, args.max_input_bytes)
        except InputFileError as e:
            say(f"{source}:1: error {e.rule}: {e}")
            status = EXIT_ERRORS
            continue
        limit = expansion_limit(len(text))  # what strip writes is bounded on its own, not only by the reader
        lines = FileLines(text)
        for doc in parse(text, source):
            if isinstance(doc, DocumentError):
                say(f"{doc.source}:{doc.line}: error {doc.rule}: {doc.message}")
                status = EXIT_ERRORS
                continue
            if not_an_object(doc):
                continue  # values.yaml, CI configuration, a JSON array: nothing an API server stores
            for issue in doc.issues:
                severity = RULES[issue.rule].severity.value
                say(f"{doc.source}:{issue.line}: {severity} {issue.rule}: {issue.path}: {issue.message}")
                status = EXIT_ERRORS if severity == "error" else status
            versioned = strip_versioned(doc.obj, ctx)  # resource.k8s.io/*: served? converted?
            if versioned is not None:
                at = lines.of(doc, [str(v.field) for v in versioned.findings])
                for v in versioned.findings:
                    say(
                        f"{doc.source}:{at(str(v.field))}: {v.severity.value} {v.rule}: {v.field}: {v.message}"
                    )
                    status = EXIT_ERRORS if v.severity.value == "error" else status
                if versioned.obj is None:
                    continue
                stripped, dropped = versioned.obj, versioned.dropped
            else:
                stripped, skew = strip_disabled_fields(doc.obj, ctx)
                dropped = [(str(f.field), f.message) for f in skew]
            if json_size(stripped, limit) > limit:
                say(f"{doc.source}:{doc.line}: error input.parse: {expansion_error(limit)}")
                status = EXIT_ERRORS
                continue
            at = lines.of(doc, [path_ for path_, _ in dropped])
            for path_, message in dropped:
                say(f"{doc.source}:{at(path_)}: warning skew.dropped-field: {path_}: {message}")
            out.append(stripped)
    dump_documents(out, sys.stdout)  # webhook.io.yamlout: block style; JSON for the deepest documents
    return status
