"""Opaque driver configuration (`config[i].opaque.parameters` of claims, templates and DeviceClasses)
checked against the driver's schema (webhook.config.driverschemas: bundled, `--driver-schemas`, policy), by
the entry's driver and the parameters' apiVersion and kind (or the driver's untyped schema). Parameters of a driver without schemas are
skipped; the driver alone knows them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from webhook.config.context import Context
from webhook.config.driverschemas import Origin
from webhook.model.jsonsubset import validate
from webhook.model.path import Path
from webhook.model.plain import as_list
from webhook.model.violation import Finding
from webhook.rules.claim import claim_spec
from webhook.rules.registry import object_rule

Entry = tuple[str, Mapping[str, Any], Path]  # (driver, parameters, the parameters' path)


def _config_list(obj: dict[str, Any], ctx: Context) -> tuple[list[Any], list[Any], Path]:
    """The object's config entries, the stored object's (on UPDATE), and their path."""
    old = ctx.old if ctx.operation == "UPDATE" else None
    if obj.get("kind") == "DeviceClass":
        spec = obj.get("spec") or {}
        old_spec = (old or {}).get("spec") or {}
        return as_list(spec.get("config")), as_list(old_spec.get("config")), Path("spec").child("config")
    spec, path = claim_spec(obj)
    devices = spec.get("devices") or {}
    old_devices = claim_spec(old)[0].get("devices") or {} if old else {}
    return as_list(devices.get("config")), as_list(old_devices.get("config")), path.child("devices", "config")


def entries(obj: dict[str, Any], ctx: Context) -> Iterator[Entry]:
    """Each opaque config entry with object parameters; on UPDATE, only the entries that changed (an
    unchanged stored entry is the cluster's already)."""
    config, old_config, path = _config_list(obj, ctx)
    for i, c in enumerate(config):
        if i < len(old_config) and old_config[i] == c:
            continue
        opaque = c.get("opaque") if isinstance(c, dict) else None
        if not isinstance(opaque, dict):
            continue
        driver, params = opaque.get("driver"), opaque.get("parameters")
        if isinstance(driver, str) and isinstance(params, dict):
            yield driver, params, path.index(i).child("opaque", "parameters")


def _type_of(params: Mapping[str, Any]) -> tuple[str, str]:
    api, kind = params.get("apiVersion"), params.get("kind")
    return (api if isinstance(api, str) else "", kind if isinstance(kind, str) else "")


def _findings(obj: dict[str, Any], ctx: Context, origin: Origin) -> Iterator[Finding]:
    for driver, params, path in entries(obj, ctx):
        api, kind = _type_of(params)
        for schema in ctx.driver_schemas.lookup(driver, api, kind):
            if schema.origin != origin:
                continue
            for err in validate(params, schema.schema, path):
                where = "" if origin == "bundled" else f", schema {schema.source}"
                what = f"{driver} {schema.kind}" if schema.kind else driver
                yield Finding(err.field, f"{err.message} ({what}{where})")


@object_rule("config.driver-schema")
def check_driver_schema(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    yield from _findings(obj, ctx, "bundled")


@object_rule("config.driver-schema.custom")
def check_custom_driver_schema(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    yield from _findings(obj, ctx, "custom")


@object_rule("config.driver-schema.unknown-kind")
def check_unknown_kind(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    known = ctx.driver_schemas
    for driver, params, path in entries(obj, ctx):
        if not known.knows_driver(driver):
            continue
        api, kind = _type_of(params)
        if known.lookup(driver, api, kind):
            continue
        yield Finding(
            path,
            f"not checked: {driver} parameters of apiVersion {api or '(none)'} kind {kind or '(none)'}; "
            f"draguard knows {', '.join(known.kinds_of(driver))}",
        )
