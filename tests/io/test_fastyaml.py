"""The fast block-YAML reader yields exactly what the libyaml path yields, or hands the document over."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from webhook.io import fastyaml
from webhook.io.documents import Document, parse
from webhook.io.yamlload import RawDocument, YamlError, load_pieces
from webhook.io.yamlload import load_documents as libyaml_path


def _norm(found: Iterable[RawDocument | YamlError]) -> list[tuple[Any, ...]]:
    """Comparable form of a stream's results (repr keeps int/float/bool apart and NaN equal)."""
    out: list[tuple[Any, ...]] = []
    for d in found:
        if isinstance(d, RawDocument):
            issues = [(i.line, i.path, i.message) for i in d.issues]
            out.append(("doc", d.line, repr(d.data), issues, d.item_lines))
        else:
            out.append(("error", d.line, d.message))
    return out


def _read(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[Any, ...]], int]:
    """(results of the fast reader, how many times it handed text to libyaml)."""
    calls: list[str] = []

    def spy(t: str, pieces: list[tuple[int, int, int]], memo: Any = None) -> Any:
        calls.append(t)
        return load_pieces(t, pieces, memo)

    monkeypatch.setattr(fastyaml, "load_pieces", spy)
    return _norm(fastyaml.load_documents(text)), len(calls)


def _agrees(text: str) -> bool:
    return _norm(fastyaml.load_documents(text)) == _norm(libyaml_path(text))


MANIFEST = """\
# a ResourceSlice as kubectl / PyYAML write it
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-0-gpus   # trailing comment
  labels: {}
spec:
  driver: gpu.example.com
  nodeName: node-0
  pool:
    name: node-0
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: gpu-0
    attributes:
      model:
        string: ExampleGPU-X100
      resource.kubernetes.io/pcieRoot:
        string: pci0000:00
      driverVersion:
        version: 1.2.3
    capacity:
      memory:
        value: 10Gi
      cores:
        value: 16
    consumesCounters:
    - counterSet: gpu-0
      counters:
        cores:
          value: '16'
    taints: []
"""

FAST = {
    "kubernetes manifest": MANIFEST,
    "go-yaml v2 plain scalars": (
        "a: y\nb: n\nc: yes\nd: off\ne: 0777\nf: 0x1F\ng: 1.5\nh: 2026-01-01\ni: ~\nj: 10Gi\nk: 1e3\n"
        "l: -1\nm: +12\nn: .inf\no: 1_000\np: 0b101\nq: 3.\nr: Null\ns: 1:30\nt: -x\nu: ?x\nv: :x\n"
    ),
    "quoted scalars": "a: 'y'\nb: 'it''s: #1'\nc: \"0777\"\nd: ''\ne: \"\"\nf: ' x '\n",
    "double-quoted escapes": 'a: "t\\tn\\nq\\"b\\\\s\\/"\nb: "\\x41\\u00e9\\U0001F600\\0\\e\\N\\_\\L\\P\\ "\n',
    "unicode plain scalars": "name: café\n日本: 語\n",
    "comments": "# head\n\na: 1 # c\n  # indented comment\nb: x#y\nc: 'q' # c\n# tail\n",
    "empty flow collections": "a: []\nb: {}\nc:\n- []\n- {}\n",
    "null values": "a:\nb: ~\nc:\n  # only a comment\nd:\n- \n-\n- x\n",
    "indentless and indented sequences": "a:\n- 1\n- 2\nb:\n    - 3\n    -   x: 1\n        y: 2\nc: 4\n",
    "compact nested sequences": "- - a\n  - b\n- - - c\n- -\n    k: v\n",
    "item mapping on the next line": "-\n  a: 1\n  b:\n  - x\n- c: 2\n",
    "keys that resolve to other types": "1: a\ntrue: b\nnull: c\nn: d\n1.5: e\n'y': f\n\"2\": g\n",
    "keys with spaces and colons": "a b: 1\nhttp://x: 2\na:b: 3\n-a: 4\n",
    "root indented": "  a: 1\n  b:\n    c: 2\n",
    "root sequence": "- 1\n- a: b\n",
    "root empty flow": "[]  # nothing\n",
    "list items and their lines": "kind: List\nitems:\n- a: 1\n  b: 2\n-\n- c\n-\n  d: 4\n- - x\n",
    "empty items": "kind: List\nitems: []\n",
    "stream with markers": "# c\n---\na: 1\n--- # c\nb: 2\n...\n# after\n---\nc: 3\n...\n",
    "crlf line ends": "a: 1\r\nb:\r\n- x\r\n---\r\nc: d\r\n",
}

FALLBACK = {
    "flow collection with content": "a: [1, 2]\nb: {c: 1}\n",
    "anchors, aliases and merge keys": "base: &b\n  x: 1\nother:\n  <<: *b\n  z: 3\n",
    "merge key alone": "a:\n  <<: {x: 1}\n",
    "tags": "a: !!str 123\nb: !!int '7'\n",
    "literal block scalar": "a: |\n  line 1\n  line 2\nb: 1\n",
    "folded block scalar": "a: >-\n  folded\n  text\n",
    "multi-line plain scalar": "a: word\n  continued\n",
    "multi-line quoted scalar": 'a: "one\n  two"\n',
    "complex key": "? a\n: 1\n",
    "tab indentation": "a:\n\tb: 1\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "odd indentation": "a:\n    b: 1\n  c: 2\n",
    "value after a mapping value": "a: b: c\n",
    "duplicate keys": "spec:\n  driver: a\n  driver: b\n",
    "duplicate keys after conversion": "1: a\n'1': b\n",
    "syntax error then more documents": "a: 1\n---\nb: [1, 2\nc: 3\n---\nd: 4\n",
    "bad indentation error": "a: 1\n---\nb:\n  c: 1\n d: 2\n---\ne: 5\n",
    "empty documents": "a: 1\n---\n---\nb: 2\n---\n",
    "root scalar": "--- hello\n",
    "control character": "a: 1\n---\nb: x\x07y\n",
    "byte order mark inside": "a: 1\n---\nb: \ufeffx\n",
    "lone carriage return": "a: 1\rb: 2\n",
    "next line character": "a: x\x85y\n",
    "unknown escape": 'a: "\\\'"\n',
    "surrogate escape": 'a: "\\ud800"\n',
    "long key": "k" * 1100 + ": 1\n",
    "content after document end": "a: 1\n...\nb: 2\n",
    "document end with no document": "...\n---\na: 1\n",
    "quoted scalar then a comment without space": "a: 'x'#c\n",
}


@pytest.mark.parametrize("name", sorted(FAST))
def test_fast_path_agrees_with_libyaml(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = FAST[name]
    found, handed_over = _read(text, monkeypatch)
    assert handed_over == 0, f"{name}: the fast path fell back"
    assert found == _norm(libyaml_path(text))


@pytest.mark.parametrize("name", sorted(FALLBACK))
def test_outside_the_subset_libyaml_reads_it(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = FALLBACK[name]
    found, handed_over = _read(text, monkeypatch)
    assert handed_over > 0, f"{name}: the fast path did not fall back"
    assert found == _norm(libyaml_path(text))


def test_fast_document_raises_fallback() -> None:
    assert fastyaml.fast_document("a:\n- 1\n") == ({"a": [1]}, 0, None)
    with pytest.raises(fastyaml.Fallback):
        fastyaml.fast_document("a: &x 1\n")


def test_lines_of_documents_items_and_errors() -> None:
    text = "# c\n---\nkind: List\nitems:\n- a: 1\n-\n  b: 2\n-\n---\nx:\n  y: 1\n z: 2\n---\n\nc: 3\n"
    found = list(fastyaml.load_documents(text))
    assert [(type(d).__name__, d.line) for d in found] == [
        ("RawDocument", 3),
        ("YamlError", 12),
        ("RawDocument", 15),
    ]
    first = found[0]
    assert isinstance(first, RawDocument) and first.item_lines == [5, 7, 8]
    assert _norm(found) == _norm(libyaml_path(text))


def test_duplicate_key_issue_comes_from_the_libyaml_path() -> None:
    (d,) = fastyaml.load_documents("a: 1\nspec:\n  x: 1\n  x: 2\n")
    assert isinstance(d, RawDocument)
    assert d.data == {"a": 1, "spec": {"x": 2}}
    assert [(i.line, i.path) for i in d.issues] == [(4, "spec.x")]


def test_one_odd_document_does_not_change_its_neighbours(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "a: 1\n---\nb: |\n  text\n---\nc: 3\n"
    found, handed_over = _read(text, monkeypatch)
    assert handed_over == 1
    assert [d[1] for d in found] == [1, 3, 6]
    assert found == _norm(libyaml_path(text))


def test_cached_collections_are_fresh_objects() -> None:
    (first,) = fastyaml.load_documents("a: []\nb: {}\nc:\n- []\n")
    assert isinstance(first, RawDocument)
    first.data["a"].append(1)
    first.data["b"]["x"] = 1
    first.data["c"][0].append(2)
    (second,) = fastyaml.load_documents("a: []\nb: {}\nc:\n- []\n")
    assert isinstance(second, RawDocument) and second.data == {"a": [], "b": {}, "c": [[]]}


def test_documents_parse_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(fastyaml, "load_pieces", lambda t, p, m=None: calls.append(t) or load_pieces(t, p, m))
    (doc,) = parse(MANIFEST, "slice.yaml")
    assert isinstance(doc, Document) and doc.line == 2 and doc.obj["spec"]["devices"][0]["name"] == "gpu-0"
    assert calls == []


# -- properties -----------------------------------------------------------------------------------

AWKWARD = [
    "y", "n", "no", "Yes", "off", "ON", "0777", "0x1F", "1e3", "1_000", "+1", "-1", ".5", "3.", ".inf",
    ".nan", "~", "null", "Null", "true", "2026-01-01", "1:30", "", " ", ": ", " #", "#", "a #b", "a: b",
    "'", '"', "it's", "-", "- a", "?", ":", "[", "]", "[]", "{}", "&a", "*a", "!x", "|", ">", "%", "@", "`",
    "<<", "=", "---", "...", "--- x", "\\", "é", "日本", "\t", "a\tb", "\n", "x\ny", " lead", "trail ",
    "a  b", "\x07", "\x85", "\u2028", "\ufeff", "a" * 100, "word " * 25,
]  # fmt: skip
strings = st.sampled_from(AWKWARD) | st.text(max_size=10)
keys = strings | st.sampled_from(["name", "spec", "items", "value"]) | st.integers(-5, 5) | st.booleans()
scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | strings
data = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=25,
)
documents = st.lists(st.dictionaries(keys, data, min_size=1, max_size=5) | data, min_size=1, max_size=3)


@settings(max_examples=100, deadline=None)
@given(documents, st.booleans())
def test_c_dumper_block_style(docs: list[Any], sort_keys: bool) -> None:
    text = yaml.dump_all(docs, Dumper=yaml.CSafeDumper, default_flow_style=False, sort_keys=sort_keys)
    assert _agrees(text), text


@settings(max_examples=100, deadline=None)
@given(
    documents,
    st.sampled_from([2, 3, 4, 6]),
    st.sampled_from([20, 60, 80, 4096]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_safe_dump_settings(
    docs: list[Any], indent: int, width: int, allow_unicode: bool, start: bool, end: bool
) -> None:
    text = yaml.safe_dump_all(
        docs,
        default_flow_style=False,
        indent=indent,
        width=width,
        allow_unicode=allow_unicode,
        explicit_start=start,
        explicit_end=end,
    )
    assert _agrees(text), text


EDITS = [
    " ", "-", ":", "#", "'", '"', "\n", "\t", "[", "]", "{", "}", "&", "*", "!", "|", ">", "?", ",", "%",
    "\\", "a", "0", "---\n", "...\n", "\r", "\r\n", "\x07", "é", "- ", ": ", " #", "  ", "\n  ", "\n- ",
    "<<: ",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A dumped stream (or a manifest) with characters and lines inserted, deleted, moved."""
    if draw(st.booleans()):
        text = MANIFEST + "---\n" + FAST["list items and their lines"]
    else:
        docs = draw(documents)
        text = yaml.safe_dump_all(docs, default_flow_style=False, indent=draw(st.sampled_from([2, 4])))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        how = draw(st.sampled_from(["insert", "delete", "line"]))
        if how == "insert":
            text = text[:pos] + draw(st.sampled_from(EDITS)) + text[pos:]
        elif how == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 3)) :]
        else:
            lines = text.split("\n")
            i = pos % len(lines)
            op = draw(st.sampled_from(["drop", "copy", "indent", "dedent"]))
            if op == "drop":
                del lines[i]
            elif op == "copy":
                lines.insert(i, lines[draw(st.integers(0, len(lines) - 1))])
            elif op == "indent":
                lines[i] = " " + lines[i]
            else:
                lines[i] = lines[i][1:]
            text = "\n".join(lines)
    return text


@settings(max_examples=200, deadline=None)
@given(mutated())
def test_mutated_streams_fall_back_or_agree(text: str) -> None:
    assert _agrees(text), repr(text)
