"""`draguard convert --to v1 PATH...`: rewrite resource.k8s.io beta/alpha manifests as v1 (in place, or
to stdout with `-o -` / `--stdout`); see `webhook.convert.rewrite` for what is kept.

Like `kubectl convert`, stdin (`-`) and `--stdout` print the result; unlike it, files named (or found in
directories) are rewritten in place by default — the migration of a repository is one command — and
only when something in them changes. Every input is bounded by `--max-input-bytes`; a file with any
problem is left as it was, with `file:line: error: ...` on stderr.

Exit status: 0 done (nothing to convert is fine), 1 some file could not be converted, 2 usage error, 3 no
error but the deadline (`--deadline-seconds`) left files unconverted."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

from webhook.io.files import STDIN, InputFileError, discover_all, read_text
from webhook.model.budget import Deadline
from webhook.model.text import one_line

TARGETS = ("v1", "resource.k8s.io/v1")


def add_parser(sub: argparse._SubParsersAction, input_args: Any, seconds: Any) -> None:  # type: ignore[type-arg]
    c = sub.add_parser(
        "convert",
        help="rewrite resource.k8s.io v1beta1/v1beta2/v1alpha3 manifests as resource.k8s.io/v1",
        description="Rewrite the resource.k8s.io beta/alpha objects of files and directories as v1, as the "
        "API server converts them, keeping comments, key order and every other document byte for byte. "
        "Files are changed in place (only when something changes); `-` reads stdin and writes stdout.",
    )
    c.add_argument("paths", nargs="+", metavar="PATH")
    c.add_argument(
        "--to",
        dest="to",
        default="v1",
        metavar="VERSION",
        help="target version: v1 (resource.k8s.io/v1, the only one)",
    )
    c.add_argument(
        "-o",
        "--output",
        dest="output",
        default=None,
        metavar="-",
        help="`-o -`: write the (converted) files to stdout instead of changing them",
    )
    c.add_argument("--stdout", action="store_true", help="the same as `-o -`")
    c.add_argument(
        "--deadline-seconds",
        type=seconds,
        default=None,
        metavar="S",
        help="deadline of the whole run: files not done when it passes are left unchanged (exit 3); "
        "default: none",
    )
    input_args(c)
    c.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """The `convert` command (usage errors raise UsageError)."""
    from webhook.convert.rewrite import convert_text
    from webhook.model.errors import UsageError

    if args.to not in TARGETS:
        raise UsageError(f"--to {args.to!r}: draguard converts to resource.k8s.io/v1 only (--to v1)")
    if args.output not in (None, "-"):
        raise UsageError(
            f"-o {args.output!r}: only `-o -` (stdout) is supported; without it files change in place"
        )
    to_stdout = args.stdout or args.output == "-"
    deadline = None if args.deadline_seconds is None else Deadline(args.started + args.deadline_seconds)
    expired = deadline.expired if deadline is not None else None
    found = discover_all(args.paths, args.exclude)
    status = 0
    files_changed = objects = 0
    for skipped in found.skipped:
        _say(f"{skipped.path}:1: warning: {skipped.reason}")
    for chart in found.charts:  # a template is converted by hand: rewriting it could break its actions
        _say(
            f"{chart.chart_file}: note: a Helm chart: its templates/ ({chart.templates} files) were not read"
        )
    for path in found.files:
        source = "<stdin>" if path == STDIN else path
        if expired is not None and expired():
            _say(
                f"{source}:1: warning: not converted: the deadline (--deadline-seconds) passed before this file"
            )
            status = status or 3
            continue
        try:
            text = read_text(path, args.max_input_bytes)
        except InputFileError as e:
            _say(f"{source}:1: error: {e}")
            status = 1
            continue
        result = convert_text(text, source, expired)
        if result.cut:
            _say(
                f"{source}:{result.problems[0].line}: warning: not converted: the deadline passed in this file"
            )
            status = status or 3
            if to_stdout or path == STDIN:
                _emit(text)
            continue
        for note in result.notes:
            _say(f"{source}:{note.line}: note: {note.message}")
        if result.problems:
            for p in result.problems:
                _say(f"{source}:{p.line}: error: {p.message}")
            _say(f"{source}: not changed")
            status = 1
            if to_stdout or path == STDIN:
                _emit(text)
            continue
        new = result.text
        if to_stdout or path == STDIN:
            _emit(text if new is None else new)
        elif new is not None:
            try:
                _replace(path, new)
            except OSError as e:
                _say(f"{source}:1: error: cannot write the converted file: {e.strerror or e}")
                status = 1
                continue
        if new is not None:
            files_changed += 1
            n = sum(result.converted.values())
            objects += n
            what = ", ".join(f"{k}: {v}" for k, v in sorted(result.converted.items()))
            _say(f"{source}: converted {n} object{'s' if n != 1 else ''} to resource.k8s.io/v1 ({what})")
    _say(f"draguard convert: {objects} objects in {files_changed} of {len(found.files)} files converted")
    return status


_emitted = [False]  # stdout has a file already: the next one starts with `---`


def _emit(text: str) -> None:
    """One file's text on stdout, as its own documents (`---` between files)."""
    if _emitted[0]:
        sys.stdout.write("---\n")
    sys.stdout.write(text)
    if text and not text.endswith("\n"):
        sys.stdout.write("\n")
    _emitted[0] = True


def _replace(path: str, text: str) -> None:
    """Write `text` to `path` atomically (a temporary file beside it, then rename), keeping its mode."""
    mode = os.stat(path).st_mode & 0o7777
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".draguard-convert-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _say(line: str) -> None:
    sys.stderr.write(one_line(line) + "\n")
