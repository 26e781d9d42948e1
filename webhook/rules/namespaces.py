"""Offline rules about the Namespaces of the input (a kind draguard does not validate, but whose labels
and placement matter): admin access checked against the namespace's label, and objects that a file
meant for the Namespace it creates but that land elsewhere."""

from __future__ import annotations

from collections.abc import Iterator

from webhook.config.context import Context
from webhook.rules.claim import ADMIN_LABEL
from webhook.rules.facts import ClaimFacts, NamespaceFacts, RunFacts
from webhook.rules.registry import InventoryFinding, inventory_rule
from webhook.state.inventory import Inventory

NAMESPACED = ("ResourceClaim", "ResourceClaimTemplate", "Pod")


def _facts(ctx: Context) -> RunFacts | None:
    facts = ctx.facts
    return facts if isinstance(facts, RunFacts) else None


@inventory_rule("claim.admin-access-namespace")
def admin_access_namespace(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
    facts = _facts(ctx)
    if facts is None or not facts.namespaces or not ctx.enabled("DRAAdminAccess"):
        return
    namespaces: dict[str, NamespaceFacts] = {}
    for ns in facts.namespaces:
        namespaces.setdefault(ns.name, ns)
    for i, f in enumerate(facts.facts):
        if not isinstance(f, ClaimFacts) or f.namespace is None or f.namespace not in namespaces:
            continue
        ns = namespaces[f.namespace]
        if ns.labels.get(ADMIN_LABEL) == "true":
            continue
        admin = next((r.admin_path for r in f.requests if r.admin_path), "")
        if not admin:
            continue
        yield InventoryFinding(
            i,
            admin,  # upstream's path (`requests[i].adminAccess`), as claim.admin-access reports it
            "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label "
            f"on the containing namespace: Namespace {ns.name} ({ns.source}:{ns.line}) does not have it; label "
            f'it `{ADMIN_LABEL}: "true"` (admins only) or drop adminAccess',
        )


@inventory_rule("meta.namespace-implied")
def namespace_implied(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
    facts = _facts(ctx)
    if facts is None or not facts.namespaces:
        return
    by_file: dict[str, list[NamespaceFacts]] = {}
    for ns in facts.namespaces:
        by_file.setdefault(ns.source, []).append(ns)
    for i, (source, kind, namespace) in enumerate(facts.objects):
        created = by_file.get(source)
        if not created or len(created) != 1 or kind not in NAMESPACED or namespace:
            continue
        ns = created[0]
        yield InventoryFinding(
            i,
            "metadata.namespace",
            f"this file creates Namespace {ns.name} (line {ns.line}), but this {kind} has no metadata.namespace: "
            f"kubectl applies it to the current context's namespace (usually default), not to {ns.name}; set "
            f"`namespace: {ns.name}`",
        )
