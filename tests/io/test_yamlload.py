"""YAML is read as kubectl reads it (go-yaml v2 scalars) with document and item lines."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from webhook.io.scalars import _FLOAT, YAML11_BOOLEANS
from webhook.io.yamlload import RawDocument, YamlError, load_documents


def docs(text: str) -> list[RawDocument | YamlError]:
    return list(load_documents(text))


def test_yaml11_scalars_like_go_yaml_v2() -> None:
    (d,) = docs(
        "a: y\nb: n\nc: 'y'\nd: off\ne: 0777\nf: 0x1F\ng: 1.5\nh: 2026-01-01\ni: ~\nj: 10Gi\nk: 1e3\n"
    )
    assert isinstance(d, RawDocument)
    assert d.data == {
        "a": True,
        "b": False,
        "c": "y",
        "d": False,
        "e": 511,
        "f": 31,
        "g": 1.5,
        "h": "2026-01-01",
        "i": None,
        "j": "10Gi",
        "k": 1000.0,
    }


def test_document_lines_skip_comments_and_separators() -> None:
    text = "# header\na: 1\n---\n# comment\n\nb: 2\n---\nc: 3\n"
    assert [d.line for d in docs(text)] == [2, 6, 8]


def test_list_item_lines() -> None:
    (d,) = docs("kind: List\nitems:\n- a: 1\n  b: 2\n- c: 3\n")
    assert isinstance(d, RawDocument)
    assert d.item_lines == [3, 5]


def test_syntax_error_reports_line_and_resumes_at_next_document() -> None:
    out = docs("a: 1\n---\nb: [1, 2\nc: 3\n---\nd: 4\n")
    assert isinstance(out[0], RawDocument) and out[0].data == {"a": 1}
    assert isinstance(out[1], YamlError) and out[1].line == 4 and "syntax error" in out[1].message
    assert isinstance(out[2], RawDocument) and out[2].data == {"d": 4} and out[2].line == 6


def test_duplicate_keys_are_reported_with_path_and_line() -> None:
    (d,) = docs("spec:\n  driver: a\n  driver: b\n")
    assert isinstance(d, RawDocument)
    assert d.data == {"spec": {"driver": "b"}}
    assert [(i.line, i.path) for i in d.issues] == [(3, "spec.driver")]


def test_anchors_and_merge_keys() -> None:
    (d,) = docs("base: &b {x: 1, z: 2}\nother:\n  <<: *b\n  z: 3\n")
    assert isinstance(d, RawDocument)
    assert d.data["other"] == {"x": 1, "z": 3}


def test_y_and_n_keys_are_booleans_as_in_kubectl() -> None:
    (d,) = docs("y: 1\nn: 2\n")
    assert isinstance(d, RawDocument)
    assert d.data == {"true": 1, "false": 2}


def test_explicit_tags() -> None:
    (d,) = docs("a: !!str 123\nb: !!int '7'\n")
    assert isinstance(d, RawDocument)
    assert d.data == {"a": "123", "b": 7}


# PyYAML does not quote y/n or 0E0 (a bool and a float for go-yaml, plain strings for PyYAML): this
# property is about structure, so leave out strings the two resolvers read differently.
text = st.text(max_size=12).filter(lambda s: s not in YAML11_BOOLEANS and not _FLOAT.fullmatch(s))
plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**62), 2**62) | text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(text.filter(bool), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(plain)
def test_round_trip_of_safe_dump(value: object) -> None:
    # PyYAML quotes every string that YAML 1.1 would read as something else, so the values survive.
    text = yaml.safe_dump({"v": value})
    (d,) = docs(text)
    assert isinstance(d, RawDocument)
    expected = yaml.safe_load(text)["v"]
    assert d.data == {"v": _json_keys(expected)}


def _json_keys(v: object) -> object:
    if isinstance(v, dict):
        return {(k if isinstance(k, str) else str(k)): _json_keys(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_keys(x) for x in v]
    return v


def test_too_deep_nesting_is_an_error_not_a_recursion_crash() -> None:
    from webhook.io.documents import DocumentError, parse

    flow = "kind: Pod\nspec: " + "[" * 3000 + "]" * 3000 + "\n---\nkind: After\n"
    block = "kind: Pod\nspec:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(400)) + "---\nkind: After\n"
    for text in (flow, block):
        out = list(parse(text, "deep.yaml"))
        # newer PyYAML releases stop flow nesting themselves ("exceeded maximum nesting depth")
        assert isinstance(out[0], DocumentError) and "nest" in out[0].message
        assert out[-1].obj == {"kind": "After"}  # type: ignore[union-attr]
