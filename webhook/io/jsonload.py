"""JSON read as kubectl and the API server read it (Go's encoding/json), with the same bounds as YAML.

- A stream may hold several JSON values one after the other (kubectl's decoder reads them in turn).
- Duplicate keys are issues with their path (`input.duplicate-key`, as in YAML); the last value wins.
- `NaN`/`Infinity` are syntax errors (Python accepts them, Go does not).
- A number of more than 4,300 digits, or nesting deeper than MAX_DEPTH levels (Go's 10,000), is an error
  on that document (Go cannot hold such a number in a float64; Python would raise). A value nested
  deeper than the standard library's C decoder reaches (~1,000 levels) is decoded by `deepjson`, with
  an explicit stack: never a RecursionError, and no change to the interpreter's recursion limit.
- `read_stream` reads a stream as kubectl's YAMLOrJSONDecoder does: JSON values one after the other,
  and where one is not JSON after the first, the rest as YAML (after two, a JSON error is final).
- An escaped lone surrogate (`"\\ud800"`) becomes U+FFFD, as Go decodes it, with a warning.

The standard library's decoder is used, not orjson: orjson rejects lone surrogates (Go accepts them) and
cannot report duplicate keys; see webhook/io/PARSERS.md for the measurements.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from webhook.io import deepjson
from webhook.io.yamlload import MAX_DEPTH, RawDocument, YamlError, YamlIssue, too_deep_message
from webhook.model.errors import DraguardError
from webhook.model.plain import nested_deeper

_WS = re.compile(r"[ \t\n\r]*")
_BLANKS_TO_EOL = re.compile(r"[^\S\n]*\n?")
_LONG_NUMBER = re.compile(r"[0-9]{4301,}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Constant(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _Constant(name)


@dataclass
class Final(YamlError):
    """A JSON error that reading the text as YAML cannot change (`read_stream` does not try): a number
    Python cannot hold (valid JSON syntax: Go's decoder reads it, so kubectl does not switch to YAML),
    nesting past the limit (go-yaml stops at the same depth)."""

    bounded: bool = True


class TooManyObjects(DraguardError):
    """More JSON objects than `max_objects` (the decoding stopped there)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} JSON objects")
        self.limit = limit


class _Pairs:
    """object_pairs_hook: a dict, last value winning; objects with repeated keys are remembered."""

    def __init__(self, max_objects: int | None = None) -> None:
        self.repeated: list[tuple[dict[str, Any], list[str]]] = []
        self.left = max_objects if max_objects is not None else -1
        self.limit = max_objects or 0

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if self.left >= 0:
            if self.left == 0:
                raise TooManyObjects(self.limit)
            self.left -= 1
        d = dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            again = []
            for k, _ in pairs:
                if k in seen:
                    again.append(k)
                seen.add(k)
            self.repeated.append((d, again))
        return d


def load_json_documents(
    text: str, max_objects: int | None = None, max_depth: int = MAX_DEPTH
) -> Iterator[RawDocument | YamlError]:
    """Every JSON value of the text, in order; after an error nothing more is read. With `max_objects`,
    decoding stops (TooManyObjects) at the first object past that many in the whole text: a bound on
    the memory a decoded body takes (an empty object costs ~64 bytes decoded, 3 bytes as text).
    Containers may nest `max_depth` levels."""
    for doc, _ in load_json_values(text, max_objects, max_depth):
        yield doc


def load_json_values(
    text: str, max_objects: int | None = None, max_depth: int = MAX_DEPTH
) -> Iterator[tuple[RawDocument | YamlError, int]]:
    """`load_json_documents`, each value with the offset where it ends (an error: where it was found)."""
    pairs = _Pairs(max_objects)
    decoder = json.JSONDecoder(object_pairs_hook=pairs, parse_constant=_reject_constant)
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    line = 1 + text.count("\n", 0, pos)
    while pos < len(text):
        try:
            data, end = _decode(decoder, pairs, text, pos, max_depth)
        except json.JSONDecodeError as e:
            yield YamlError(e.lineno, f"JSON syntax error: {e.msg} (column {e.colno})"), e.pos
            return
        except (_Constant, deepjson.Constant) as e:
            where = text.find(str(e), pos)
            yield YamlError(_line(text, where), f"JSON syntax error: {e} is not a JSON value"), where
            return
        except deepjson.TooDeep as e:
            yield Final(_line(text, e.pos), too_deep_message(max_depth, e.path)), e.pos
            return
        except ValueError:  # Python's int-str limit: a number of more than 4,300 digits
            m = _LONG_NUMBER.search(text, pos)
            yield (
                Final(
                    _line(text, m.start()) if m else line,
                    "a number of more than 4300 digits: no Kubernetes field can hold it "
                    "(the API server cannot read it either)",
                ),
                m.start() if m else pos,
            )
            return
        issues: list[YamlIssue] = []
        if nested_deeper(data, max_depth):  # only if the C decoder went past it (a raised recursion limit)
            yield Final(line, too_deep_message(max_depth)), pos
            return
        if pairs.repeated:
            issues.extend(_duplicates(data, pairs.repeated, line))
            pairs.repeated = []
        if _SURROGATE_ESCAPE.search(text, pos, end):
            data, fixed = _replace_surrogates(data)
            issues.extend(
                YamlIssue(
                    line,
                    path,
                    "a lone UTF-16 surrogate escape is not a character: "
                    "kubectl and the API server read it as U+FFFD",
                    "input.invalid-unicode",
                )
                for path in fixed
            )
        yield RawDocument(line, data, issues), end
        start, pos = pos, _WS.match(text, end).end()  # type: ignore[union-attr]
        line += text.count("\n", start, pos)


def _decode(decoder: json.JSONDecoder, pairs: _Pairs, text: str, pos: int, max_depth: int) -> tuple[Any, int]:
    """One value: the standard library's C decoder, or, for a value nested deeper than it can recurse,
    `deepjson` (the objects decoded before the C decoder gave up are not counted twice)."""
    left = pairs.left
    try:
        return decoder.raw_decode(text, pos)
    except RecursionError:
        pairs.left = left
        pairs.repeated = []
        return deepjson.decode(text, pos, pairs, max_depth)


_TRAILING = (
    "what follows the JSON object is neither JSON nor a YAML document (kubectl rejects it too): remove it"
)


@dataclass
class JsonStream:
    """How kubectl's YAMLOrJSONDecoder reads a stream that starts with `{` (see `read_stream`)."""

    documents: list[RawDocument | YamlError] = field(default_factory=list)  # the JSON values read
    yaml_from: int | None = None  # offset of the rest, to read as YAML (None: nothing is left)
    error: YamlError | None = None  # the JSON error that handed the rest to YAML


def read_stream(text: str) -> JsonStream:
    """The JSON values at the start of `text` (which starts with `{`), read as kubectl reads a file or
    stdin (k8s.io/apimachinery's YAMLOrJSONDecoder): values one after the other; where the first or
    second is not JSON, the rest of the stream (from the start, or after the first value and the blanks
    up to its line's end) is read as YAML, and if its first YAML document fails too, the JSON error is
    the answer; from the third value on, a JSON error is final. So `{...}}`, `{...} xyz` are errors,
    `{...}` followed by YAML documents is not."""
    out = JsonStream()
    first_end = 0
    for doc, end in load_json_values(text):
        if isinstance(doc, YamlError):
            if len(out.documents) > 1 or isinstance(doc, Final):
                out.documents.append(doc)  # an unambiguous JSON stream, or JSON all the same: final
                return out
            # the first value: all of the stream is YAML; the second: what follows the first
            out.yaml_from = _after_blanks_to_eol(text, first_end) if out.documents else 0
            out.error = doc
            if out.documents:
                out.error = YamlError(doc.line, f"{doc.message}: {_TRAILING}")
            return out
        if not out.documents:
            first_end = end
        out.documents.append(doc)
    return out


def _after_blanks_to_eol(text: str, pos: int) -> int:
    """`pos` moved over blanks up to and including the first newline (YAMLOrJSONDecoder's
    consumeWhitespace before it hands the rest to the YAML decoder)."""
    m = _BLANKS_TO_EOL.match(text, pos)
    return m.end() if m else pos


def _line(text: str, pos: int) -> int:
    return 1 + text.count("\n", 0, max(pos, 0))


def _duplicates(root: Any, repeated: list[tuple[dict[str, Any], list[str]]], line: int) -> list[YamlIssue]:
    """Issues for the repeated keys, with the paths of the objects that hold them."""
    wanted = {id(d): keys for d, keys in repeated}
    out: list[YamlIssue] = []
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack and wanted:
        v, path = stack.pop()
        if type(v) is dict:
            keys = wanted.pop(id(v), None)
            for k in keys or ():
                out.append(YamlIssue(line, f"{path}.{k}" if path else k, f'duplicate key "{k}"'))
            stack.extend((c, f"{path}.{k}" if path else k) for k, c in v.items() if type(c) in (dict, list))
        elif type(v) is list:
            stack.extend((c, f"{path}[{i}]") for i, c in enumerate(v) if type(c) in (dict, list))
    out.sort(key=lambda i: i.path)
    return out


def _fix(s: str) -> str:
    return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _replace_surrogates(root: Any) -> tuple[Any, list[str]]:
    """The value with every lone surrogate replaced by U+FFFD (in place, but for a string at the top), and
    the paths where that happened: an explicit stack, whatever the depth."""
    fixed: list[str] = []
    if type(root) is str:
        return (_fix(root), [""]) if _has_surrogate(root) else (root, [])
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        v, path = stack.pop()
        if type(v) is list:
            for i, item in enumerate(v):
                sub = f"{path}[{i}]"
                if type(item) is str:
                    if _has_surrogate(item):
                        v[i] = _fix(item)
                        fixed.append(sub)
                elif type(item) is list or type(item) is dict:
                    stack.append((item, sub))
        elif type(v) is dict:
            if any(
                _has_surrogate(k) for k in v
            ):  # rebuilt in place, in order (a repaired key may repeat one)
                pairs = list(v.items())
                v.clear()
                for k, item in pairs:
                    if _has_surrogate(k):
                        k = _fix(k)
                        fixed.append(f"{path}.{k}" if path else k)
                    v[k] = item
            for k, item in v.items():
                sub = f"{path}.{k}" if path else k
                if type(item) is str:
                    if _has_surrogate(item):
                        v[k] = _fix(item)
                        fixed.append(sub)
                elif type(item) is list or type(item) is dict:
                    stack.append((item, sub))
    fixed.sort()
    return root, fixed
