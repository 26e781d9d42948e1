"""A validator for the subset of JSON Schema the driver configuration schemas use (schemas/drivers/): `type`,
`properties`, `required`, `additionalProperties`, `enum`, `const`, `pattern` (RE2), `minLength`, `minimum`,
`maximum`, `items`, `anyOf`, `oneOf` and local `$ref`s into `$defs`. Errors carry field paths and the API
server's wording. jsonschema (a test dependency only) is the reference: tests/model/test_jsonsubset.py
checks that both agree. An unsupported keyword is refused when a schema is loaded (`unsupported`)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

from webhook.model.path import Path

SUPPORTED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "const",
        "pattern",
        "minLength",
        "minimum",
        "maximum",
        "items",
        "anyOf",
        "oneOf",
        "$ref",
        "$defs",
        # annotations: no effect on validation
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "x-draguard",
    }
)
TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_MAX_DEPTH = 64  # a schema's `$ref`s nest no deeper (a cycle in a schema is refused as too deep)


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One place where a value does not fit its schema."""

    field: Path
    message: str


def json_type(value: Any) -> str:
    """The JSON type of a parsed value (an integral float is an integer, as JSON Schema counts it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 120 else value[:117] + "...")
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern)


def _fits_type(value: Any, want: str) -> bool:
    got = json_type(value)
    return got == want or (want == "number" and got == "integer")


def unsupported(schema: Any, where: str = "") -> list[str]:
    """What of `schema` this validator cannot check (keywords outside the subset, bad types or
    patterns, `$ref`s that do not point into `$defs`): empty when the schema is usable."""
    out: list[str] = []
    defs = schema.get("$defs", {}) if isinstance(schema, Mapping) else {}

    def walk(s: Any, at: str) -> None:
        if isinstance(s, bool):
            return
        if not isinstance(s, Mapping):
            out.append(f"{at or '<root>'}: a schema is an object or a boolean")
            return
        for key in s:
            if key not in SUPPORTED:
                out.append(f"{at or '<root>'}: keyword {key!r} is not supported")
        types = s.get("type")
        for t in [types] if isinstance(types, str) else types or []:
            if t not in TYPES:
                out.append(f"{at or '<root>'}: type {t!r} is not a JSON Schema type")
        if "pattern" in s:
            try:
                _compiled(str(s["pattern"]))
            except Exception as e:  # re2.error
                out.append(f"{at or '<root>'}: pattern {s['pattern']!r} is not RE2: {e}")
        ref = s.get("$ref")
        if ref is not None and (
            not isinstance(ref, str) or not ref.startswith("#/$defs/") or ref[8:] not in defs
        ):
            out.append(f"{at or '<root>'}: $ref {ref!r} is not a reference into this schema's $defs")
        for name, sub in (s.get("properties") or {}).items():
            walk(sub, f"{at}.properties.{name}")
        for name, sub in (s.get("$defs") or {}).items():
            walk(sub, f"{at}.$defs.{name}")
        for key in ("additionalProperties", "items"):
            if key in s:
                walk(s[key], f"{at}.{key}")
        for key in ("anyOf", "oneOf"):
            for i, sub in enumerate(s.get(key) or []):
                walk(sub, f"{at}.{key}[{i}]")

    walk(schema, "")
    return out


def validate(value: Any, schema: Mapping[str, Any] | bool, path: Path) -> list[SchemaError]:
    """Every place where `value` does not fit `schema` (a schema `unsupported` accepts), at its path."""
    root = schema if isinstance(schema, Mapping) else {}
    return list(_check(value, schema, path, root, 0))


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Mapping[str, Any] | bool:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    if depth > _MAX_DEPTH:
        raise ValueError("schema $refs nest too deep")
    target: Mapping[str, Any] | bool = root["$defs"][ref[len("#/$defs/") :]]
    return target


def _check(
    value: Any, schema: Mapping[str, Any] | bool, path: Path, root: Mapping[str, Any], depth: int
) -> Iterator[SchemaError]:
    if schema is True:
        return
    if schema is False:
        yield SchemaError(path, "Forbidden: no value is allowed here")
        return
    if "$ref" in schema:
        yield from _check(value, _resolve(schema, root, depth), path, root, depth + 1)
        if len(schema) == 1:
            return
        # siblings of $ref apply too (draft 2019-09 and later)
        schema = {k: v for k, v in schema.items() if k != "$ref"}
    types = schema.get("type")
    if types is not None:
        wanted: Sequence[str] = [types] if isinstance(types, str) else types
        if not any(_fits_type(value, t) for t in wanted):
            yield SchemaError(path, f"Invalid value: {_render(value)}: must be of type {' or '.join(wanted)}")
            return  # nothing else of the schema says anything useful about a value of another type
    if "const" in schema and not _equal(value, schema["const"]):
        yield SchemaError(
            path, f"Unsupported value: {_render(value)}: supported values: {_render(schema['const'])}"
        )
    if "enum" in schema and not any(_equal(value, e) for e in schema["enum"]):
        supported = ", ".join(_render(e) for e in schema["enum"])
        yield SchemaError(path, f"Unsupported value: {_render(value)}: supported values: {supported}")
    if isinstance(value, str):
        yield from _string(value, schema, path)
    elif json_type(value) in ("integer", "number"):
        yield from _number(value, schema, path)
    elif isinstance(value, Mapping):
        yield from _object(value, schema, path, root, depth)
    elif isinstance(value, list | tuple) and "items" in schema:
        for i, item in enumerate(value):
            yield from _check(item, schema["items"], path.index(i), root, depth + 1)
    if "anyOf" in schema:
        branches = [list(_check(value, s, path, root, depth + 1)) for s in schema["anyOf"]]
        if all(branches):
            yield from min(branches, key=len)
    if "oneOf" in schema:
        branches = [list(_check(value, s, path, root, depth + 1)) for s in schema["oneOf"]]
        passing = sum(1 for b in branches if not b)
        if passing == 0:
            yield from min(branches, key=len)
        elif passing > 1:
            yield SchemaError(path, f"Invalid value: {_render(value)}: matches more than one of its schemas")


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _string(value: str, schema: Mapping[str, Any], path: Path) -> Iterator[SchemaError]:
    min_len = schema.get("minLength")
    if min_len is not None and len(value) < min_len:
        detail = "must not be empty" if min_len == 1 else f"must be at least {min_len} characters long"
        yield SchemaError(path, f"Invalid value: {_render(value)}: {detail}")
    pattern = schema.get("pattern")
    if pattern is not None and _compiled(pattern).search(value) is None:
        yield SchemaError(
            path, f"Invalid value: {_render(value)}: must match the regular expression {pattern!r}"
        )


def _number(value: float, schema: Mapping[str, Any], path: Path) -> Iterator[SchemaError]:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and value < low:
        yield SchemaError(path, f"Invalid value: {_render(value)}: must be greater than or equal to {low}")
    if high is not None and value > high:
        yield SchemaError(path, f"Invalid value: {_render(value)}: must be less than or equal to {high}")


def _object(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: Path, root: Mapping[str, Any], depth: int
) -> Iterator[SchemaError]:
    props: Mapping[str, Any] = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in value:
            yield SchemaError(path.child(name), "Required value")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        sub = props.get(key)
        if sub is not None:
            yield from _check(item, sub, path.child(str(key)), root, depth + 1)
        elif extra is False:
            yield SchemaError(path.child(str(key)), f'unknown field "{key}"')
        elif extra is not True:  # a map: its keys as the API server writes them (`limits[GPU-0]`)
            yield from _check(item, extra, path.key(str(key)), root, depth + 1)
