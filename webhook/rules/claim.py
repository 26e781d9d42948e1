"""Rules for ResourceClaim `spec` and ResourceClaimTemplate `spec.spec` (ported from upstream
`validateResourceClaimSpec` and friends), plus helpers DeviceClass rules share (selectors, opaque config)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.cel.compiler import MAX_COST, CompileError, compile_selector
from webhook.config.context import Context
from webhook.model import names
from webhook.model.jsontext import json_size
from webhook.model.path import Path
from webhook.model.plain import as_list
from webhook.model.violation import Finding
from webhook.rules.registry import object_rule

KINDS = ("ResourceClaim", "ResourceClaimTemplate")
MAX_REQUESTS = MAX_SELECTORS = MAX_CONSTRAINTS = MAX_CONFIG = MAX_DERIVED = 32
MAX_SUBREQUESTS = 8
MAX_TOLERATIONS = 16  # documented; no upstream validation enforces it
MAX_OPAQUE_PARAMETERS = 10 * 1024
ADMIN_LABEL = "resource.kubernetes.io/admin-access"
EFFECTS = ("NoExecute", "NoSchedule", "None")  # sorted, as upstream lists them
REF_MSG = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)

Request = tuple[dict[str, Any], Path, str, bool]  # (exact or sub request, its path, ref name, is_sub)


# ---- shared helpers ------------------------------------------------------------------------------


def claim_spec(obj: dict[str, Any]) -> tuple[dict[str, Any], Path]:
    """The ResourceClaimSpec and its path (`spec`, or `spec.spec` in a template)."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "ResourceClaimTemplate":
        return spec.get("spec") or {}, Path("spec").child("spec")
    return spec, Path("spec")


def _active(obj: dict[str, Any], ctx: Context) -> tuple[dict[str, Any], Path] | None:
    """The device claim to check: None on updates (spec is immutable; upstream only compares it)."""
    if ctx.operation == "UPDATE" and ctx.old is not None:
        return None
    spec, path = claim_spec(obj)
    return spec.get("devices") or {}, path.child("devices")


def too_many(path: Path, items: list[Any], limit: int) -> Finding | None:
    if len(items) > limit:
        return Finding(path, f"Too many: {len(items)}: must have at most {limit} items")
    return None


def invalid(path: Path, value: str, messages: list[str]) -> Iterator[Finding]:
    for m in messages:
        yield Finding(path, names.render(value, m))


def requests_of(devices: dict[str, Any], path: Path) -> Iterator[Request]:
    """Every exact request and subrequest (skipped when its list is over the limit, as upstream)."""
    reqs = as_list(devices.get("requests"))
    if len(reqs) > MAX_REQUESTS:
        return
    for i, r in enumerate(reqs):
        rp = path.child("requests").index(i)
        name = str(r.get("name", ""))
        first = as_list(r.get("firstAvailable"))
        exact = r.get("exactly")
        if first and exact is not None:
            continue
        if exact is not None:
            yield exact, rp.child("exactly"), name, False
        elif 0 < len(first) <= MAX_SUBREQUESTS:
            for j, sub in enumerate(first):
                yield sub, rp.child("firstAvailable").index(j), f"{name}/{sub.get('name', '')}", True


def request_names(devices: dict[str, Any]) -> dict[str, set[str] | None]:
    out: dict[str, set[str] | None] = {}
    for r in as_list(devices.get("requests")):
        first = as_list(r.get("firstAvailable"))
        out[str(r.get("name", ""))] = {str(s.get("name", "")) for s in first} if first else None
    return out


def _has_ref(known: dict[str, set[str] | None], ref: str) -> bool:
    parts = ref.split("/")
    if len(parts) > 2 or parts[0] not in known:
        return False
    return len(parts) == 1 or parts[1] in (known[parts[0]] or set())


def request_refs(refs: list[Any], path: Path, known: dict[str, set[str] | None]) -> Iterator[Finding]:
    """`requests` of a constraint or config entry: ≤32, unique, each `req` or `req/sub` that exists."""
    over = too_many(path, refs, MAX_REQUESTS)
    if over:
        yield over
        return
    seen: set[str] = set()
    for j, ref in enumerate(refs):
        ref = str(ref)
        p = path.index(j)
        segments = ref.split("/")
        if len(segments) > 2:
            yield Finding(p, names.render(ref, REF_MSG))
        else:
            for seg in segments:
                yield from invalid(p, seg, names.dns_label(seg))
            if not _has_ref(known, ref):
                yield Finding(p, names.render(ref, REF_MSG))
        if ref in seen:
            yield Finding(p, f"Duplicate value: {names.quote(ref)}")
        seen.add(ref)


def fully_qualified_name(value: str, path: Path) -> Iterator[Finding]:
    # Like upstream validateFullyQualifiedName, more than one "/" is accepted (an upstream TODO).
    yield from invalid(path, value, names.attribute_key(value, fully_qualified=True))


def selector_findings(selectors: list[Any], path: Path, ctx: Context) -> Iterator[Finding]:
    """A `selectors` list: ≤32, each with `cel`, each expression compiling (length, type, cost)."""
    over = too_many(path, selectors, MAX_SELECTORS)
    if over:
        yield over
        return
    for k, sel in enumerate(selectors):
        cel = (sel or {}).get("cel")
        if cel is None:
            yield Finding(path.index(k).child("cel"), "Required value")
            continue
        expr = cel.get("expression")
        if not isinstance(expr, str):
            continue  # missing: reported by the schema layer
        ctx.check_deadline()  # a compilation costs up to ~50 ms (10 KiB): the run's deadline is checked
        yield from expression_findings(expr, path.index(k).child("cel", "expression"), ctx)


def expression_findings(expr: str, path: Path, ctx: Context) -> Iterator[Finding]:
    # Compiled without the cost limit, which is checked here (the same comparison the compiler makes):
    # with every gate on this is the scheduler's compilation of the stored expression (the allocator's
    # cache key), so `simulate` compiles such a selector once for validation and allocation.
    result = compile_selector(
        expr,
        list_attributes=ctx.enabled("DRAListTypeAttributes"),
        consumable_capacity=ctx.enabled("DRAConsumableCapacity"),
        check_cost=False,
    )
    if not isinstance(result, CompileError) and result.cost > MAX_COST:
        result = CompileError("Forbidden", "too complex, exceeds cost limit")
    if isinstance(result, CompileError):
        if result.kind == "TooLong":
            yield Finding(path, f"Too long: {result.message}")
        elif result.kind == "Forbidden":
            yield Finding(path, f"Forbidden: {result.message}")
        else:
            yield Finding(path, f"Invalid value: {names.go_quote(expr)}: {result.message}")


def opaque_findings(entry: dict[str, Any], path: Path, stored: bool) -> Iterator[Finding]:
    """`opaque` of a config entry: required; driver name; parameters a JSON object ≤10240 bytes."""
    opaque = entry.get("opaque")
    if opaque is None:
        yield Finding(path.child("opaque"), "Required value")
        return
    op = path.child("opaque")
    driver = opaque.get("driver")
    if isinstance(driver, str) and driver:
        yield from invalid(op.child("driver"), driver, names.driver_name(driver))
    if "parameters" not in opaque:
        return  # required: reported by the schema layer
    params = opaque["parameters"]
    pp = op.child("parameters")
    if params is None:
        yield Finding(pp, "Required value")
    elif not stored and json_size(params, MAX_OPAQUE_PARAMETERS) > MAX_OPAQUE_PARAMETERS:
        yield Finding(pp, f"Too long: must have at most {MAX_OPAQUE_PARAMETERS} bytes")
    elif not isinstance(params, dict):
        yield Finding(pp, 'Invalid value: "<value omitted>": must be a valid JSON object')


# ---- rules -----------------------------------------------------------------------------------------


@object_rule("claim.requests")
def check_requests(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    active = _active(obj, ctx)
    if active is None:
        return
    devices, path = active
    reqs = as_list(devices.get("requests"))
    rp = path.child("requests")
    over = too_many(rp, reqs, MAX_REQUESTS)
    if over:
        yield over
        return
    seen: set[str] = set()
    for i, r in enumerate(reqs):
        name = r.get("name")
        if isinstance(name, str):
            yield from invalid(rp.index(i).child("name"), name, names.dns_label(name))
        has_first, has_exact = bool(as_list(r.get("firstAvailable"))), r.get("exactly") is not None
        if not has_first and not has_exact:
            yield Finding(
                rp.index(i), "Required value: exactly one of `exactly` or `firstAvailable` is required"
            )
        elif has_first and has_exact:
            yield Finding(
                rp.index(i),
                "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, "
                "but multiple fields are set",
            )
        if isinstance(name, str):
            if name in seen:
                yield Finding(rp.index(i), f"Duplicate value: {names.quote(name)}")
            seen.add(name)


@object_rule("claim.first-available")
def check_first_available(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    active = _active(obj, ctx)
    if active is None:
        return
    devices, path = active
    reqs = as_list(devices.get("requests"))
    if len(reqs) > MAX_REQUESTS:
        return
    for i, r in enumerate(reqs):
        subs = as_list(r.get("firstAvailable"))
        if not subs or r.get("exactly") is not None:
            continue
        fp = path.child("requests").index(i).child("firstAvailable")
        over = too_many(fp, subs, MAX_SUBREQUESTS)
        if over:
            yield over
            continue
        seen: set[str] = set()
        for j, sub in enumerate(subs):
            name = sub.get("name")
            if not isinstance(name, str):
                continue
            yield from invalid(fp.index(j).child("name"), name, names.dns_label(name))
            if name in seen:
                yield Finding(fp.index(j), f"Duplicate value: {names.quote(name)}")
            seen.add(name)


@object_rule("claim.device-class-name")
def check_device_class_name(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    active = _active(obj, ctx)
    if active is None:
        return
    for req, rp, _, _ in requests_of(*active):
        name = req.get("deviceClassName")
        if name == "":
            yield Finding(rp.child("deviceClassName"), "Required value")
        elif isinstance(name, str):
            yield from invalid(rp.child("deviceClassName"), name, names.dns_subdomain(name))


@object_rule("claim.allocation-mode")
def check_allocation_mode(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    active = _active(obj, ctx)
    if active is None:
        return
    for req, rp, _, _ in requests_of(*active):
        mode = req.get("allocationMode", "ExactCount")
        count = req.get("count", 1 if mode == "ExactCount" else 0)
        if mode == "All":
            if count != 0:
                yield Finding(
                    rp.child("count"),
                    f"Invalid value: {count}: must not be specified when allocationMode is 'All'",
                )
        elif mode == "ExactCount":
            if isinstance(count, int) and count <= 0:
                yield Finding(rp.child("count"), f"Invalid value: {count}: must be greater than zero")
        else:
            yield Finding(
                rp.child("allocationMode"),
                f'Unsupported value: {names.quote(str(mode))}: supported values: "All", "ExactCount"',
            )


@object_rule("claim.selectors")
def check_selectors(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    active = _active(obj, ctx)
    if active is None:
        return
    for req, rp, _, _ in requests_of(*active):
        yield from selector_findings(as_list(req.get("selectors")), rp.child("selectors"), ctx)


@object_rule("claim.tolerations")
def check_tolerations(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    active = _active(obj, ctx)
    if active is None:
        return
    for req, rp, _, _ in requests_of(*active):
        for k, tol in enumerate(as_list(req.get("tolerations"))):
            yield from toleration_findings(tol or {}, rp.child("tolerations").index(k))


def toleration_findings(tol: dict[str, Any], tp: Path) -> Iterator[Finding]:
    key, value = str(tol.get("key") or ""), str(tol.get("value") or "")
    if key:
        yield from invalid(tp.child("key"), key, names.label_key(key))
    op = tol.get("operator", "Equal")
    if op == "Exists":
        if value:
            yield Finding(tp.child("value"), names.render(value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        yield from invalid(tp.child("value"), value, names.label_value(value))
    elif op == "":
        yield Finding(tp.child("operator"), "Required value")
    else:
        yield Finding(
            tp.child("operator"),
            f'Unsupported value: {names.quote(str(op))}: supported values: "Equal", "Exists"',
        )
    effect = tol.get("effect") or ""
    if effect and effect not in EFFECTS:
        yield Finding(
            tp.child("effect"),
            f"Unsupported value: {names.quote(str(effect))}: supported values: "
            + ", ".join(f'"{e}"' for e in EFFECTS),
        )


@object_rule("claim.tolerations-max")
def check_tolerations_max(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    active = _active(obj, ctx)
    if active is None:
        return
    for req, rp, _, _ in requests_of(*active):
        over = too_many(rp.child("tolerations"), as_list(req.get("tolerations")), MAX_TOLERATIONS)
        if over:
            yield Finding(over.field, over.message + " (documented limit; the API server accepts more)")


@object_rule("claim.capacity-requests")
def check_capacity_requests(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    from webhook.model.quantity import parse_quantity

    active = _active(obj, ctx)
    if active is None:
        return
    for req, rp, _, _ in requests_of(*active):
        cp = rp.child("capacity", "requests")
        for key, value in ((req.get("capacity") or {}).get("requests") or {}).items():
            yield from invalid(cp, str(key), names.attribute_key(str(key)))
            try:
                q = parse_quantity(value)
            except (ValueError, TypeError) as e:
                yield Finding(cp.key(str(key)), names.render(str(value), str(e)))
                continue
            if q.sign() < 0:
                yield Finding(
                    cp.key(str(key)), names.render(str(value), "must be greater than or equal to 0")
                )


def _referencing_entries(
    obj: dict[str, Any], ctx: Context, field: str, maximum: int
) -> Iterator[tuple[Any, Path]]:
    """Entries of `spec.devices.<field>` (constraints, config) with their path, preceded by the findings
    on each entry's `requests` references (yielded as `(Finding, path)`); a list over `maximum` yields
    only its Too-many finding, as upstream stops there."""
    active = _active(obj, ctx)
    if active is None:
        return
    devices, path = active
    items, lp = as_list(devices.get(field)), path.child(field)
    over = too_many(lp, items, maximum)
    if over:
        yield over, lp
        return
    known = request_names(devices)
    for i, entry in enumerate(items):
        ep = lp.index(i)
        for f in request_refs(as_list(entry.get("requests")), ep.child("requests"), known):
            yield f, ep
        yield entry, ep


@object_rule("claim.constraints")
def check_constraints(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for c, cp in _referencing_entries(obj, ctx, "constraints", MAX_CONSTRAINTS):
        if isinstance(c, Finding):
            yield c
        elif c.get("matchAttribute") is not None:
            yield from fully_qualified_name(str(c["matchAttribute"]), cp.child("matchAttribute"))
        elif c.get("distinctAttribute") is not None:
            yield from fully_qualified_name(str(c["distinctAttribute"]), cp.child("distinctAttribute"))
        elif ctx.enabled("DRAConsumableCapacity"):
            yield Finding(
                cp,
                'Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, '
                "but multiple fields are set",
            )
        else:
            yield Finding(cp.child("matchAttribute"), "Required value")


@object_rule("claim.config")
def check_config(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for c, cp in _referencing_entries(obj, ctx, "config", MAX_CONFIG):
        if isinstance(c, Finding):
            yield c
        else:
            yield from opaque_findings(c or {}, cp, stored=False)


@object_rule("claim.admin-access")
def check_admin_access(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    """As upstream's AuthorizedForAdmin (claims and templates alike): the first exact request with
    `adminAccess: true`, reported at `spec.devices.requests[i].adminAccess` (upstream's path, without
    `exactly`, also for a template), once; only when the namespace's labels are known."""
    labels = ctx.namespace_labels
    active = _active(obj, ctx)
    if labels is None or active is None or labels.get(ADMIN_LABEL) == "true":
        return
    for i, r in enumerate(as_list(active[0].get("requests"))):
        exact = r.get("exactly") if isinstance(r, dict) else None
        if isinstance(exact, dict) and exact.get("adminAccess") is True:
            yield Finding(
                Path("spec").child("devices").child("requests").index(i).child("adminAccess"),
                "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
                "label on the containing namespace",
            )
            return


def _constraint_attrs(devices: dict[str, Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for c in as_list(devices.get("constraints")):
        attr = c.get("matchAttribute") or c.get("distinctAttribute")
        if not attr:
            continue
        for ref in as_list(c.get("requests")) or [""]:
            out.setdefault(str(ref), set()).add(str(attr))
    return out


def _referenced(attr: str, ref: str, used: dict[str, set[str]]) -> bool:
    parent = ref.split("/", 1)[0]
    return any(attr in used.get(k, set()) for k in ("", ref, parent))


@object_rule("claim.derived-attributes")
def check_derived_attributes(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    active = _active(obj, ctx)
    if active is None:
        return
    used = _constraint_attrs(active[0])
    for req, rp, ref, _ in requests_of(*active):
        attrs, dp = as_list(req.get("derivedAttributes")), rp.child("derivedAttributes")
        over = too_many(dp, attrs, MAX_DERIVED)
        if over:
            yield over
            continue
        seen: set[str] = set()
        for k, a in enumerate(attrs):
            name, expr = str(a.get("name") or ""), a.get("expression")
            if name:
                yield from fully_qualified_name(name, dp.index(k).child("name"))
                if not _referenced(name, ref, used):
                    yield Finding(
                        dp.index(k).child("name"),
                        names.render(
                            name,
                            "must be referenced by at least one matchAttribute or distinctAttribute "
                            "constraint targeting this request",
                        ),
                    )
            if isinstance(expr, str) and len(expr.encode()) > 10 * 1024:
                yield Finding(dp.index(k).child("expression"), "Too long: must have at most 10240 bytes")
            if name in seen:
                yield Finding(dp.index(k), f"Duplicate value: {names.quote(name)}")
            seen.add(name)


_TEMPLATE_META_ALLOWED = {"labels", "annotations"}


@object_rule("claim.template-metadata")
def check_template_metadata(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    if ctx.operation == "UPDATE" and ctx.old is not None:
        return
    meta, mp = (obj.get("spec") or {}).get("metadata") or {}, Path("spec").child("metadata")
    for key in sorted(meta):
        if key not in _TEMPLATE_META_ALLOWED and meta[key] not in (None, "", [], {}, 0):
            yield Finding(mp.child(key), "Forbidden: cannot be set for a resource claim template")
    for k, v in sorted((meta.get("labels") or {}).items()):
        yield from invalid(mp.child("labels"), str(k), names.label_key(str(k)))
        yield from invalid(mp.child("labels"), str(v), names.label_value(str(v)))
    for k in sorted(meta.get("annotations") or {}):
        yield from invalid(mp.child("annotations"), str(k), names.label_key(str(k).lower()))
