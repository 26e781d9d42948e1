"""Object metadata rules for the six kinds: name / generateName format and namespace scope."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model import names
from webhook.model.path import Path
from webhook.model.violation import Finding
from webhook.rules import fielderr as fe
from webhook.rules.registry import object_rule

NAMESPACED = ("ResourceClaim", "ResourceClaimTemplate", "Pod")
CLUSTER_SCOPED = ("ResourceSlice", "DeviceClass", "DeviceTaintRule")
ALL_KINDS = CLUSTER_SCOPED + NAMESPACED

_META = Path("metadata")


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _mask_trailing_dash(prefix: str) -> str:
    """How apimachinery checks a generateName prefix: a trailing `-` stands for the random suffix.

    Mirrors upstream exactly, including that it replaces the last two characters with `a`."""
    if len(prefix) > 1 and prefix.endswith("-"):
        return prefix[:-2] + "a"
    return prefix


@object_rule("meta.name")
def name(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    meta = _meta(obj)
    value = meta.get("name") or ""
    prefix = meta.get("generateName") or ""
    if isinstance(prefix, str) and prefix:
        for msg in names.dns_subdomain(_mask_trailing_dash(prefix)):
            yield Finding(_META.child("generateName"), fe.invalid(prefix, msg))
    if not value:
        if not prefix:
            yield Finding(_META.child("name"), fe.required("name or generateName is required"))
        return
    if isinstance(value, str):
        for msg in fe.as_invalid(value, names.dns_subdomain(value)):
            yield Finding(_META.child("name"), msg)


@object_rule("meta.namespace")
def namespace(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    value = _meta(obj).get("namespace") or ""
    kind = obj.get("kind")
    if value and isinstance(value, str):
        if kind in CLUSTER_SCOPED:
            return  # cleared by the API server; see meta.cluster-scoped-namespace
        for msg in fe.as_invalid(value, names.dns_label(value)):
            yield Finding(_META.child("namespace"), msg)
    elif kind in NAMESPACED and not ctx.lint:
        yield Finding(_META.child("namespace"), fe.required())


@object_rule("meta.namespace-missing")
def namespace_missing(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    if not ctx.lint or _meta(obj).get("namespace"):
        return
    yield Finding(
        _META.child("namespace"),
        f"{obj.get('kind')} is namespaced but has no metadata.namespace: kubectl will use the current "
        "context's namespace (set it explicitly to be sure where the object lands)",
    )


@object_rule("meta.cluster-scoped-namespace")
def cluster_scoped_namespace(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    value = _meta(obj).get("namespace")
    if value:
        yield Finding(
            _META.child("namespace"),
            f"{obj.get('kind')} is cluster-scoped: namespace {fe.render(value)} is ignored; remove it",
        )


_MAX_ANNOTATIONS_BYTES = 256 * 1024


@object_rule("meta.labels")
def label_pairs(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    items = _meta(obj).get("labels")
    if not isinstance(items, dict):
        return
    path = _META.child("labels")
    for key, value in items.items():
        for msg in fe.label_name_errors(str(key)):
            yield Finding(path, msg)
        if isinstance(value, str):
            for msg in fe.label_value_errors(value):
                yield Finding(path, msg)


@object_rule("meta.annotations")
def annotation_keys(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    items = _meta(obj).get("annotations")
    if not isinstance(items, dict):
        return
    path = _META.child("annotations")
    total = 0
    for key, value in items.items():
        key = str(key)
        for msg in names.label_key(key.lower()):
            yield Finding(path, fe.invalid(key, msg))
        total += fe.byte_len(key) + (fe.byte_len(value) if isinstance(value, str) else 0)
    if total > _MAX_ANNOTATIONS_BYTES:
        yield Finding(path, f"Too long: may not be more than {_MAX_ANNOTATIONS_BYTES} bytes")


_IMMUTABLE_META = ("name", "namespace", "uid", "creationTimestamp")


@object_rule("meta.immutable")
def immutable(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    if ctx.old is None:
        return
    new, old = _meta(obj), _meta(ctx.old)
    for key in _IMMUTABLE_META:
        if key == "namespace" and obj.get("kind") in CLUSTER_SCOPED:
            continue
        if key in ("uid", "creationTimestamp") and not new.get(key):
            continue  # not sent by the client: the server keeps the stored value
        if (new.get(key) or "") != (old.get(key) or ""):
            yield Finding(_META.child(key), fe.invalid(new.get(key) or "", "field is immutable"))
