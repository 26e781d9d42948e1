"""Generate `schemas/*.json` (JSON Schema 2020-12) from the `kubernetes` Python client's v1.37 models.

Run `python -m webhook.schema.generate` to rewrite `schemas/`, `--check` to only compare. The client
models know names, JSON types, required-ness and descriptions but not which strings are Kubernetes
`Quantity` values nor which integers are int32 (the rest are int64); those tables (`QUANTITY_FIELDS`,
`INT32_FIELDS`) are ported from the Go types.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import typing
from collections.abc import Iterable
from pathlib import Path as FsPath
from typing import Any

import kubernetes
import kubernetes.client.models as models

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_DIR = FsPath(__file__).resolve().parent.parent.parent / "schemas"

# Top-level kind -> client model. `ResourceClaim` clashes with core/v1's PodSpec claim type in the client.
KINDS: dict[str, str] = {
    "DeviceClass": "V1DeviceClass",
    "DeviceClassList": "V1DeviceClassList",
    "DeviceTaintRule": "V1DeviceTaintRule",
    "DeviceTaintRuleList": "V1DeviceTaintRuleList",
    "Pod": "V1Pod",
    "PodList": "V1PodList",
    "ResourceClaim": "ResourceV1ResourceClaim",
    "ResourceClaimList": "V1ResourceClaimList",
    "ResourceClaimTemplate": "V1ResourceClaimTemplate",
    "ResourceClaimTemplateList": "V1ResourceClaimTemplateList",
    "ResourceSlice": "V1ResourceSlice",
    "ResourceSliceList": "V1ResourceSliceList",
}

# Fields whose Go type is resource.Quantity (also pointer, slice and map element) or core/v1 ResourceList,
# as (client model, JSON field). Source: kubernetes/api resource/v1/types.go and core/v1/types.go
# (HEAD 10b39a39, 2026-07-24). The client types them as plain strings; the API server also accepts numbers.
QUANTITY_FIELDS: frozenset[tuple[str, str]] = frozenset(
    {
        # resource.k8s.io/v1
        ("V1Counter", "value"),
        ("V1DeviceCapacity", "value"),
        ("V1CapacityRequestPolicy", "default"),
        ("V1CapacityRequestPolicy", "validValues"),
        ("V1CapacityRequestPolicyRange", "min"),
        ("V1CapacityRequestPolicyRange", "max"),
        ("V1CapacityRequestPolicyRange", "step"),
        ("V1CapacityRequirements", "requests"),
        ("V1DeviceRequestAllocationResult", "consumedCapacity"),
        ("V1NodeAllocatableMapping", "capacityMultiplier"),
        ("V1NodeAllocatableMapping", "deviceMultiplier"),
        ("V1NodeAllocatableOverhead", "perPod"),
        ("V1NodeAllocatableOverhead", "perContainer"),
        # core/v1 (reachable from Pod)
        ("V1ResourceRequirements", "limits"),
        ("V1ResourceRequirements", "requests"),
        ("V1VolumeResourceRequirements", "limits"),
        ("V1VolumeResourceRequirements", "requests"),
        ("V1PodSpec", "overhead"),
        ("V1PodStatus", "allocatedResources"),
        ("V1ContainerStatus", "allocatedResources"),
        ("V1EmptyDirVolumeSource", "sizeLimit"),
        ("V1ResourceFieldSelector", "divisor"),
        ("V1NodeAllocatableMappedResources", "quantity"),
        ("V1NodeAllocatableOverheadResources", "perPod"),
        ("V1NodeAllocatableOverheadResources", "perContainer"),
    }
)

# Integer fields whose Go type is int32 (also pointer and slice element), as (client model, JSON field);
# every other integer field of these kinds is an int64 (the client models do not carry the OpenAPI
# format). Source: kubernetes/api core/v1/types.go (HEAD 10b39a39, 2026-07-24); resource/v1 has none.
INT32_FIELDS: frozenset[tuple[str, str]] = frozenset(
    {
        ("V1AWSElasticBlockStoreVolumeSource", "partition"),
        ("V1ConfigMapVolumeSource", "defaultMode"),
        ("V1ContainerPort", "containerPort"),
        ("V1ContainerPort", "hostPort"),
        ("V1ContainerRestartRuleOnExitCodes", "values"),
        ("V1ContainerStateTerminated", "exitCode"),
        ("V1ContainerStateTerminated", "signal"),
        ("V1ContainerStatus", "restartCount"),
        ("V1DownwardAPIVolumeFile", "mode"),
        ("V1DownwardAPIVolumeSource", "defaultMode"),
        ("V1EmptyDirVolumeSource", "mode"),
        ("V1EvictionResponder", "priority"),
        ("V1FCVolumeSource", "lun"),
        ("V1GCEPersistentDiskVolumeSource", "partition"),
        ("V1GRPCAction", "port"),
        ("V1ISCSIVolumeSource", "lun"),
        ("V1KeyToPath", "mode"),
        ("V1PodCertificateProjection", "maxExpirationSeconds"),
        ("V1PodSpec", "priority"),
        ("V1PreferredSchedulingTerm", "weight"),
        ("V1Probe", "failureThreshold"),
        ("V1Probe", "initialDelaySeconds"),
        ("V1Probe", "periodSeconds"),
        ("V1Probe", "successThreshold"),
        ("V1Probe", "timeoutSeconds"),
        ("V1ProjectedVolumeSource", "defaultMode"),
        ("V1SecretVolumeSource", "defaultMode"),
        ("V1TopologySpreadConstraint", "maxSkew"),
        ("V1TopologySpreadConstraint", "minDomains"),
        ("V1WeightedPodAffinityTerm", "weight"),
    }
)

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

# Fields the OpenAPI marks required but the API server accepts missing (decoded as "", not validated).
NOT_ENFORCED_REQUIRED = frozenset({("V1Condition", "message")})

_LIST = re.compile(r"List\[(.*)\]")
_DICT = re.compile(r"Dict\[str, (.*)\]")
_PRIMITIVES = {"str": "string", "int": "integer", "bool": "boolean", "float": "number"}


def _model(name: str) -> type:
    return typing.cast(type, getattr(models, name))


def _doc(cls: type) -> str:
    """The model's description: the class docstring up to the generated `Attributes:` section."""
    text = (cls.__doc__ or "").split("Attributes:")[0]
    return " ".join(text.split())


def _fields(cls: type) -> dict[str, tuple[str, Any]]:
    """JSON field name -> (openapi type string, pydantic FieldInfo)."""
    by_json: dict[str, Any] = {}
    for attr, info in cls.model_fields.items():  # type: ignore[attr-defined]
        by_json[info.serialization_alias or info.alias or attr] = info
    out: dict[str, tuple[str, Any]] = {}
    for attr, json_name in cls.attribute_map.items():  # type: ignore[attr-defined]
        if json_name not in by_json:
            raise RuntimeError(f"{cls.__name__}.{json_name}: no pydantic field for this JSON name")
        out[json_name] = (cls.openapi_types[attr], by_json[json_name])  # type: ignore[attr-defined]
    return out


def _is_int_or_string(info: Any) -> bool:
    args = set()
    for a in typing.get_args(info.annotation) or (info.annotation,):
        args.add(typing.get_args(a)[0] if typing.get_origin(a) is typing.Annotated else a)
    return {int, str} <= args


class _Builder:
    """Collects `$defs` for every model reachable from one root model."""

    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}
        self.quantity_seen: set[tuple[str, str]] = set()
        self.int32_seen: set[tuple[str, str]] = set()

    def ref(self, name: str) -> dict[str, Any]:
        return {"$ref": f"#/$defs/{name}"}

    def model(self, name: str) -> dict[str, Any]:
        if name not in self.defs:
            self.defs[name] = {}  # placeholder: breaks recursion (JSONSchemaProps-like cycles)
            self.defs[name] = self._object(name)
        return self.ref(name)

    def _object(self, name: str) -> dict[str, Any]:
        cls = _model(name)
        props: dict[str, Any] = {}
        required: list[str] = []
        for json_name, (otype, info) in _fields(cls).items():
            prop = self.type_schema(otype, name, json_name, info)
            if info.description:
                prop = {**prop, "description": " ".join(info.description.split())}
            props[json_name] = prop
            if info.is_required() and (name, json_name) not in NOT_ENFORCED_REQUIRED:
                required.append(json_name)
        schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
        doc = _doc(cls)
        if doc:
            schema["description"] = doc
        if required:
            schema["required"] = sorted(required)
        return schema

    def special(self, name: str) -> dict[str, Any]:
        self.defs[name] = SPECIAL_DEFS[name]
        return self.ref(name)

    def type_schema(self, otype: str, model: str, field: str, info: Any) -> dict[str, Any]:
        if m := _LIST.fullmatch(otype):
            return {"type": "array", "items": self.type_schema(m.group(1), model, field, info)}
        if m := _DICT.fullmatch(otype):
            return {
                "type": "object",
                "additionalProperties": self.type_schema(m.group(1), model, field, info),
            }
        if (model, field) in QUANTITY_FIELDS:
            if otype != "str":
                raise RuntimeError(f"{model}.{field}: listed as Quantity but typed {otype!r} in the client")
            self.quantity_seen.add((model, field))
            return self.special("Quantity")
        if otype == "int":
            if (model, field) in INT32_FIELDS:
                self.int32_seen.add((model, field))
                return {"type": "integer", "format": "int32"}
            return {"type": "integer", "format": "int64"}
        if otype in _PRIMITIVES:
            return {"type": _PRIMITIVES[otype]}
        if otype == "datetime":
            return self.special("Time")
        if otype == "date":
            return {"type": "string", "format": "date"}
        if otype == "object":
            if _is_int_or_string(info):
                return self.special("IntOrString")
            return self.special("FieldsV1" if field == "fieldsV1" else "RawExtension")
        if hasattr(models, otype):
            return self.model(otype)
        raise RuntimeError(f"{model}.{field}: unsupported client type {otype!r}")


def build(kind: str) -> tuple[dict[str, Any], set[tuple[str, str]]]:
    """The JSON Schema for one top-level kind and the Quantity and int32 fields it contains."""
    b = _Builder()
    root = b.model(KINDS[kind])
    schema = {
        "$schema": DRAFT,
        "title": kind,
        "description": f"{kind} (resource.k8s.io/v1 and core/v1, Kubernetes v1.37): generated by "
        f"webhook.schema.generate from kubernetes Python client {kubernetes.__version__} "
        f"model {KINDS[kind]}. Do not edit.",
        **root,
        "$defs": b.defs,
    }
    return schema, b.quantity_seen | b.int32_seen


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def generate_all() -> dict[str, str]:
    """File name -> content for every schema; fails if a Quantity table entry matched nothing."""
    files: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for kind in sorted(KINDS):
        schema, q = build(kind)
        seen |= q
        files[f"{kind}.json"] = render(schema)
    missing = (QUANTITY_FIELDS | INT32_FIELDS) - seen
    if missing:
        raise RuntimeError(f"Quantity or int32 fields not found in any schema: {sorted(missing)}")
    return files


def write(out: FsPath, files: dict[str, str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")


def diff(out: FsPath, files: dict[str, str]) -> list[str]:
    """Names of schema files that are missing or differ in `out`."""
    bad = []
    for name, text in files.items():
        p = out / name
        if not p.is_file() or p.read_text(encoding="utf-8") != text:
            bad.append(name)
    return bad


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
