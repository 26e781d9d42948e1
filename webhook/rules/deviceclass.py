"""DeviceClass spec rules: selectors (CEL), opaque config, extendedResourceName (upstream `validateDeviceClassSpec`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model import names
from webhook.model.path import Path
from webhook.model.violation import Finding
from webhook.rules.claim import MAX_CONFIG, invalid, opaque_findings, selector_findings, too_many
from webhook.rules.registry import object_rule

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"


def _specs(obj: dict[str, Any], ctx: Context) -> tuple[dict[str, Any], dict[str, Any] | None]:
    old = ctx.old if ctx.operation == "UPDATE" else None
    return obj.get("spec") or {}, (old.get("spec") or {}) if old else None


@object_rule("class.selectors")
def check_class_selectors(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    spec, old = _specs(obj, ctx)
    selectors = spec.get("selectors") or []
    if old is not None and selectors == (old.get("selectors") or []):
        return  # unchanged selectors count as stored: not re-validated
    yield from selector_findings(selectors, Path("spec").child("selectors"), ctx)


@object_rule("class.config")
def check_class_config(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    spec, old = _specs(obj, ctx)
    config = spec.get("config") or []
    stored = old is not None and config == (old.get("config") or [])
    cp = Path("spec").child("config")
    over = too_many(cp, config, MAX_CONFIG)
    if over:
        yield over
        return
    for i, c in enumerate(config):
        yield from opaque_findings(c or {}, cp.index(i), stored=stored)


@object_rule("class.extended-resource-name")
def check_extended_resource_name(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    spec, old = _specs(obj, ctx)
    name = spec.get("extendedResourceName")
    if not isinstance(name, str):
        return
    if old is not None and old.get("extendedResourceName") == name:
        return  # unchanged: not re-validated
    msgs = names.extended_resource_name(name)
    if msgs and name.startswith(IMPLICIT_PREFIX):
        msgs = [
            m + f" (every class already has the implicit name {IMPLICIT_PREFIX}<class name>)" for m in msgs
        ]
    yield from invalid(Path("spec").child("extendedResourceName"), name, msgs)
