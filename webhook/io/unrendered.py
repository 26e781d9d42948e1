"""Unrendered templates: a Helm chart's `templates/` file or an envsubst template is not a manifest.

A document (a piece of the stream between `---` lines) is a template when a line outside comments has a
Helm action in a place YAML would read it (`{{ ... }}` unquoted, or Helm's own names anywhere: `.Values`,
`.Release`, `.Chart`, `include "`, `toYaml`, `nindent`), or an unquoted value with an environment
reference (`name: ${CLAIM_NAME}`). Go templates inside quoted strings of a rendered manifest (an alerting
rule's `"{{ $labels.instance }}"`) and `${HOME}` in a quoted command are not templates.

`blank_templates(text)` returns the text with those documents emptied (line numbers kept) and where the
first marker is: the file gets one finding saying to render it first, never a parse error per line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webhook.io.yamlload import pieces_of

# Helm's own names: never left in a rendered manifest
_HELM_NAMES = re.compile(
    r"\{\{-?\s*(?:[^}]*?(?:\.Values|\.Release|\.Chart|\.Capabilities|\.Files|\.Template)\b"
    r"|include\s+\"|template\s+\"|tpl\s|toYaml|nindent|indent\s|required\s+\"|default\s)"
)
# a Go template action where YAML reads it: at the start of a line, after `- `, or as a plain value
_HELM_PLAIN = re.compile(r"^\s*(?:-\s+)?(?:[^\s\"'#:][^:#]*:\s+)?\{\{")
_ENV_PLAIN = re.compile(
    r"^\s*(?:-\s+)?[^\s\"'#:][^:#]*:\s+(?=[^\s\"'#|>&*!\[{])[^#]*\$\{[A-Za-z_][A-Za-z0-9_]*[^}]*\}"
)
_ENV_KEY = re.compile(r"^\s*(?:-\s+)?\$\{[A-Za-z_][A-Za-z0-9_]*\}")


@dataclass(frozen=True)
class Template:
    line: int  # 1-based line of the first marker
    marker: str  # the marker as written (cut to 60 characters)
    helm: bool  # a Helm template (else an environment-variable template)
    documents: int  # documents emptied


def _marker(line: str) -> tuple[str, bool] | None:
    stripped = line.lstrip()
    if not stripped or stripped.startswith("#"):
        return None
    if "{{" in line:
        m = _HELM_NAMES.search(line)
        if m is not None or _HELM_PLAIN.match(line):
            start = line.index("{{")
            end = line.find("}}", start)
            return line[start : end + 2 if end >= 0 else len(line)], True
    if "${" in line and (_ENV_PLAIN.match(line) or _ENV_KEY.match(line)):
        start = line.index("${")
        end = line.find("}", start)
        return line[start : end + 1 if end >= 0 else len(line)], False
    return None


def blank_templates(text: str) -> tuple[str, Template | None]:
    """`text` with its template documents emptied (their lines kept as blank lines, the `---` line
    kept), and the first template's marker; `(text, None)` when there is none."""
    if "{{" not in text and "${" not in text:
        return text, None
    first: Template | None = None
    parts: list[str] = []
    emptied = 0
    last = 0
    for start, stop, line in pieces_of(text):
        piece = text[start:stop]
        found = None
        for n, ln in enumerate(piece.split("\n")):
            got = _marker(ln)
            if got is not None:
                found = (line + n + 1, got)
                break
        if found is None:
            continue
        emptied += 1
        if first is None:
            first = Template(found[0], found[1][0][:60], found[1][1], 0)
        keep = piece.split("\n", 1)[0] if piece.startswith("---") else ""
        parts.append(text[last:start])
        parts.append(keep + "\n" * piece.count("\n"))
        last = stop
    if first is None:
        return text, None
    parts.append(text[last:])
    return "".join(parts), Template(first.line, first.marker, first.helm, emptied)


def message(t: Template) -> str:
    """The one finding of a templated file."""
    how = (
        "`helm template RELEASE CHART | draguard validate -`"
        if t.helm
        else "`envsubst < FILE | draguard validate -`"
    )
    kind = "a Helm template" if t.helm else "a template with environment variables"
    docs = "its document was" if t.documents == 1 else f"its {t.documents} templated documents were"
    return f"this file is {kind} ({t.marker} on line {t.line}), not a manifest: render it first, e.g. {how}; {docs} not checked"
