"""The rule functions: each attaches to an id of the catalogue (webhook/model/catalogue.py, which gives
its default severity, kinds and documented field path).

Object rules see one object (`fn(obj, ctx) -> Iterator[Finding]`); inventory rules see the compact
records of every object in the input (`fn(inventory, ctx) -> Iterator[InventoryFinding]`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from webhook.model.catalogue import RULES, Rule
from webhook.model.path import Path
from webhook.model.violation import Finding, Severity

if TYPE_CHECKING:  # the types only: the registry is read by layers that must not load the context
    from webhook.config.context import Context
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


# filled by the rule modules' decorators; read them through object_rules()/inventory_rules(), which load
# every rule module first
OBJECT_RULES: dict[str, list[tuple[Rule, ObjectRuleFn]]] = {}
INVENTORY_RULES: list[tuple[Rule, InventoryRuleFn]] = []
_ATTACHED: set[str] = set()


def _load() -> None:
    if "webhook.rules.catalog" not in sys.modules:
        importlib.import_module("webhook.rules.catalog")  # imports every rule module of this package


def object_rules(kind: str) -> Sequence[tuple[Rule, ObjectRuleFn]]:
    """The object rules of `kind` with their functions, in the order they run."""
    _load()
    return OBJECT_RULES.get(kind, ())


def inventory_rules() -> Sequence[tuple[Rule, InventoryRuleFn]]:
    """The inventory (cross-object) rules with their functions, in the order they run."""
    _load()
    return INVENTORY_RULES


def _attach(rule_id: str, scope: str) -> Rule:
    r = RULES.get(rule_id)
    if r is None:
        raise ValueError(f"rule id {rule_id!r} is not in webhook/model/catalogue.py")
    if r.scope != scope:
        raise ValueError(f"rule {rule_id!r} is declared as an {r.scope} rule")
    if rule_id in _ATTACHED:
        raise ValueError(f"rule {rule_id!r} has two functions")
    _ATTACHED.add(rule_id)
    return r


def object_rule(rule_id: str) -> Callable[[ObjectRuleFn], ObjectRuleFn]:
    """Decorator: `fn(obj, ctx)` yields `Finding(field, message)` for one object of the kinds the
    catalogue gives the rule."""

    def register(fn: ObjectRuleFn) -> ObjectRuleFn:
        r = _attach(rule_id, "object")
        for kind in r.kinds:
            OBJECT_RULES.setdefault(kind, []).append((r, fn))
        fn.rule = r  # type: ignore[attr-defined]
        return fn

    return register


def inventory_rule(rule_id: str) -> Callable[[InventoryRuleFn], InventoryRuleFn]:
    """Decorator: `fn(inventory, ctx)` yields `InventoryFinding(index, field, message)`."""

    def register(fn: InventoryRuleFn) -> InventoryRuleFn:
        r = _attach(rule_id, "inventory")
        INVENTORY_RULES.append((r, fn))
        fn.rule = r  # type: ignore[attr-defined]
        return fn

    return register


def findings(fn: Callable[..., Iterable[Finding]], *args: Any) -> Iterator[Finding]:
    """Run a rule function and return its findings as a list-backed iterator (helper for tests)."""
    return iter(list(fn(*args)))
