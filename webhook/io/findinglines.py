"""Per-field lines for a report's findings: each finding points at the line of its field, not of its object.

Run once a report is complete (object rules, cross-object rules, feasibility findings): the files that
hold findings are read again, one at a time, and only the documents with findings are walked
(`webhook.io.fieldlines.locate`). Bounded: at most LINE_BYTES of documents are walked per run, and
nothing once the run's deadline has passed; findings left without a line keep their object's line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from webhook.io.documents import Document, InputFileError, read_text
from webhook.io.fieldlines import locate, piece_of
from webhook.io.files import MAX_FILE_BYTES
from webhook.io.jsonlines import LineStarts
from webhook.io.yamlload import pieces_of
from webhook.model.budget import Deadline
from webhook.model.report import ObjectResult, Report
from webhook.model.violation import Violation

LINE_BYTES = 32 << 20  # document text walked per run to find the lines of findings (~10 s at worst)


def assign_lines(
    report: Report,
    texts: Mapping[str, str] | None = None,
    deadline: Deadline | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    budget: int = LINE_BYTES,
) -> None:
    """Give every finding of `report` with a field and no line yet the line of that field. `texts` holds
    inputs that cannot be read again (`<stdin>`); other sources are read from disk (up to `max_bytes`)."""
    by_source: dict[str, list[ObjectResult]] = {}
    for o in report.objects:
        if o.kind is None or not any(v.field and not v.line for v in [*o.violations, *o.suppressed]):
            continue
        by_source.setdefault(o.source, []).append(o)
    left = budget
    for source, objects in by_source.items():
        if left <= 0 or (deadline is not None and deadline.expired()):
            return
        text = (texts or {}).get(source)
        if text is None:
            if source.startswith("<"):
                continue  # stdin or a request body that was not kept
            try:
                text = read_text(source, max_bytes)
            except (InputFileError, OSError):
                continue
        left -= _assign_file(text, objects, deadline, left)


def _assign_file(text: str, objects: list[ObjectResult], deadline: Deadline | None, budget: int) -> int:
    """Lines for the findings of one file's objects, one walk per document (the items of a List share
    theirs); returns the document bytes walked."""
    pieces = pieces_of(text)
    starts = LineStarts(text)
    by_root: dict[int, list[ObjectResult]] = {}
    for o in objects:
        by_root.setdefault(o.root_line or o.line, []).append(o)
    spent = 0
    for root, group in by_root.items():
        if spent >= budget or (deadline is not None and deadline.expired()):
            break
        wanted = sorted(
            {
                o.prefix + v.field
                for o in group
                for v in [*o.violations, *o.suppressed]
                if v.field and not v.line
            }
        )
        walked = starts.walked
        lines = locate(text, root, wanted, "", pieces, starts)
        if starts.walked > walked:  # a JSON value: what was walked of it
            spent += starts.walked - walked
        else:
            piece = piece_of(pieces, root)
            spent += piece[1] - piece[0] if piece is not None else 0
        if not lines:
            continue
        for o in group:
            o.violations = _lined(o, o.violations, lines)
            if o.suppressed:  # SARIF keeps them, at their lines
                o.suppressed = _lined(o, o.suppressed, lines)
    return spent


def _lined(o: ObjectResult, violations: list[Violation], lines: Mapping[str, int]) -> list[Violation]:
    return [
        replace(v, line=lines[o.prefix + v.field]) if not v.line and o.prefix + v.field in lines else v
        for v in violations
    ]


class FileLines:
    """The lines of fields of one file's documents, for callers that report as they go (`strip`): the
    text's pieces are found once, documents are walked only when they have findings with fields."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._pieces: list[tuple[int, int, int]] | None = None
        self._starts = LineStarts(text)

    def of(self, doc: Document, paths: list[str]) -> Callable[[str], int]:
        """A function giving each of `paths` (fields of `doc`) its line; the document's line otherwise."""
        if not any(paths):
            return lambda _path: doc.line
        if self._pieces is None:
            self._pieces = pieces_of(self.text)
        found = locate(self.text, doc.root_line or doc.line, paths, doc.prefix, self._pieces, self._starts)
        return lambda path: found.get(path, doc.line)
