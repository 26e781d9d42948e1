"""Plain decoded data (dicts, lists, scalars: what a manifest or a request body decodes to), copied and
written out without recursion: a valid object may nest 10,000 levels (Go's limit, which the readers
apply), far past Python's recursion limit, and library code does not raise that limit (it is the
whole process's).

    deep_copy(obj)                          # copy.deepcopy(obj) for plain data, at any depth
    deep_equal(a, b)                        # a == b, at any depth
    nested_deeper(obj, 200)                 # whether containers nest more than 200 levels
    json_dumps(obj, indent=2)               # json.dumps(obj, ...), at any depth
    record_json(report, {"device_class": "class"})  # a report's dataclasses as JSON data, camelCase keys
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from webhook.model.jsontext import json_text

__all__ = ["as_dict", "as_list", "deep_copy", "deep_equal", "json_dumps", "nested_deeper", "record_json"]

T = TypeVar("T")


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty one (a field of untrusted input read defensively)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """`value` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def deep_copy(value: T) -> T:
    """A copy of `value` sharing nothing mutable with it: dicts and lists are copied level by level with
    an explicit stack; anything else that is not a scalar goes to `copy.deepcopy` (shared references
    inside plain data are copied once each, as plain data has none: YAML aliases are expanded)."""
    if type(value) is dict:
        root: Any = {}
    elif type(value) is list:
        root = []
    else:
        return _leaf(value)
    stack: list[tuple[Any, Any]] = [(value, root)]
    pop, push = stack.pop, stack.append
    while stack:
        src, dst = pop()
        if type(src) is dict:
            for k, v in src.items():
                t = type(v)
                if t is dict:
                    new: Any = {}
                    push((v, new))
                elif t is list:
                    new = []
                    push((v, new))
                else:
                    new = _leaf(v)
                dst[k] = new
        else:
            for v in src:
                t = type(v)
                if t is dict:
                    new = {}
                    push((v, new))
                elif t is list:
                    new = []
                    push((v, new))
                else:
                    new = _leaf(v)
                dst.append(new)
    return root  # type: ignore[no-any-return]


def deep_equal(a: Any, b: Any) -> bool:
    """`a == b` (dicts, lists and what they hold compared level by level with an explicit stack)."""
    stack: list[tuple[Any, Any]] = [(a, b)]
    pop, push = stack.pop, stack.append
    while stack:
        x, y = pop()
        if x is y:
            continue
        tx, ty = type(x), type(y)
        if tx is dict and ty is dict:
            if len(x) != len(y):
                return False
            for k, v in x.items():
                if k not in y:
                    return False
                push((v, y[k]))
        elif tx is list and ty is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether dicts and lists nest more than `limit` levels in `value` (the top one is level 1): for
    the consumers that recurse (PyYAML's and ruamel's writers) to refuse a value before they start."""
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        v, d = pop()
        if d > limit:
            return True
        children = v.values() if type(v) is dict else v if type(v) is list else ()
        for c in children:
            if type(c) is dict or type(c) is list:
                push((c, d + 1))
    return False


_IMMUTABLE = (str, int, float, bool, type(None))


def _leaf(v: Any) -> Any:
    return v if isinstance(v, _IMMUTABLE) else copy.deepcopy(v)


def json_dumps(
    value: Any,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    allow_nan: bool = True,
    indent: int | str | None = None,
    ensure_ascii: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """`json.dumps(value, ...)` with these arguments; a value nested deeper than its C encoder recurses
    is written from an explicit stack instead (the same text; what is no JSON value there is written as
    its `str`)."""
    try:
        return json.dumps(
            value,
            separators=separators,
            sort_keys=sort_keys,
            allow_nan=allow_nan,
            indent=indent,
            ensure_ascii=ensure_ascii,
            default=default,
        )
    except RecursionError:
        return json_text(value, separators, sort_keys, allow_nan, indent, ensure_ascii)


def record_json(value: Any, names: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    """One of draguard's own report records (a dataclass holding scalars, dicts, records and lists of
    them, a few levels deep: never input data) as JSON data: each field under its name in camelCase
    (`reserved_for` → `reservedFor`) unless `names` renames it (None: left out); a nested record with a
    `to_dict()` writes itself."""
    names = names or {}
    out: dict[str, Any] = {}
    for f in dataclasses.fields(value):
        key = names.get(f.name, _camel(f.name))
        if key is not None:
            out[key] = _field_json(getattr(value, f.name), names)
    return out


def _field_json(v: Any, names: Mapping[str, str | None]) -> Any:
    to_dict = getattr(v, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(v, list):
        return [_field_json(x, names) for x in v]
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return record_json(v, names)
    return v


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)
