"""Selector lint of one object, whatever devices the input has: a fully-qualified attribute or capacity name
looked up as a domain (`device.attributes["dra.net/rdma"]`). The keys of `device.attributes` and
`device.capacity` are domains (which have no `/`); an attribute `dra.net/rdma` is
`device.attributes["dra.net"].rdma`. The lookup of a domain no device has is an empty map, so a field
selected on it is a runtime error on every device (unguarded) or false (guarded), and `"dra.net/rdma" in
device.attributes` is always false. The lint rules against the input's devices are in
webhook.rules.selectorlint."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from webhook.cel.compiler import Compiled, compile_selector
from webhook.cel.uses import Qualified
from webhook.config.context import Context
from webhook.model.names import go_quote
from webhook.model.violation import Finding
from webhook.rules.facts import ATTRIBUTE_TYPES, ClaimFacts, ClassFacts, SelectorFacts, facts_of
from webhook.rules.registry import object_rule

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _fixed(q: Qualified) -> str:
    """`device.attributes["dra.net"].rdma` for the key "dra.net/rdma" (a CEL index for an id that is not
    an identifier)."""
    domain, _, ident = q.key.rpartition("/")
    tail = f".{ident}" if _IDENT.fullmatch(ident) else f"[{go_quote(ident)}]"
    return f"device.{q.map}[{go_quote(domain)}]{tail}"


def _qualified_message(q: Qualified) -> str:
    what = f"device.{q.map}[{go_quote(q.key)}]"
    if q.membership:
        return (
            f"`{go_quote(q.key)} in device.{q.map}` is false on every device: the keys of device.{q.map} are "
            f"domains, which have no `/` (a fully-qualified name is <domain>/<id>); did you mean "
            f"`has({_fixed(q)})`?"
        )
    if q.accessor and not q.guarded:
        effect = (
            f"selecting `{q.accessor}` on it is a runtime error (no such key) on every device it is evaluated "
            "on: the scheduler aborts the allocation with it"
        )
    else:
        effect = "the selector is false on every device"
    plain = (
        f" (an attribute's value is a plain CEL value: no `.{q.accessor}`)"
        if q.accessor in ATTRIBUTE_TYPES
        else ""
    )
    return (
        f"`{what}` is never present: the keys of device.{q.map} are domains, which have no `/` (a "
        f"fully-qualified name is <domain>/<id>), so it is an empty map and {effect}; did you mean "
        f"`{_fixed(q)}`{plain}?"
    )


def _selectors_of_object(obj: dict[str, Any]) -> list[SelectorFacts]:
    f = facts_of(obj, [0])
    if isinstance(f, ClassFacts):
        return list(f.selectors)
    if isinstance(f, ClaimFacts):
        return [s for r in f.requests for s in r.selectors]
    return []


@object_rule("selector.qualified-name-key")
def qualified_name_key(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    for sel in _selectors_of_object(obj):
        ctx.check_deadline()  # a compilation (usually a cache hit: the object's own rules compiled it)
        c = compile_selector(
            sel.expression,
            list_attributes=bool(ctx.enabled("DRAListTypeAttributes")),
            consumable_capacity=bool(ctx.enabled("DRAConsumableCapacity")),
            check_cost=False,
        )
        if not isinstance(c, Compiled):
            continue  # a compile error: the selector rules report it
        seen: set[tuple[str, str]] = set()
        for q in c.uses.qualified:
            if (q.map, q.key) not in seen:
                seen.add((q.map, q.key))
                yield Finding(sel.path, _qualified_message(q))
