"""Conversion of `resource.k8s.io` beta and alpha objects to `resource.k8s.io/v1`, as kube-apiserver
converts them, and back; pure functions on plain JSON-like objects (the caller's object is never changed).

    to_v1(obj)                         → Converted(obj in v1, strict-decoding findings at the manifest's paths)
    from_v1(obj, "resource.k8s.io/v1beta1") → the v1 object in that version's shapes
    source_path(api_version, kind, p)  → a v1 field path in the manifest's own version's terms

Versions: v1beta1 (its own shapes: `webhook.convert.v1beta1`), v1beta2 and the v1alpha3 DeviceTaintRule
(field-for-field identical to v1 in Kubernetes 1.35–1.37: only `apiVersion` changes). Which versions a
cluster serves is `webhook.convert.served`; `draguard convert` (file rewriting) is `webhook.convert.rewrite`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webhook.convert import v1beta1
from webhook.convert.served import GROUP, PREFIX
from webhook.model.keys import DRA_KINDS
from webhook.model.plain import deep_copy
from webhook.model.violation import Finding

V1 = f"{GROUP}/v1"
# (version, kind) pairs draguard converts: every DRA kind of every non-v1 version kube-apiserver 1.35-1.37 has
CONVERTIBLE = frozenset(
    {("v1beta1", k) for k in DRA_KINDS if k != "DeviceTaintRule"}
    | {("v1beta2", k) for k in DRA_KINDS}
    | {("v1alpha3", "DeviceTaintRule")}
)


@dataclass
class Converted:
    obj: dict[str, Any]  # the object in resource.k8s.io/v1 (a new object)
    source: str  # the apiVersion it was written in
    findings: list[Finding] = field(default_factory=list)  # shapes strict decoding of `source` rejects


def version_of(api_version: Any) -> str | None:
    """`v1beta1` for `resource.k8s.io/v1beta1`; None for any other group."""
    if isinstance(api_version, str) and api_version.startswith(PREFIX):
        return api_version[len(PREFIX) :]
    return None


def convertible(api_version: Any, kind: Any) -> bool:
    """Whether draguard converts this apiVersion/kind to v1."""
    return (version_of(api_version), kind) in CONVERTIBLE


def to_v1(obj: dict[str, Any]) -> Converted:
    """`obj` (a convertible beta/alpha object: see `convertible`) as kube-apiserver converts it to v1.
    Findings are the fields strict decoding of the source version rejects (v1beta1 devices with fields
    outside `basic`, requests with `exactly`): with any, the API server rejects the object."""
    source = str(obj.get("apiVersion"))
    out = deep_copy(obj)
    findings: list[Finding] = []
    if version_of(source) == "v1beta1":
        out, findings = v1beta1.to_v1(out)
    out["apiVersion"] = V1
    return Converted(out, source, findings)


def from_v1(obj: dict[str, Any], api_version: str) -> dict[str, Any]:
    """A v1 object in the shapes of `api_version` (a convertible version of its kind)."""
    out = deep_copy(obj)
    if version_of(api_version) == "v1beta1":
        out = v1beta1.from_v1(out)
    out["apiVersion"] = api_version
    return out


def source_path(api_version: str | None, kind: str | None, path: str) -> str:
    """A field path of the v1 conversion in the terms of the manifest's `api_version`."""
    if version_of(api_version) == "v1beta1":
        return v1beta1.source_path(kind, path)
    return path


def source_message(api_version: str | None, kind: str | None, message: str) -> str:
    """A validation message about the v1 conversion in the terms of the manifest's `api_version`."""
    if version_of(api_version) == "v1beta1":
        return v1beta1.source_message(kind, message)
    return message
