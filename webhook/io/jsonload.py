"""JSON read as kubectl and the API server read it (Go's encoding/json), with the same bounds as YAML.

- A stream may hold several JSON values one after the other (kubectl's decoder reads them in turn).
- Duplicate keys are issues with their path (`input.duplicate-key`, as in YAML); the last value wins.
- `NaN`/`Infinity` are syntax errors (Python accepts them, Go does not).
- A number of more than 4,300 digits, or nesting deeper than MAX_DEPTH levels, is an error on that
  document (Go cannot hold such a number in a float64 and stops at 10,000 levels; Python would raise).
- An escaped lone surrogate (`"\\ud800"`) becomes U+FFFD, as Go decodes it, with a warning.

The standard library's decoder is used, not orjson: orjson rejects lone surrogates (Go accepts them) and
cannot report duplicate keys; see webhook/io/PARSERS.md for the measurements.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from webhook.io.yamlload import MAX_DEPTH, RawDocument, YamlError, YamlIssue

_WS = re.compile(r"[ \t\n\r]*")
_LONG_NUMBER = re.compile(r"[0-9]{4301,}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Constant(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _Constant(name)


class TooManyObjects(Exception):
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


def load_json_documents(text: str, max_objects: int | None = None) -> Iterator[RawDocument | YamlError]:
    """Every JSON value of the text, in order; after an error nothing more is read. With `max_objects`,
    decoding stops (TooManyObjects) at the first object past that many in the whole text: a bound on
    the memory a decoded body takes (an empty object costs ~64 bytes decoded, 3 bytes as text)."""
    pairs = _Pairs(max_objects)
    decoder = json.JSONDecoder(object_pairs_hook=pairs, parse_constant=_reject_constant)
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    line = 1 + text.count("\n", 0, pos)
    while pos < len(text):
        try:
            data, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            yield YamlError(e.lineno, f"JSON syntax error: {e.msg} (column {e.colno})")
            return
        except _Constant as e:
            where = text.find(str(e), pos)
            yield YamlError(_line(text, where), f"JSON syntax error: {e} is not a JSON value")
            return
        except RecursionError:
            yield YamlError(line, f"document is nested deeper than {MAX_DEPTH} levels")
            return
        except ValueError:  # Python's int-str limit: a number of more than 4,300 digits
            m = _LONG_NUMBER.search(text, pos)
            yield YamlError(
                _line(text, m.start()) if m else line,
                "a number of more than 4300 digits: no Kubernetes field can hold it "
                "(the API server cannot read it either)",
            )
            return
        issues: list[YamlIssue] = []
        deep = _too_deep(data)
        if deep:
            yield YamlError(line, f"document is nested deeper than {MAX_DEPTH} levels")
            return
        if pairs.repeated:
            issues.extend(_duplicates(data, pairs.repeated, line))
            pairs.repeated = []
        if _SURROGATE_ESCAPE.search(text, pos, end):
            data, fixed = _replace_surrogates(data, "")
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
        yield RawDocument(line, data, issues)
        start, pos = pos, _WS.match(text, end).end()  # type: ignore[union-attr]
        line += text.count("\n", start, pos)


def _line(text: str, pos: int) -> int:
    return 1 + text.count("\n", 0, max(pos, 0))


def _too_deep(root: Any) -> bool:
    """Whether containers nest deeper than MAX_DEPTH (an iterative walk over containers only)."""
    stack = [(root, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        v, d = pop()
        if d > MAX_DEPTH:
            return True
        children = v.values() if type(v) is dict else v if type(v) is list else ()
        for c in children:
            t = type(c)
            if t is dict or t is list:
                push((c, d + 1))
    return False


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


def _replace_surrogates(v: Any, path: str) -> tuple[Any, list[str]]:
    """The value with every lone surrogate replaced by U+FFFD, and the paths where that happened."""
    fixed: list[str] = []
    if type(v) is str:
        if _has_surrogate(v):
            fixed.append(path)
            return _fix(v), fixed
        return v, fixed
    if type(v) is list:
        for i, item in enumerate(v):
            new, where = _replace_surrogates(item, f"{path}[{i}]")
            v[i] = new
            fixed.extend(where)
        return v, fixed
    if type(v) is dict:
        out = {}
        for k, item in v.items():
            key = _fix(k) if _has_surrogate(k) else k
            sub = f"{path}.{key}" if path else key
            if key is not k:
                fixed.append(sub)
            new, where = _replace_surrogates(item, sub)
            out[key] = new
            fixed.extend(where)
        return out, fixed
    return v, fixed
