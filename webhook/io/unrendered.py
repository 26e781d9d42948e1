"""Unrendered templates: a Helm chart's `templates/` file or an envsubst template is not a manifest.

A document (a piece of the stream between `---` lines) is a template when a line outside comments has a
Helm action in a place YAML would read it (`{{ ... }}` unquoted, or Helm's own names anywhere: `.Values`,
`.Release`, `.Chart`, `include "`, `toYaml`, `nindent`), or an unquoted value with an environment
reference (`name: ${CLAIM_NAME}`). Go templates inside quoted strings of a rendered manifest (an alerting
rule's `"{{ $labels.instance }}"`) and `${HOME}` in a quoted command are not templates.

Only a document that does not parse as a YAML object is blanked as a template: a ConfigMap whose `data`
holds `{{ .Values.x }}` or `${VAR}` in its strings is a valid ConfigMap. A document that parses but has a
marker is validated as written (`split_templates` names its marker): valid, it is valid; with errors, they
are most likely the template's, and the document gets one finding saying so (`hint`) instead of them.

A Go template that names none of Helm's own things (`{{ .Name }}`: clusterloader2, an operator's assets) is
called a Go template, not a Helm one; its actions count inside a plain key or value too (`name:
claim-{{.Index}}`, as Kubernetes' own scheduler_perf templates write them), not in a quoted one. `blank_templates(text)` returns the text with the template documents emptied (line numbers kept) and
where the first marker is: the file gets one finding saying to render it first, never a parse error per
line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from webhook.io.fastyaml import load_documents
from webhook.io.yamlload import RawDocument, pieces_of

# Helm's own names: never left in a rendered manifest. Not Go's own `template "name"` action: rendered
# files carry it in quoted strings (Alertmanager's notification templates); unquoted, _HELM_PLAIN sees it.
_HELM_NAMES = re.compile(
    r"\{\{-?\s*(?:[^}]*?(?:\.Values|\.Release|\.Chart|\.Capabilities|\.Files|\.Template)\b"
    r"|include\s+\"|tpl\s|toYaml|nindent|indent\s|required\s+\"|default\s)"
)
# a Go template action where YAML reads it: at the start of a line, after `- `, or as a plain value
_HELM_PLAIN = re.compile(r"^\s*(?:-\s+)?(?:(?:-(?=\S)|[^\s\"'#:-])[^:#]*:\s+)?\{\{")
# a Jinja tag on a line of its own (`{% raw %}`, `{% if x %}`: mkdocs' macros, Ansible, cookiecutter): never
# YAML, which cannot start a token with `%`
_JINJA = re.compile(r"^\s*\{%-?\s*[A-Za-z]")
# a Go action inside a plain (unquoted) key or value: a field, a variable, or a function applied to one
# (`name: claim-{{.Index}}`, `gpu-{{Mod .Index 25}}: 1`, as scheduler_perf's and clusterloader2's templates
# write them)
_GO_ACTION = re.compile(r"\{\{-?\s*(?:[.$][A-Za-z_]|[A-Za-z_]\w*\s+[.$(])")
_ENV_PLAIN = re.compile(
    r"^\s*(?:-\s+)?[^\s\"'#:][^:#]*:\s+(?=[^\s\"'#|>&*!\[{])[^#]*\$\{[A-Za-z_][A-Za-z0-9_]*[^}]*\}"
)
_ENV_KEY = re.compile(r"^\s*(?:-\s+)?\$\{[A-Za-z_][A-Za-z0-9_]*\}")


TemplateKind = Literal[
    "helm", "go", "env", "jinja"
]  # Helm's names seen; another Go template; `${VAR}`; Jinja


@dataclass(frozen=True)
class Template:
    line: int  # 1-based line of the first marker
    marker: str  # the marker as written (cut to 60 characters)
    kind: TemplateKind
    documents: int  # documents emptied


def _marker(line: str) -> tuple[str, TemplateKind] | None:
    stripped = line.lstrip()
    if not stripped or stripped.startswith("#"):
        return None
    if "{{" in line:
        m = _HELM_NAMES.search(line)
        start = 0 if m is not None or _HELM_PLAIN.match(line) else _plain_action(stripped)
        if start is not None:
            start = line.index("{{") if start == 0 else len(line) - len(stripped) + start
            end = line.find("}}", start)
            return line[start : end + 2 if end >= 0 else len(line)], "helm" if m is not None else "go"
    if "{%" in line and _JINJA.match(line):
        start = line.index("{%")
        end = line.find("%}", start)
        return line[start : end + 2 if end >= 0 else len(line)], "jinja"
    if "${" in line and (_ENV_PLAIN.match(line) or _ENV_KEY.match(line)):
        start = line.index("${")
        end = line.find("}", start)
        return line[start : end + 1 if end >= 0 else len(line)], "env"
    return None


def _plain_action(body: str) -> int | None:
    """Where a Go action (`_GO_ACTION`) starts in the plain key or value of a line (`body`: the line
    without its indentation), None when there is none: the text of a quoted scalar (an alerting rule's
    `"{{ $labels.instance }}"`) and what follows ` #` (a comment) are not looked at."""
    offset = 2 if body.startswith("- ") else 0
    key, sep, value = body[offset:].partition(": ")
    parts = ((offset, key), (offset + len(key) + 2, value)) if sep else ((offset, key),)
    for at, part in parts:
        lead = len(part) - len(part.lstrip())
        if part[lead : lead + 1] in ("'", '"'):
            continue
        comment = part.find(" #")
        m = _GO_ACTION.search(part, 0, comment if comment >= 0 else len(part))
        if m is not None:
            return at + m.start()
    return None


@dataclass(frozen=True)
class Marked:
    """A document with a template marker that parses as an object all the same: it is read and
    validated; `marker` explains its findings if it has errors."""

    first_line: int  # 1-based lines of its piece of the stream
    last_line: int
    marker: Template


def _parses_as_object(piece: str) -> bool:
    """Whether every document of `piece` parses, each as an object (or empty)."""
    return all(
        isinstance(d, RawDocument) and (d.data is None or isinstance(d.data, dict))
        for d in load_documents(piece)
    )


def blank_templates(text: str) -> tuple[str, Template | None]:
    """`text` with its template documents emptied (their lines kept as blank lines, the `---` line
    kept), and the first template's marker; `(text, None)` when there is none."""
    blanked, first, _ = split_templates(text)
    return blanked, first


def split_templates(text: str) -> tuple[str, Template | None, list[Marked]]:
    """`blank_templates`, and the documents that have a marker but parse as objects (kept as they are)."""
    if "{{" not in text and "${" not in text and "{%" not in text:
        return text, None, []
    first: Template | None = None
    parts: list[str] = []
    marked: list[Marked] = []
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
        if _parses_as_object(piece):  # a valid object whose strings hold `{{ }}` or `${VAR}`
            template = _helm_or_go(Template(found[0], found[1][0][:60], found[1][1], 1), piece)
            marked.append(Marked(line + 1, line + 1 + piece.count("\n"), template))
            continue
        emptied += 1
        if first is None:
            first = Template(found[0], found[1][0][:60], found[1][1], 0)
        keep = piece.split("\n", 1)[0] if piece.startswith("---") else ""
        parts.append(text[last:start])
        parts.append(keep + "\n" * piece.count("\n"))
        last = stop
    if first is None:
        return text, None, marked
    parts.append(text[last:])
    return "".join(parts), _helm_or_go(Template(first.line, first.marker, first.kind, emptied), text), marked


def _helm_or_go(t: Template, text: str) -> Template:
    """A Go template whose text names Helm's own things elsewhere (`.Values` on a later line) is Helm's."""
    if t.kind == "go" and _HELM_NAMES.search(text):
        return Template(t.line, t.marker, "helm", t.documents)
    return t


_HOW = {
    "helm": "`helm template RELEASE CHART | draguard validate -`",
    "go": "with the tool that fills it in (`helm template RELEASE CHART | draguard validate -` for a chart)",
    "env": "`envsubst < FILE | draguard validate -`",
    "jinja": "with the tool that fills it in (mkdocs, Ansible, cookiecutter, ...)",
}


def message(t: Template) -> str:
    """The one finding of a templated file."""
    kind = {
        "helm": "a Helm template",
        "go": "a Go template",
        "env": "a template with environment variables",
        "jinja": "a Jinja template",
    }[t.kind]
    docs = "its document was" if t.documents == 1 else f"its {t.documents} templated documents were"
    return f"this file is {kind} ({t.marker} on line {t.line}), not a manifest: render it first, e.g. {_HOW[t.kind]}; {docs} not checked"


def hint(t: Template, errors: int, first: str) -> str:
    """The one finding of a document that parses but holds a template marker and, as written, is not a
    valid object (`errors` errors, the first described by `first`): most likely an unrendered template."""
    kind = {
        "helm": "an unrendered Helm template",
        "go": "an unrendered Go template",
        "env": "a template with environment variables",
        "jinja": "an unrendered Jinja template",
    }[t.kind]
    more = f"{errors} errors, the first" if errors > 1 else "1 error"
    return (
        f"this document looks like {kind} ({t.marker} on line {t.line}): as written it is not a valid "
        f"object ({more}: {first}); render it first, e.g. {_HOW[t.kind]}"
    )
