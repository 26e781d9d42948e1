"""The rule registry: every rule has a stable id, a default severity and a documented field path.

Object rules see one object (`fn(obj, ctx) -> Iterator[Finding]`); inventory rules see the compact
records of every object in the input (`fn(inventory, ctx) -> Iterator[InventoryFinding]`).
docs/rules.md's rule table is generated from this registry (`draguard rules --format markdown`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from webhook.model.path import Path
from webhook.model.violation import Finding, Severity

if TYPE_CHECKING:  # the types only: the registry is read by layers that must not load the context
    from webhook.context import Context
    from webhook.state.inventory import Inventory

ObjectRuleFn = Callable[[dict[str, Any], "Context"], Iterable[Finding]]


@dataclass(frozen=True, slots=True)
class InventoryFinding:
    """A cross-object finding: which object (index into the inventory), where, what."""

    index: Hashable  # the object's key in the inventory (its position in a validate run)
    field: Path | str
    message: str
    severity: Severity | None = None  # this finding's own severity (None: the rule's)


InventoryRuleFn = Callable[["Inventory", "Context"], Iterable[InventoryFinding]]


@dataclass(frozen=True)
class Rule:
    id: str
    summary: str
    field: str
    severity: Severity
    kinds: tuple[str, ...]
    scope: str  # "object" | "inventory"
    tag: str  # "api" (API server rejects), "alloc" (allocator mishandles), "xobj", "lint", "schema", "skew", "input"


RULES: dict[str, Rule] = {}
OBJECT_RULES: dict[str, list[tuple[Rule, ObjectRuleFn]]] = {}
INVENTORY_RULES: list[tuple[Rule, InventoryRuleFn]] = []


def declare(
    rule_id: str,
    *,
    summary: str,
    field: str,
    severity: Severity | str = Severity.ERROR,
    kinds: Iterable[str] = (),
    scope: str = "object",
    tag: str = "api",
) -> Rule:
    """Register a rule id without a function (rules emitted by the loader or the schema layer)."""
    if rule_id in RULES:
        raise ValueError(f"rule id {rule_id!r} registered twice")
    r = Rule(rule_id, summary, field, Severity(severity), tuple(kinds), scope, tag)
    RULES[rule_id] = r
    return r


def object_rule(
    rule_id: str,
    *,
    kinds: Iterable[str],
    summary: str,
    field: str,
    severity: Severity | str = Severity.ERROR,
    tag: str = "api",
) -> Callable[[ObjectRuleFn], ObjectRuleFn]:
    """Decorator: `fn(obj, ctx)` yields `Finding(field, message)` for one object of the given kinds."""

    def register(fn: ObjectRuleFn) -> ObjectRuleFn:
        r = declare(rule_id, summary=summary, field=field, severity=severity, kinds=kinds, tag=tag)
        for kind in r.kinds:
            OBJECT_RULES.setdefault(kind, []).append((r, fn))
        fn.rule = r  # type: ignore[attr-defined]
        return fn

    return register


def inventory_rule(
    rule_id: str,
    *,
    summary: str,
    field: str,
    severity: Severity | str = Severity.ERROR,
    kinds: Iterable[str] = (),
    tag: str = "xobj",
) -> Callable[[InventoryRuleFn], InventoryRuleFn]:
    """Decorator: `fn(inventory, ctx)` yields `InventoryFinding(index, field, message)`."""

    def register(fn: InventoryRuleFn) -> InventoryRuleFn:
        r = declare(
            rule_id, summary=summary, field=field, severity=severity, kinds=kinds, scope="inventory", tag=tag
        )
        INVENTORY_RULES.append((r, fn))
        fn.rule = r  # type: ignore[attr-defined]
        return fn

    return register


def findings(fn: Callable[..., Iterable[Finding]], *args: Any) -> Iterator[Finding]:
    """Run a rule function and return its findings as a list-backed iterator (helper for tests)."""
    return iter(list(fn(*args)))
