"""Generate `schemas/v<version>/*.json` (JSON Schema 2020-12) for Kubernetes 1.35, 1.36 and 1.37.

Source: the upstream OpenAPI of each release as shipped by the `kubernetes-validate` package
(`kubernetes-json-schema/v1.3x.0-local-strict/_definitions.json`, generated from the release's
`api/openapi-spec`). It carries names, JSON types, the OpenAPI `required` lists, int32/int64 formats and
the Quantity / IntOrString / Time definitions, for every release in one package; see schemas/README.md
for why it is used rather than three `kubernetes` client releases. Required-ness is then decided by the
audit in `webhook.schema.required` (what the API server rejects), not by the OpenAPI lists: generation
fails on a required field without a verdict.

Run `python -m webhook.schema.generate` to rewrite `schemas/`, `--check` to only compare.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path as FsPath
from typing import Any

from webhook.model.errors import DraguardError
from webhook.schema.required import verdict

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_DIR = FsPath(__file__).resolve().parent.parent.parent / "schemas"
VERSIONS = ("1.35", "1.36", "1.37")

# Top-level kind -> OpenAPI definition. A kind the version does not serve as resource.k8s.io/v1 is
# absent from that version's schemas (DeviceTaintRule is v1alpha3/v1beta2 before 1.37).
KINDS: dict[str, str] = {
    "DeviceClass": "io.k8s.api.resource.v1.DeviceClass",
    "DeviceClassList": "io.k8s.api.resource.v1.DeviceClassList",
    "DeviceTaintRule": "io.k8s.api.resource.v1.DeviceTaintRule",
    "DeviceTaintRuleList": "io.k8s.api.resource.v1.DeviceTaintRuleList",
    "Pod": "io.k8s.api.core.v1.Pod",
    "PodList": "io.k8s.api.core.v1.PodList",
    "ResourceClaim": "io.k8s.api.resource.v1.ResourceClaim",
    "ResourceClaimList": "io.k8s.api.resource.v1.ResourceClaimList",
    "ResourceClaimTemplate": "io.k8s.api.resource.v1.ResourceClaimTemplate",
    "ResourceClaimTemplateList": "io.k8s.api.resource.v1.ResourceClaimTemplateList",
    "ResourceSlice": "io.k8s.api.resource.v1.ResourceSlice",
    "ResourceSliceList": "io.k8s.api.resource.v1.ResourceSliceList",
}

# A kind a version serves only in a pre-release version (DeviceTaintRule: v1beta2 in 1.36, v1alpha3 in
# 1.35) gets its schema from that version's definitions, named as v1's: an object of it is validated as
# its v1 conversion, and those definitions have v1's shape (the same properties, types and required
# lists; tests/schema/test_generate.py compares them), so the audit's verdicts apply as they are.
PRERELEASE: dict[str, tuple[str, ...]] = {
    "DeviceTaintRule": ("v1beta2", "v1alpha3"),
    "DeviceTaintRuleList": ("v1beta2", "v1alpha3"),
}


def kind_definition(kind: str, version: str) -> str | None:
    """The OpenAPI definition `kind`'s schema is made from in `version` (None: the version lacks it)."""
    defs = _openapi(version)
    if KINDS[kind] in defs:
        return KINDS[kind]
    for pre in PRERELEASE.get(kind, ()):
        name = KINDS[kind].replace(".resource.v1.", f".resource.{pre}.")
        if name in defs:
            return name
    return None


# Shared leaf definitions (names follow the Go types).
SPECIAL_DEFS: dict[str, dict[str, Any]] = {
    "Quantity": {
        "description": "resource.Quantity: a string such as '8Gi', '500m', '1.5'; the API server also "
        "accepts a JSON number (YAML `value: 8`).",
        "type": ["string", "integer", "number"],
        "x-kubernetes-int-or-string": True,
    },
    "IntOrString": {
        "description": "intstr.IntOrString: an integer or a string.",
        "type": ["integer", "string"],
        "x-kubernetes-int-or-string": True,
    },
    "RawExtension": {
        # Decoding accepts any JSON value; validation then requires an object ("must be a valid JSON
        # object"), reported by the semantic rules together with the object's other errors.
        "description": "runtime.RawExtension: any JSON value; the API server's validation requires an object.",
        "x-kubernetes-preserve-unknown-fields": True,
    },
    "FieldsV1": {
        "description": "metav1.FieldsV1: server-side-apply field set, an arbitrary JSON object.",
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    },
    "Time": {
        "description": "metav1.Time: an RFC 3339 date-time string.",
        "type": "string",
        "format": "date-time",
    },
}

# OpenAPI definitions replaced by a shared leaf definition.
SPECIAL: dict[str, str] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "IntOrString",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "FieldsV1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "Time",
}
_PRIMITIVES = {"string", "integer", "boolean", "number"}


class UnauditedRequired(DraguardError, RuntimeError):
    """An OpenAPI-required field without a verdict in webhook.schema.required."""


def source_dir(version: str) -> FsPath:
    """The kubernetes-validate schema directory of one Kubernetes release."""
    root = resources.files("kubernetes_validate") / "kubernetes-json-schema" / f"v{version}.0-local-strict"
    return FsPath(str(root))


@lru_cache(maxsize=16)  # bounded: keyed by supported version (and kind)
def _openapi(version: str) -> dict[str, Any]:
    doc = json.loads((source_dir(version) / "_definitions.json").read_text(encoding="utf-8"))
    return dict(doc["$defs"])


def kinds(version: str) -> list[str]:
    """The top-level kinds this version serves (in `KINDS`; in v1 or, see PRERELEASE, before it)."""
    return sorted(k for k in KINDS if kind_definition(k, version) is not None)


def _split(full: str) -> tuple[str, str, str]:
    """(group, version, kind) of an OpenAPI name: io.k8s.api.resource.v1.Device -> resource, v1, Device."""
    parts = full.split(".")
    return parts[-3], parts[-2], parts[-1]


def _client_name(full: str, clashes: set[str]) -> str:
    """The Python client's model name: `V1Device`, or `ResourceV1ResourceClaim` where two groups clash."""
    group, ver, kind = _split(full)
    short = ver[:1].upper() + ver[1:] + kind
    return group[:1].upper() + group[1:] + short if short in clashes else short


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rsplit("/", 1)[-1]
        for v in node.values():
            yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def _reachable(version: str) -> set[str]:
    defs = _openapi(version)
    seen: set[str] = set()
    stack = [d for k in KINDS if (d := kind_definition(k, version)) is not None]
    while stack:
        name = stack.pop()
        if name in seen or name in SPECIAL:
            continue
        seen.add(name)
        stack.extend(_refs(defs[name]))
    return seen


def _names(version: str) -> dict[str, str]:
    """OpenAPI name -> schema definition name for every reachable model of this version."""
    reachable = sorted(_reachable(version))
    count: dict[str, int] = {}
    for full in reachable:
        short = _client_name(full, set())
        count[short] = count.get(short, 0) + 1
    clashes = {s for s, n in count.items() if n > 1}
    out = {full: _client_name(full, clashes) for full in reachable}
    for kind in PRERELEASE:  # a kind served before v1: its models named as v1's (only it reaches them)
        definition = kind_definition(kind, version)
        if definition is not None and definition != KINDS[kind]:
            pre = f"io.k8s.api.resource.{definition.split('.')[-2]}."
            out.update({full: "V1" + full[len(pre) :] for full in reachable if full.startswith(pre)})
    return out


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("type")
    names = [t] if isinstance(t, str) else list(t or [])
    return [n for n in names if n != "null"]


def _text(node: dict[str, Any]) -> str:
    return " ".join(str(node.get("description", "")).split())


class _Builder:
    """Collects `$defs` for every model reachable from one root model of one version."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.openapi = _openapi(version)
        self.names = _names(version)
        self.defs: dict[str, dict[str, Any]] = {}

    def ref(self, name: str) -> dict[str, Any]:
        return {"$ref": f"#/$defs/{name}"}

    def model(self, full: str) -> dict[str, Any]:
        special = SPECIAL.get(full)
        if special is not None:
            self.defs[special] = SPECIAL_DEFS[special]
            return self.ref(special)
        name = self.names[full]
        if name not in self.defs:
            self.defs[name] = {}  # placeholder: breaks recursion
            self.defs[name] = self._object(full, name)
        return self.ref(name)

    def _object(self, full: str, name: str) -> dict[str, Any]:
        node = self.openapi[full]
        props: dict[str, Any] = {}
        for field, prop in node.get("properties", {}).items():
            prop_schema = self.type_schema(prop, name, field)
            text = _text(prop)
            props[field] = {**prop_schema, "description": text} if text else prop_schema
        required: list[str] = []
        for field in node.get("required", []):
            v = verdict(name, field)
            if v is None:
                raise UnauditedRequired(
                    f"Kubernetes {self.version}: {name}.{field} is required in the OpenAPI but has no verdict "
                    "in webhook/schema/required.py (read upstream validation and add one)"
                )
            if v.in_schema:
                required.append(field)
        schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
        text = _text(node)
        if text:
            schema["description"] = text
        if required:
            schema["required"] = sorted(required)
        return schema

    def type_schema(self, prop: dict[str, Any], model: str, field: str) -> dict[str, Any]:
        ref = prop.get("$ref")
        if isinstance(ref, str):
            return self.model(ref.rsplit("/", 1)[-1])
        types = _types(prop)
        if types == ["array"]:
            return {"type": "array", "items": self.type_schema(prop["items"], model, field)}
        if types == ["object"]:
            extra = prop.get("additionalProperties")
            if isinstance(extra, dict):
                return {"type": "object", "additionalProperties": self.type_schema(extra, model, field)}
            raise RuntimeError(f"{model}.{field}: object without a value schema")
        if types == ["integer"]:
            fmt = prop.get("format", "int64")
            if fmt not in ("int32", "int64"):
                raise RuntimeError(f"{model}.{field}: unsupported integer format {fmt!r}")
            return {"type": "integer", "format": fmt}
        if len(types) == 1 and types[0] in _PRIMITIVES:
            out: dict[str, Any] = {"type": types[0]}
            if types[0] == "string" and prop.get("format") in ("date", "byte"):
                out["format"] = prop["format"]
            return out
        raise RuntimeError(f"{model}.{field}: unsupported OpenAPI node {prop!r}")


def build(kind: str, version: str = VERSIONS[-1]) -> dict[str, Any]:
    """The JSON Schema for one top-level kind of one Kubernetes version."""
    definition = kind_definition(kind, version)
    if definition is None:
        raise ValueError(f"Kubernetes {version} has no {kind}")
    b = _Builder(version)
    root = b.model(definition)
    return {
        "$schema": DRAFT,
        "title": kind,
        "description": f"{kind} ({_served_as(definition)}, Kubernetes v{version}): generated by "
        "webhook.schema.generate from the upstream OpenAPI (kubernetes-validate "
        f"v{version}.0-local-strict); required = what the API server rejects when absent "
        "(webhook/schema/required.py). Do not edit.",
        **root,
        "$defs": dict(sorted(b.defs.items())),
    }


def _served_as(definition: str) -> str:
    if ".resource.v1." in definition or ".core." in definition:
        return "resource.k8s.io/v1 and core/v1"
    pre = definition.split(".")[-2]
    return f"served as resource.k8s.io/{pre}, checked on objects converted to v1"


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def generate_all() -> dict[str, str]:
    """Relative file name (`v1.37/Pod.json`) -> content for every schema of every version."""
    files: dict[str, str] = {}
    for version in VERSIONS:
        for kind in kinds(version):
            files[f"v{version}/{kind}.json"] = render(build(kind, version))
    return files


def write(out: FsPath, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def diff(out: FsPath, files: dict[str, str]) -> list[str]:
    """Names of schema files that are missing, differ, or are stale leftovers in `out`."""
    bad = [
        name
        for name, text in files.items()
        if not (out / name).is_file() or (out / name).read_text(encoding="utf-8") != text
    ]
    present = {str(p.relative_to(out)) for p in out.glob("v*/*.json")}
    return bad + sorted(present - set(files))


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m webhook.schema.generate", description=__doc__)
    ap.add_argument("--out", type=FsPath, default=SCHEMA_DIR, help="output directory (default: schemas/)")
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 if a file would change")
    args = ap.parse_args(list(argv) if argv is not None else None)
    files = generate_all()
    if args.check:
        bad = diff(args.out, files)
        for name in bad:
            print(f"{args.out / name}: out of date; run python -m webhook.schema.generate", file=sys.stderr)
        return 1 if bad else 0
    write(args.out, files)
    print(f"wrote {len(files)} schemas to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
