"""A CRD's `openAPIV3Schema` as the API server takes it (apiextensions-apiserver), on draguard's own tools:

- `structural_problems(schema)`: the rules a structural schema must keep (every node typed, no `$ref` or
  logical junctors here, properties xor additionalProperties, arrays with one items schema, metadata only
  restricted in name/generateName, list types and map keys as the API server requires them, defaults and
  enums of their node's type, patterns that compile as Go's RE2 does), and every `x-kubernetes-validations`
  rule compiled with draguard's CEL front end to a bool;
- `object_problems(obj, schema)`: an object validated as a create with strict field validation (what
  `kubectl apply` sends): the schema (jsonschema, the reference validator, with unknown fields an error),
  metadata.name a DNS subdomain, list-type map keys and set items unique, then every CEL rule evaluated by
  draguard's evaluator where its value is present.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import re2
from admission_cel import compile_bool

from webhook.cel.checker import decls
from webhook.cel.checker import types as t
from webhook.cel.checker.checker import Env
from webhook.cel.interpreter.program import plan
from webhook.cel.parser.parser import parse
from webhook.model import names

SCALARS = {"string", "integer", "number", "boolean"}
FORMATS = {"int32", "int64", "float", "double", "byte", "date", "date-time", "duration", "uri", "uuid", ""}
FORBIDDEN = ("$ref", "allOf", "anyOf", "oneOf", "not", "additionalItems", "patternProperties", "dependencies",
             "definitions", "id", "$schema")  # fmt: skip
JSON_TYPES = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


def _env() -> Env:
    variables: dict[str, t.Type] = {"self": t.DYN_T, "oldSelf": t.DYN_T}
    for name, tt in decls.TYPE_IDENTS.items():
        variables[name] = t.type_of(tt)
    return Env(variables, {}, dict(decls.FUNCTIONS))


def compile_rule(rule: str) -> str:
    """ "" when a validation rule compiles to a bool (`self` is dyn here: the API server types it from the
    schema), else why not."""
    return compile_bool(rule, _env(), dyn=True)


def _of_type(value: Any, node: dict[str, Any]) -> bool:
    want = JSON_TYPES.get(node.get("type", ""), object)
    return isinstance(value, want) and not (
        isinstance(value, bool) and node.get("type") in ("integer", "number")
    )


def structural_problems(schema: dict[str, Any], path: str = "", root: bool = True) -> list[str]:
    out: list[str] = []
    at = path or "<root>"
    open_node = schema.get("x-kubernetes-int-or-string") or schema.get("x-kubernetes-preserve-unknown-fields")
    kind = schema.get("type")
    if not kind and not open_node:
        out.append(f"{at}: type: Required value: must not be empty for specified object fields")
    if root and kind != "object":
        out.append(f"{at}: type: must be object at the root")
    out += [
        f"{at}: {k}: Forbidden: not allowed in a structural schema here" for k in FORBIDDEN if k in schema
    ]
    if schema.get("uniqueItems") is True:
        out.append(f"{at}: uniqueItems: Forbidden: uniqueItems cannot be set to true")
    props, extra = schema.get("properties"), schema.get("additionalProperties")
    if props is not None and extra is not None:
        out.append(f"{at}: additionalProperties and properties are mutual exclusive")
    if (props is not None or extra is not None) and kind not in ("object", None):
        out.append(f"{at}: properties: only for type object")
    if kind == "array" and not isinstance(schema.get("items"), dict):
        out.append(f"{at}: items: Required value: must be specified (one schema)")
    if schema.get("format", "") not in FORMATS:
        out.append(f"{at}: format: unknown format {schema['format']!r}")
    if "pattern" in schema:
        try:
            re2.compile(schema["pattern"])
        except re2.error as e:
            out.append(f"{at}: pattern: does not compile: {e}")
    for value in schema.get("enum", []):
        if not _of_type(value, schema):
            out.append(f"{at}: enum: {value!r} is not of type {kind}")
    if "default" in schema:
        d = schema["default"]
        if not _of_type(d, schema) or ("enum" in schema and d not in schema["enum"]):
            out.append(f"{at}: default: {d!r} does not validate against its schema")
    out += _list_type_problems(schema, at)
    if "x-kubernetes-map-type" in schema and (
        kind != "object" or schema["x-kubernetes-map-type"] not in ("granular", "atomic")
    ):
        out.append(f"{at}: x-kubernetes-map-type: only granular or atomic, on objects")
    for v in schema.get("x-kubernetes-validations", []):
        problem = compile_rule(v.get("rule", ""))
        if problem:
            out.append(f"{at}: x-kubernetes-validations[{v.get('rule')!r}]: {problem}")
        if not v.get("message") and not v.get("messageExpression"):
            out.append(f"{at}: x-kubernetes-validations: give each rule a message")
    for name, sub in (props or {}).items():
        child = f"{path}.{name}" if path else name
        if root and name == "metadata":
            allowed = {"type"}
            if set(sub) - allowed - {"properties"} or set(sub.get("properties", {})) - {
                "name",
                "generateName",
            }:
                out.append(
                    f"{child}: only restrictions of metadata.name and metadata.generateName are allowed"
                )
            continue
        out += structural_problems(sub, child, root=False)
    if isinstance(extra, dict):
        out += structural_problems(extra, f"{path}[*]", root=False)
    if isinstance(schema.get("items"), dict):
        out += structural_problems(schema["items"], f"{path}[*]", root=False)
    return out


def _list_type_problems(schema: dict[str, Any], at: str) -> list[str]:
    list_type = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys")
    out = []
    if list_type is None:
        return [f"{at}: x-kubernetes-list-map-keys: only with x-kubernetes-list-type map"] if keys else []
    if schema.get("type") != "array" or list_type not in ("atomic", "set", "map"):
        return [f"{at}: x-kubernetes-list-type: atomic, set or map, on arrays only"]
    items = schema.get("items", {})
    if (
        list_type == "set"
        and items.get("type") not in SCALARS
        and items.get("x-kubernetes-map-type") != "atomic"
    ):
        out.append(f"{at}: x-kubernetes-list-type set: items must be scalars (or atomic)")
    if list_type == "map":
        if items.get("type") != "object" or not keys:
            return [
                f"{at}: x-kubernetes-list-type map: items must be objects, with x-kubernetes-list-map-keys"
            ]
        for k in keys:
            prop = items.get("properties", {}).get(k)
            if prop is None or prop.get("type") not in SCALARS:
                out.append(f"{at}: x-kubernetes-list-map-keys: {k} must be a scalar property of the items")
            elif k not in items.get("required", []) and "default" not in prop:
                out.append(f"{at}: x-kubernetes-list-map-keys: {k} must be required or have a default")
    elif keys:
        out.append(f"{at}: x-kubernetes-list-map-keys: only with x-kubernetes-list-type map")
    return out


def _strict(schema: dict[str, Any], root: bool = True) -> dict[str, Any]:
    """The schema with unknown fields an error (strict field validation), metadata left open."""
    s = copy.deepcopy(schema)
    for name, sub in list(s.get("properties", {}).items()):
        s["properties"][name] = sub if (root and name == "metadata") else _strict(sub, False)
    if "properties" in s and "additionalProperties" not in s:
        s["additionalProperties"] = False
    if isinstance(s.get("additionalProperties"), dict):
        s["additionalProperties"] = _strict(s["additionalProperties"], False)
    if isinstance(s.get("items"), dict):
        s["items"] = _strict(s["items"], False)
    return s


def _where(path: Any) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _extensions(value: Any, schema: dict[str, Any], path: str, out: list[str]) -> None:
    """List uniqueness and CEL rules, bottom-up (where the value is present)."""
    if isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name in value and value[name] is not None:
                _extensions(value[name], sub, f"{path}.{name}" if path else name, out)
        if isinstance(schema.get("additionalProperties"), dict):
            for k, v in value.items():
                _extensions(v, schema["additionalProperties"], f"{path}[{k}]", out)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            _extensions(v, schema["items"], f"{path}[{i}]", out)
        list_type = schema.get("x-kubernetes-list-type")
        keys = schema.get("x-kubernetes-list-map-keys", [])
        seen: set[Any] = set()
        for i, v in enumerate(value):
            key = tuple(v.get(k) for k in keys) if list_type == "map" and isinstance(v, dict) else repr(v)
            if list_type in ("map", "set") and key in seen:
                out.append(f"{path}[{i}]: Duplicate value: {key!r}")
            seen.add(key)
    for v in schema.get("x-kubernetes-validations", []):
        parsed = parse(v["rule"])
        assert parsed.expr is not None
        result, _ = plan(parsed.expr.expr, variables=frozenset({"self"})).evaluate(variables={"self": value})
        if result is not True:
            out.append(f"{path}: Invalid value: {v['message']}")


def object_problems(obj: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Why the API server would refuse to create `obj` (empty: it stores it)."""
    validator = jsonschema.Draft4Validator(_strict(schema))
    out = [f"{_where(e.absolute_path)}: {e.message}" for e in validator.iter_errors(obj)]
    name = (obj.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not name:
        out.append("metadata.name: Required value: name or generateName is required")
    else:
        out += [f"metadata.name: Invalid value: {name!r}: {m}" for m in names.dns_subdomain(name)]
    if not out:
        _extensions(obj, schema, "", out)
    return out
