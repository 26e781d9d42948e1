"""ResourceClaim `status` rules (docs/rules.md: claim-status.*): allocation results and config, node selector,
reservedFor, per-device status and network data."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.config.context import Context
from webhook.model import names
from webhook.model.jsontext import json_size
from webhook.model.network import interface_address
from webhook.model.path import Path
from webhook.model.plain import as_dict, as_list
from webhook.model.quantity import parse_quantity
from webhook.model.violation import Finding
from webhook.rules import fielderr as fe
from webhook.rules.node_selector import node_selector_findings
from webhook.rules.registry import object_rule
from webhook.rules.slice import skip_node_operations_findings
from webhook.rules.taintrule import TAINT_EFFECTS, conditions_findings

MAX_RESULTS = 32
MAX_ALLOCATION_CONFIG = 64  # class + claim config, 2 × 32
MAX_REQUEST_REFS = 32
MAX_RESERVED_FOR = 256
MAX_BINDING_CONDITIONS = 4
MAX_DEVICE_CONDITIONS = 8
MAX_RAW_BYTES = 10 * 1024
MAX_INTERFACE_NAME = 256
MAX_HARDWARE_ADDRESS = 128
MAX_IPS = 16
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"

_REF_MSG = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)
_ALLOCATION = Path("status").child("allocation")

RequestNames = dict[str, "set[str] | None"]


# --- helpers (plain functions over dicts) ----------------------------------------------------------


def request_names(claim: dict[str, Any]) -> RequestNames:
    """Top-level request names of a claim, each with its subrequest names (None without firstAvailable)."""
    out: RequestNames = {}
    for req in as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")):
        if not isinstance(req, dict) or not isinstance(req.get("name"), str):
            continue
        subs = as_list(req.get("firstAvailable"))
        out[req["name"]] = (
            {s["name"] for s in subs if isinstance(s, dict) and isinstance(s.get("name"), str)}
            if subs
            else None
        )
    return out


def _has_request(ref: str, known: RequestNames) -> bool:
    parts = ref.split("/")
    if len(parts) > 2 or parts[0] not in known:
        return False
    if len(parts) == 1:
        return True
    subs = known[parts[0]]
    return subs is not None and parts[1] in subs


def request_ref_findings(ref: str, path: Path, known: RequestNames) -> Iterator[Finding]:
    """A reference `req` or `req/sub` to a request of this claim (upstream `validateRequestNameRef`)."""
    parts = ref.split("/")
    if len(parts) > 2:
        yield Finding(path, fe.invalid(ref, _REF_MSG))
        return
    for part in parts:
        for msg in fe.as_invalid(part, names.dns_label(part)):
            yield Finding(path, msg)
    if not _has_request(ref, known):
        yield Finding(path, fe.invalid(ref, _REF_MSG))


def _request_refs_findings(refs: list[Any], path: Path, known: RequestNames) -> Iterator[Finding]:
    if len(refs) > MAX_REQUEST_REFS:
        yield Finding(path, fe.too_many(len(refs), MAX_REQUEST_REFS))
        return
    seen: set[str] = set()
    for j, ref in enumerate(refs):
        if not isinstance(ref, str):
            continue
        yield from request_ref_findings(ref, path.index(j), known)
        if ref in seen:
            yield Finding(path.index(j), fe.duplicate(ref))
        seen.add(ref)


def toleration_findings(tol: dict[str, Any], path: Path) -> Iterator[Finding]:
    """One DeviceToleration (after v1 defaulting of `operator` to Equal)."""
    key = tol.get("key", "")
    if isinstance(key, str) and key:
        for msg in fe.label_name_errors(key):
            yield Finding(path.child("key"), msg)
    operator = tol.get("operator", "")
    value = tol.get("value", "")
    if operator == "Exists":
        if value:
            yield Finding(path.child("value"), fe.invalid(value, "must be empty for operator `Exists`"))
    elif operator == "Equal":
        if isinstance(value, str):
            for msg in fe.label_value_errors(value):
                yield Finding(path.child("value"), msg)
    elif not operator:
        yield Finding(path.child("operator"), fe.required())
    else:
        yield Finding(path.child("operator"), fe.not_supported(operator, ("Equal", "Exists")))
    effect = tol.get("effect", "")
    if effect and effect not in TAINT_EFFECTS:
        yield Finding(path.child("effect"), fe.not_supported(effect, TAINT_EFFECTS))


def binding_findings(conds: list[Any], failures: list[Any], path: Path) -> Iterator[Finding]:
    """bindingConditions / bindingFailureConditions: ≤4 label names each, no duplicates, no overlap, both or none."""
    for name, items in (("bindingConditions", conds), ("bindingFailureConditions", failures)):
        if len(items) > MAX_BINDING_CONDITIONS:
            yield Finding(path.child(name), fe.too_many(len(items), MAX_BINDING_CONDITIONS))
            continue
        for k, item in enumerate(items):
            if isinstance(item, str):
                for msg in fe.label_name_errors(item):
                    yield Finding(path.child(name).index(k), msg)
    seen: set[Any] = set()
    for k, item in enumerate(conds):
        if item in seen:
            yield Finding(path.child("bindingConditions").index(k), fe.duplicate(item))
        seen.add(item)
    seen_failures: set[Any] = set()
    for k, item in enumerate(failures):
        p = path.child("bindingFailureConditions").index(k)
        if item in seen_failures:
            yield Finding(p, fe.duplicate(item))
        seen_failures.add(item)
        if item in seen:
            yield Finding(
                p, fe.invalid(item, "bindingFailureConditions must not overlap with bindingConditions")
            )
    if not conds and failures:
        yield Finding(
            path.child("bindingConditions"),
            fe.invalid([], "bindingConditions are required to use bindingFailureConditions"),
        )
    if not failures and conds:
        yield Finding(
            path.child("bindingFailureConditions"),
            fe.invalid([], "bindingFailureConditions are required to use bindingConditions"),
        )


def uid_findings(value: str, path: Path) -> Iterator[Finding]:
    for msg in fe.as_invalid(value, names.uuid(value)):
        yield Finding(path, msg)


def raw_extension_findings(value: Any, path: Path, max_bytes: int, stored: bool = False) -> Iterator[Finding]:
    """A RawExtension that must hold a JSON object of at most `max_bytes` (checked only when not stored)."""
    if value is None:
        yield Finding(path, fe.required())
        return
    if not stored and json_size(value, max_bytes) > max_bytes:
        yield Finding(path, fe.too_long(max_bytes))
    elif not isinstance(value, dict):
        yield Finding(path, fe.invalid("<value omitted>", "must be a valid JSON object"))


def _allocation(obj: dict[str, Any]) -> dict[str, Any] | None:
    alloc = as_dict(obj.get("status")).get("allocation")
    return alloc if isinstance(alloc, dict) else None


def new_allocation(obj: dict[str, Any], ctx: Context) -> dict[str, Any] | None:
    """The allocation if it must be validated: set, and not already stored in the old object (then only
    immutability is checked, by `update.allocation`)."""
    alloc = _allocation(obj)
    if alloc is None or (ctx.old is not None and _allocation(ctx.old) is not None):
        return None
    return alloc


def device_key(entry: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """(driver, pool, device, shareID): how results and status.devices entries are matched."""
    return (entry.get("driver", ""), entry.get("pool", ""), entry.get("device", ""), entry.get("shareID"))


def _render_key(key: tuple[Any, Any, Any, Any]) -> str:
    base = f"{key[0]}/{key[1]}/{key[2]}"
    return f"{base}/{key[3]}" if key[3] is not None else base


def allocated_keys(obj: dict[str, Any] | None) -> set[tuple[Any, Any, Any, Any]]:
    alloc = _allocation(obj) if obj is not None else None
    results = as_list(as_dict(as_dict(alloc).get("devices")).get("results"))
    return {device_key(r) for r in results if isinstance(r, dict)}


# --- rules ------------------------------------------------------------------------------------------


@object_rule("claim-status.results")
def results(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    alloc = new_allocation(obj, ctx)
    if alloc is None:
        return
    path = _ALLOCATION.child("devices", "results")
    items = as_list(as_dict(alloc.get("devices")).get("results"))
    if len(items) > MAX_RESULTS:
        yield Finding(path, fe.too_many(len(items), MAX_RESULTS))
        return
    known = request_names(obj)
    for i, result in enumerate(items):
        if not isinstance(result, dict):
            continue
        p = path.index(i)
        if isinstance(result.get("request"), str):
            yield from request_ref_findings(result["request"], p.child("request"), known)
        for name, check in (
            ("driver", fe.driver_name_errors),
            ("pool", fe.pool_name_errors),
            ("device", fe.device_name_errors),
        ):
            if isinstance(result.get(name), str):
                for msg in check(result[name]):
                    yield Finding(p.child(name), msg)
        yield from binding_findings(
            as_list(result.get("bindingConditions")), as_list(result.get("bindingFailureConditions")), p
        )
        for k, tol in enumerate(as_list(result.get("tolerations"))):
            if isinstance(tol, dict):
                yield from toleration_findings(tol, p.child("tolerations").index(k))
        if isinstance(result.get("shareID"), str):
            yield from uid_findings(result["shareID"], p.child("shareID"))
        for key, quantity in as_dict(result.get("consumedCapacity")).items():
            try:
                parse_quantity(quantity)
            except (ValueError, TypeError) as err:
                yield Finding(p.child("consumedCapacity").key(str(key)), fe.invalid(quantity, str(err)))
        skip = result.get("skipNodeOperations")
        if isinstance(skip, list):
            yield from skip_node_operations_findings(skip, str(p.child("skipNodeOperations")))


@object_rule("claim-status.admin-access")
def admin_access(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    alloc = new_allocation(obj, ctx)
    if alloc is None or ctx.namespace_labels is None:
        return
    if ctx.namespace_labels.get(ADMIN_ACCESS_LABEL) == "true":
        return
    for i, result in enumerate(as_list(as_dict(alloc.get("devices")).get("results"))):
        if isinstance(result, dict) and result.get("adminAccess") is True:
            yield Finding(
                _ALLOCATION.child("devices", "results").index(i).child("adminAccess"),
                fe.forbidden(
                    f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the containing namespace"
                ),
            )
            return  # upstream (AuthorizedForAdminStatus) reports the first result only


@object_rule("claim-status.config")
def config(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    alloc = new_allocation(obj, ctx)
    if alloc is None:
        return
    path = _ALLOCATION.child("devices", "config")
    items = as_list(as_dict(alloc.get("devices")).get("config"))
    if len(items) > MAX_ALLOCATION_CONFIG:
        yield Finding(path, fe.too_many(len(items), MAX_ALLOCATION_CONFIG))
        return
    known = request_names(obj)
    for i, entry in enumerate(items):
        if not isinstance(entry, dict):
            continue
        p = path.index(i)
        source = entry.get("source", "")
        if not source:
            yield Finding(p.child("source"), fe.required())
        elif source not in ("FromClaim", "FromClass"):
            yield Finding(p.child("source"), fe.not_supported(source, ("FromClaim", "FromClass")))
        yield from _request_refs_findings(as_list(entry.get("requests")), p.child("requests"), known)
        opaque = entry.get("opaque")
        if not isinstance(opaque, dict):
            yield Finding(p.child("opaque"), fe.required())
            continue
        if isinstance(opaque.get("driver"), str):
            for msg in fe.driver_name_errors(opaque["driver"]):
                yield Finding(p.child("opaque", "driver"), msg)
        if "parameters" in opaque:
            yield from raw_extension_findings(
                opaque["parameters"], p.child("opaque", "parameters"), MAX_RAW_BYTES
            )


@object_rule("claim-status.node-selector")
def node_selector(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    alloc = new_allocation(obj, ctx)
    if alloc is None or not isinstance(alloc.get("nodeSelector"), dict):
        return
    yield from node_selector_findings(alloc["nodeSelector"], str(_ALLOCATION.child("nodeSelector")))


@object_rule("claim-status.reserved-for")
def reserved_for(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    items = as_dict(obj.get("status")).get("reservedFor")
    if not isinstance(items, list) or not items:
        return
    path = Path("status").child("reservedFor")
    if len(items) > MAX_RESERVED_FOR:
        yield Finding(path, fe.too_many(len(items), MAX_RESERVED_FOR))
    else:
        seen: set[Any] = set()
        for i, ref in enumerate(items):
            if not isinstance(ref, dict):
                continue
            for name in ("resource", "name", "uid"):
                if not ref.get(name):
                    yield Finding(path.index(i).child(name), fe.required())
            uid = ref.get("uid", "")
            if uid in seen:
                yield Finding(path.index(i), fe.duplicate(uid))
            seen.add(uid)
    if _allocation(obj) is None:
        yield Finding(path, fe.forbidden("may not be specified when `allocated` is not set"))


@object_rule("claim-status.devices")
def devices(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    items = as_dict(obj.get("status")).get("devices")
    if not isinstance(items, list):
        return
    path = Path("status").child("devices")
    allocated = allocated_keys(obj)
    # On update the server silently drops entries of devices that were allocated before and no longer are.
    dropped = allocated_keys(ctx.old) - allocated if ctx.old is not None else set()
    seen: set[tuple[Any, Any, Any, Any]] = set()
    for i, entry in enumerate(items):
        if not isinstance(entry, dict):
            continue
        p = path.index(i)
        key = device_key(entry)
        if key in dropped:
            continue
        for name, check in (
            ("driver", fe.driver_name_errors),
            ("pool", fe.pool_name_errors),
            ("device", fe.device_name_errors),
        ):
            if isinstance(entry.get(name), str):
                for msg in check(entry[name]):
                    yield Finding(p.child(name), msg)
        if isinstance(entry.get("shareID"), str):
            yield from uid_findings(entry["shareID"], p.child("shareID"))
        if key not in allocated:
            yield Finding(p, fe.invalid(_render_key(key), "must be an allocated device in the claim"))
        conds = entry.get("conditions")
        if isinstance(conds, list):
            if len(conds) > MAX_DEVICE_CONDITIONS:
                yield Finding(p.child("conditions"), fe.too_many(len(conds), MAX_DEVICE_CONDITIONS))
            yield from conditions_findings(conds, p.child("conditions"))
        if "data" in entry:
            yield from raw_extension_findings(entry["data"], p.child("data"), MAX_RAW_BYTES)
        if key in seen:
            yield Finding(p, fe.duplicate(_render_key(key)))
        seen.add(key)


@object_rule("claim-status.network-data")
def network_data(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for i, entry in enumerate(as_list(as_dict(obj.get("status")).get("devices"))):
        data = as_dict(entry).get("networkData")
        if not isinstance(data, dict):
            continue
        p = Path("status").child("devices").index(i).child("networkData")
        name = data.get("interfaceName", "")
        if isinstance(name, str) and fe.byte_len(name) > MAX_INTERFACE_NAME:
            yield Finding(p.child("interfaceName"), fe.too_long(MAX_INTERFACE_NAME))
        hw = data.get("hardwareAddress", "")
        if isinstance(hw, str) and fe.byte_len(hw) > MAX_HARDWARE_ADDRESS:
            yield Finding(p.child("hardwareAddress"), fe.too_long(MAX_HARDWARE_ADDRESS))
        ips = as_list(data.get("ips"))
        if len(ips) > MAX_IPS:
            yield Finding(p.child("ips"), fe.too_many(len(ips), MAX_IPS))
            continue
        seen: set[str] = set()
        for k, ip in enumerate(ips):
            if not isinstance(ip, str):
                continue
            for msg in fe.as_invalid(ip, interface_address(ip)):
                yield Finding(p.child("ips").index(k), msg)
            if ip in seen:
                yield Finding(p.child("ips").index(k), fe.duplicate(ip))
            seen.add(ip)
