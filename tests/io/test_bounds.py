"""The readers' bounds and semantics in process: YAML aliases as go-yaml v2 counts them, merge keys,
nesting through aliases, piecewise error recovery, JSON as Go reads it, and `parse_bytes` for the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import line_of
from webhook.io.documents import Document, DocumentError, parse, parse_bytes
from webhook.io.files import InputFileError, UnreadableInput, discover_all, read_bytes
from webhook.io.jsonload import load_json_documents
from webhook.io.yamlload import (
    EXPANSION_FLOOR,
    MAX_DEPTH,
    RawDocument,
    YamlError,
    allowed_alias_ratio,
    chunks,
    expansion_limit,
    load_documents,
)


def one(text: str) -> RawDocument | YamlError:
    (d,) = list(load_documents(text))
    return d


def test_alias_ratio_is_go_yamls() -> None:
    assert allowed_alias_ratio(1000) == 0.99
    assert allowed_alias_ratio(4_000_000) == 0.10
    assert allowed_alias_ratio(2_200_000) == pytest.approx(0.99 - 0.89 * 0.5)


def _fan(levels: int, width: int) -> str:
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_aliases_within_go_yamls_limit_are_shared_not_copied() -> None:
    d = one(_fan(3, 10))  # 1,000 strings once expanded: 97% of the decoded nodes come from aliases
    assert isinstance(d, RawDocument)
    assert d.data["a2"][0] is d.data["a1"] and len(d.data["a2"][9][9]) == 10


def test_excessive_aliasing_is_an_error_before_anything_expands() -> None:
    # go-yaml's count passes 99% at the fourth level (10,000 strings), whatever comes after it
    for levels in (4, 9):
        d = one(_fan(levels, 10))
        assert isinstance(d, YamlError) and "excessive aliasing" in d.message and d.line == 4


def test_self_containing_anchor_is_an_error() -> None:
    for text in ("a: &x [1, *x]\n", "a: &x {b: {c: *x}}\n", "&x [*x]\n"):
        d = one(text)
        assert isinstance(d, YamlError) and d.message == "anchor 'x' value contains itself"


def test_unknown_alias_is_an_error() -> None:
    d = one("a: 1\nb: *nope\n")
    assert isinstance(d, YamlError) and d.line == 2 and "unknown anchor 'nope'" in d.message


def test_nesting_through_an_alias_counts() -> None:
    deep = "[" * 6000 + "]" * 6000
    ok = one(f"a: &d {deep}\nb: [[[*d]]]\n")
    assert isinstance(ok, RawDocument)
    bad = one(f"a: &d {deep}\nb: {'[' * 4500}*d{']' * 4500}\n")  # 1 + 4,500 + 6,000 levels
    assert isinstance(bad, YamlError) and f"deeper than {MAX_DEPTH}" in bad.message


def test_alias_expansion_is_bounded_in_bytes_before_anything_expands() -> None:
    """One 100 KB string aliased 30,000 times passes go-yaml's node ratio (3 GB as JSON): an error at the
    alias that passes 3 MiB, while the string is still shared; 31 aliases (3.1 MB) are fine."""
    big = "x" * 100_000
    text = f'a: &b "{big}"\nl:\n' + "- *b\n" * 30_000
    d = one(text)
    assert isinstance(d, YamlError) and d.line == 33  # the 31st alias: 32 copies of 100,002 bytes
    assert d.message.startswith(f"aliases expand this document to more than {3 << 20:,} bytes")
    ok = one(f'a: &b "{big}"\nl:\n' + "- *b\n" * 30)
    assert isinstance(ok, RawDocument) and all(x is ok.data["a"] for x in ok.data["l"])
    assert EXPANSION_FLOOR == 3 << 20 and expansion_limit(len(text)) == 3 << 20


def test_expanded_bytes_count_through_nested_anchors_and_merge_keys() -> None:
    s = "y" * 200_000
    # 4 x 4 aliases of 200 KB: 3.2 MB at the fourth alias of l2, with only a handful of nodes
    nested = f"s: &s {s}\nl1: &l1 [*s, *s, *s, *s]\nl2: [*l1, *l1, *l1, *l1]\n"
    d = one(nested)
    assert isinstance(d, YamlError) and d.line == 3 and "aliases expand" in d.message
    assert isinstance(one(nested.replace("*l1, *l1, *l1, *l1", "*l1, *l1")), RawDocument)
    # the text is the subject: built by concatenation, its flow maps' braces as written
    merged = "m: &m {k: " + s + "}\n" + "".join(f"o{i}: " + "{<<: *m}\n" for i in range(20))
    d = one(merged)
    assert isinstance(d, YamlError) and "aliases expand" in d.message
    assert d.line == line_of(merged, "o14: ")  # the 15th merge


def test_a_large_document_may_expand_to_four_times_its_own_size() -> None:
    """A List in CI may be larger than 3 MiB: its aliases may add up to 4 times its text."""
    item = "- {kind: ConfigMap, data: {v: " + "z" * 1000 + "}, shared: *s}\n"
    head = "kind: List\ns: &s [" + ", ".join(["w" * 1000] * 3) + "]\nitems:\n"
    text = head + item * 2000  # 2 MB of text, 6 MB of aliases: 8 MB written out
    d = one(text)
    assert isinstance(d, RawDocument) and len(d.data["items"]) == 2000
    assert expansion_limit(len(text)) == 4 * len(text) > 8_000_000
    d = one(text.replace("shared: *s", "shared: [*s, *s]"))  # 14 MB written out: more than 4 times
    assert isinstance(d, YamlError) and "aliases expand" in d.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("b: &b {x: 1, z: 2}\no:\n  <<: *b\n  z: 3\n", {"x": 1, "z": 3}),  # explicit after merge wins
        ("b: &b {x: 1, z: 2}\no:\n  z: 3\n  <<: *b\n", {"x": 1, "z": 2}),  # go-yaml v2: later wins
        ("o:\n  <<: [{x: 1}, {x: 2, w: 2}]\n", {"x": 1, "w": 2}),  # earlier maps take precedence
        ("o:\n  <<: {x: 1}\n  !!merge <<: {w: 2}\n", {"x": 1, "w": 2}),
    ],
)
def test_merge_keys_as_go_yaml_v2(text: str, expected: dict[str, int]) -> None:
    d = one(text)
    assert isinstance(d, RawDocument) and d.data["o"] == expected and d.issues == []


@pytest.mark.parametrize("value", ["1", "[1, {a: 1}]", "'x'"])
def test_merge_of_a_non_map_is_an_error(value: str) -> None:
    d = one(f"o:\n  <<: {value}\n")
    assert isinstance(d, YamlError) and "map merge requires map" in d.message


def test_collection_keys_are_errors() -> None:
    for text in ("? [a]\n: 1\n", "? {a: 1}\n: 1\n"):
        d = one(text)
        assert isinstance(d, YamlError) and "key must be a scalar" in d.message


def test_duplicate_keys_with_paths_inside_lists() -> None:
    d = one("kind: List\nitems:\n- metadata:\n    name: a\n    name: b\n")
    assert isinstance(d, RawDocument)
    assert [(i.line, i.path, i.rule) for i in d.issues] == [
        (5, "items[0].metadata.name", "input.duplicate-key")
    ]
    (doc,) = parse("kind: List\nitems:\n- metadata:\n    name: a\n    name: b\n", "x.yaml")
    assert isinstance(doc, Document) and [i.path for i in doc.issues] == ["metadata.name"]


def test_pieces_and_recovery() -> None:
    text = "%YAML 1.1\n---\na: 1\n---\nb: [1\n---\nc: 3\n--- |\n  block\n---\nd: 4\n"
    assert [text[s:e].split("\n", 1)[0] for s, e in chunks(text)] == [
        "%YAML 1.1",
        "---",
        "---",
        "--- |",
        "---",
    ]
    out = list(load_documents(text))
    assert [(type(d).__name__, d.line) for d in out] == [
        ("RawDocument", 3),
        ("YamlError", 6),  # the error costs its own piece only
        ("RawDocument", 7),
        ("RawDocument", 8),
        ("RawDocument", 11),
    ]


def test_reader_errors_name_their_line() -> None:
    out = list(load_documents("a: 1\n---\nb: 2\nc: x\x07y\n---\nd: é\n"))
    assert isinstance(out[1], YamlError) and out[1].line == 4 and "#x0007" in out[1].message
    assert isinstance(out[2], RawDocument) and out[2].data == {"d": "é"}


def json_docs(text: str) -> list[RawDocument | YamlError]:
    return list(load_json_documents(text))


def test_json_stream_of_values_with_lines() -> None:
    out = json_docs('{"a": 1}\n\n{"b": 2} {"c": 3}\n')
    assert [(d.line, d.data) for d in out if isinstance(d, RawDocument)] == [
        (1, {"a": 1}),
        (3, {"b": 2}),
        (3, {"c": 3}),
    ]


def test_json_errors() -> None:
    cases = {
        '{"a": NaN}': "NaN is not a JSON value",
        '{"a": -Infinity}': "-Infinity is not a JSON value",
        '{"a": 1' + "0" * 4300 + "}": "more than 4300 digits",
        "[" * 10_001 + "]" * 10_001: f"deeper than {MAX_DEPTH}",
        "[" * 100_000 + "]" * 100_000: f"deeper than {MAX_DEPTH}",
        '{"a": 1,}': "JSON syntax error",
    }
    for text, message in cases.items():
        (d,) = json_docs(text)
        assert isinstance(d, YamlError) and message in d.message, (text[:20], d)
    (ok,) = json_docs('{"a": 1' + "0" * 4299 + "}")
    assert isinstance(ok, RawDocument) and ok.data["a"] == 10**4299


def test_json_duplicates_and_surrogates() -> None:
    (d,) = json_docs(
        '{"m": {"a": 1, "a": 2, "l": [{"b": 1, "b": 2}]}, "s": "x\\ud800", "\\udc00": ["\\ud83d\\ude00"]}'
    )
    assert isinstance(d, RawDocument)
    assert d.data == {"m": {"a": 2, "l": [{"b": 2}]}, "s": "x\ufffd", "\ufffd": ["\U0001f600"]}
    assert sorted((i.path, i.rule) for i in d.issues) == [
        ("m.a", "input.duplicate-key"),
        ("m.l[0].b", "input.duplicate-key"),
        ("s", "input.invalid-unicode"),
        ("\ufffd", "input.invalid-unicode"),
    ]


def test_a_file_starting_with_a_brace_falls_back_to_yaml_whatever_its_suffix() -> None:
    # kubectl's YAMLOrJSONDecoder reads a stream that is not JSON as YAML, .json files included
    for name in ("pod.yaml", "pod.json"):
        (doc,) = parse("{apiVersion: v1, kind: Pod, metadata: {name: a}}\n", name)
        assert isinstance(doc, Document) and doc.obj["metadata"] == {"name": "a"}
    (err,) = parse("{apiVersion: v1\n", "pod.json")  # neither JSON nor YAML: the JSON error
    assert isinstance(err, DocumentError) and "JSON syntax error" in err.message


def test_parse_bytes_for_the_server() -> None:
    body = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}'
    (doc,) = parse_bytes(body)
    assert isinstance(doc, Document) and doc.source == "<request>"
    (too_big,) = parse_bytes(body, max_bytes=10)
    assert isinstance(too_big, DocumentError) and too_big.rule == "input.too-large"
    (latin1,) = parse_bytes(b"kind: caf\xe9\n")
    assert isinstance(latin1, DocumentError) and "not UTF-8" in latin1.message
    deep = parse_bytes(b"x: " + b"[" * 100_000 + b"]" * 100_000)
    assert isinstance(deep[0], DocumentError) and "deeper" in deep[0].message
    assert parse_bytes(b"") == []


def test_read_bytes_bounds(tmp_path: Path) -> None:
    f = tmp_path / "f.yaml"
    f.write_bytes(b"x" * 100)
    assert read_bytes(str(f), 100) == b"x" * 100
    with pytest.raises(InputFileError, match="larger than 99 bytes"):
        read_bytes(str(f), 99)
    with pytest.raises(UnreadableInput, match="character device"):
        read_bytes("/dev/zero", 100)
    with pytest.raises(UnreadableInput, match="No such file"):
        read_bytes(str(tmp_path / "missing.yaml"))


def test_discovery_skips_special_entries_and_hidden_directories(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text("a: 1\n")
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "c.yaml").write_text("a: 1\n")
    (tmp_path / "dangling.yaml").symlink_to("nowhere.yaml")
    (tmp_path / "link.yml").symlink_to("b.yaml")
    found = discover_all([str(tmp_path)])
    assert found.files == [str(tmp_path / n) for n in ("a.json", "b.yaml", "link.yml")]
    assert [(s.path, "No such file" in s.reason) for s in found.skipped] == [
        (str(tmp_path / "dangling.yaml"), True)
    ]
    with pytest.raises(UnreadableInput, match="no such file or directory"):
        discover_all([str(tmp_path / "missing")])


def _walk_reference(top: str) -> tuple[list[str], list[str]]:
    """What the recursive os.walk version found: (files, skipped paths)."""
    import os
    import stat

    files, skipped = [], []
    for root, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            if name.endswith((".yaml", ".yml", ".json")):
                path = os.path.join(root, name)
                try:
                    (files if stat.S_ISREG(os.stat(path).st_mode) else skipped).append(path)
                except OSError:
                    skipped.append(path)
    return sorted(files), sorted(skipped)


def test_discovery_walks_as_os_walk_did(tmp_path: Path) -> None:
    import os

    for d in ("a/b/c", "a/.hidden/x", "a-b", "z/y", "a/b/c2"):
        (tmp_path / d).mkdir(parents=True)
    for f in (
        "a/b/c/1.yaml",
        "a/.hidden/x/2.yaml",
        "a-b/3.json",
        "z/y/4.yml",
        "a/5.yaml",
        "a/b/c2/6.txt",
        ".7.yaml",
        "a/b/c2/8.yaml",
    ):
        (tmp_path / f).write_text("a: 1\n")
    (tmp_path / "a/b/loop").symlink_to("..")  # a symlinked directory: not entered
    (tmp_path / "z/dir.yaml").symlink_to("y")  # a symlink to a directory named like a manifest
    (tmp_path / "z/self.yaml").symlink_to("self.yaml")  # a looping symlink
    (tmp_path / "z/gone.json").symlink_to("nowhere")
    os.mkfifo(tmp_path / "a/b/pipe.yaml")
    found = discover_all([str(tmp_path)])
    files, skipped = _walk_reference(str(tmp_path))
    assert found.files == files and [s.path for s in found.skipped] == skipped
    assert [os.path.relpath(f, tmp_path) for f in found.files] == [
        ".7.yaml",
        "a-b/3.json",
        "a/5.yaml",
        "a/b/c/1.yaml",
        "a/b/c2/8.yaml",
        "z/y/4.yml",
    ]
    assert [os.path.relpath(s.path, tmp_path) for s in found.skipped] == [
        "a/b/pipe.yaml",
        "z/gone.json",
        "z/self.yaml",
    ]


def test_pieces_read_together_give_what_each_piece_alone_gives() -> None:
    from webhook.io.yamlload import load_chunk, pieces_of

    docs = [
        "a: 1\n",
        "b: [1\n",
        "c: 3\n...\nd: [\n",
        "e: 5\n",
        "- x\n- {y: 1, y: 2}\n",
        "f: !!int x\n",
        "g: *h\n",
    ]
    text = "".join(f"---\n{d}" for d in docs * 50)
    alone = [d for s, e, line in pieces_of(text) for d in load_chunk(text[s:e], line)]
    together = list(load_documents(text))
    assert [repr(d) for d in together] == [repr(d) for d in alone]
    assert sum(isinstance(d, YamlError) for d in together) == 3 * 50
