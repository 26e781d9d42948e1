"""Selector lint against the devices of the input (or the cluster of `--cluster`): what the scheduler would
trip on. A CEL selector that reads an attribute or capacity no device publishes (a runtime error on every
device it is evaluated on, unless guarded), that uses an attribute the wrong way (`.bool` on a string
attribute, a string compared with a bool literal), or that matches no device at all — each a warning with
a did-you-mean from the names and values the devices do publish.

Offline only (`ctx.facts`, webhook.rules.facts). Without `--cluster`, a selector is only judged against
drivers the input has devices of: a class for another driver is assumed to be served elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from webhook.cel.compiler import Compiled, compile_selector
from webhook.cel.runtime import CelRuntimeError, SelectorEvaluator
from webhook.cel.uses import Use, Uses
from webhook.config.context import Context
from webhook.model.budget import Deadline
from webhook.model.didyoumean import closest
from webhook.model.names import go_quote, quote
from webhook.model.text import clip, listing, snippet
from webhook.model.violation import Severity
from webhook.rules.facts import (
    ATTRIBUTE_TYPES,
    ClaimFacts,
    ClassFacts,
    Facts,
    RunFacts,
    SelectorFacts,
    SliceFacts,
)
from webhook.rules.registry import InventoryFinding, inventory_rule
from webhook.state.inventory import Inventory

MAX_SAMPLES = 20_000  # devices selectors are evaluated on (more: no "matches nothing" conclusion)
MAX_EVALUATIONS = 400_000  # selector evaluations per run for "matches nothing"
MAX_SECONDS = 2.0  # wall time those evaluations may take (within the run's deadline)

_CEL_TYPE = {"bool": "bool", "int": "int", "uint": "int", "double": "int", "string": "string"}


@dataclass
class Schema:
    """What the run's devices publish."""

    attributes: dict[str, dict[str, tuple[set[str], list[str]]]] = field(default_factory=dict)  # domain -> id
    capacities: dict[str, set[str]] = field(default_factory=dict)
    drivers: dict[str, int] = field(default_factory=dict)  # driver -> devices
    samples: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (driver, device)

    def domains(self) -> set[str]:
        return set(self.attributes) | set(self.capacities) | set(self.drivers)

    def names(self, which: str, domain: str) -> set[str]:
        if which == "attributes":
            return set(self.attributes.get(domain, {}))
        return set(self.capacities.get(domain, set()))


def schema_of(facts: RunFacts) -> Schema:
    s = Schema()
    for f in facts.slices():
        s.drivers[f.driver] = s.drivers.get(f.driver, 0) + f.devices
        for (domain, ident), (types, values) in f.attributes.items():
            t, v = s.attributes.setdefault(domain, {}).setdefault(ident, (set(), []))
            t.update(types)
            if len(v) < 16:
                v.extend(x for x in values if x not in v)
                del v[16:]
        for domain, ident in f.capacities:
            s.capacities.setdefault(domain, set()).add(ident)
        s.samples.extend((f.driver, d) for d in f.samples)
    return s


def _where(ctx: Context) -> str:
    return "the cluster" if ctx.whole_cluster else "the input"


@dataclass
class _Selector:
    index: int  # the object's position in the run
    path: str  # of the cel.expression
    expression: str
    owner: str  # "class X" / "claim ns/name"


MAX_SELECTORS = 2_000  # selectors linted per run (each analysed once; compiled here if no worker sent it)


def _all_selectors(facts: RunFacts, ctx: Context) -> Iterator[_Selector]:
    """Every selector of the run's classes and claims, the first MAX_SELECTORS, until the deadline."""
    deadline = ctx.deadline
    for n, sel in enumerate(_selectors_of(facts)):
        if n >= MAX_SELECTORS or (deadline is not None and deadline.expired()):
            return
        yield sel


def _selectors_of(facts: RunFacts) -> Iterator[_Selector]:
    for i, f in enumerate(facts.facts):
        if isinstance(f, ClassFacts):
            for s in f.selectors:
                yield _Selector(i, s.path, s.expression, f"DeviceClass {f.name}")
        elif isinstance(f, ClaimFacts):
            for r in f.requests:
                for s in r.selectors:
                    yield _Selector(i, s.path, s.expression, f"{f.kind} {f.name}")


def _gates(ctx: Context) -> tuple[bool, bool]:
    """The gates a selector compiles with here: DRAListTypeAttributes, DRAConsumableCapacity."""
    return bool(ctx.enabled("DRAListTypeAttributes")), bool(ctx.enabled("DRAConsumableCapacity"))


def _analysed(expression: str, gates: tuple[bool, bool]) -> Uses | None:
    """The lookups of a selector compiled as the selector rules compile it (no cost limit: the same
    cache entry); None when it does not compile."""
    c = compile_selector(expression, list_attributes=gates[0], consumable_capacity=gates[1], check_cost=False)
    return c.uses if isinstance(c, Compiled) else None


def selector_uses(facts: Iterable[Facts | None], ctx: Context) -> dict[tuple[str, bool, bool], Uses | None]:
    """The lint's analysis of the selectors of one file's facts, for a worker process to send with the
    file's results: the worker compiled them for the selector rules already (a cache hit here), so the
    run's own process, where the lint runs, does not compile them a second time. The first
    MAX_SELECTORS (the lint reads no more)."""
    gates = _gates(ctx)
    out: dict[tuple[str, bool, bool], Uses | None] = {}
    for f in facts:
        if len(out) >= MAX_SELECTORS:
            break
        if isinstance(f, ClassFacts):
            selectors: Iterable[SelectorFacts] = f.selectors
        elif isinstance(f, ClaimFacts):
            selectors = (s for r in f.requests for s in r.selectors)
        else:
            continue
        for s in selectors:
            key = (s.expression, *gates)
            if key not in out:
                out[key] = _analysed(s.expression, gates)
    return out


class _Lint:
    """Shared by the three rules of one run: the schema, the selectors' uses (None: does not compile)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.facts: RunFacts = ctx.facts
        self.schema = schema_of(self.facts)
        self.gates = _gates(ctx)
        self._uses: dict[str, Uses | None] = {}
        self.flagged: set[str] = set()  # expressions a finding already names: one finding each

    def uses(self, expression: str) -> Uses | None:
        if expression in self._uses:
            return self._uses[expression]
        key = (expression, *self.gates)
        got = self.facts.uses[key] if key in self.facts.uses else _analysed(expression, self.gates)
        self._uses[expression] = got
        return got

    def compiles(self, expression: str) -> bool:
        return self.uses(expression) is not None


def _lint(inventory: Inventory, ctx: Context) -> _Lint | None:
    facts = ctx.facts
    if not isinstance(facts, RunFacts) or not _has_selectors(facts) or not facts.slices():
        return None
    return inventory.memo(("selector-lint", id(facts)), lambda _inv: _Lint(ctx))


def _has_selectors(facts: RunFacts) -> bool:
    for f in facts.facts:
        if isinstance(f, ClassFacts) and f.selectors:
            return True
        if isinstance(f, ClaimFacts) and any(r.selectors for r in f.requests):
            return True
    return False


def _ref(use: Use) -> str:
    return f'device.{use.map}["{use.domain}"].{use.id}'


def _close(word: str, options: set[str]) -> str | None:
    return closest(word, options)


def _suggest(use: Use, schema: Schema) -> tuple[str, bool]:
    """A did-you-mean for a name no device publishes ("" when nothing is close), and whether it points
    at a likely slip (a close name, the other map of the same domain, a close domain) rather than only
    at the same name in an unrelated domain — which, without --cluster, says little: the devices of the
    domain the selector names may simply be elsewhere."""
    same = schema.names(use.map, use.domain)
    cand = _close(use.id, same)
    if cand:
        return f'device.{use.map}["{use.domain}"].{cand}', True
    other = "capacity" if use.map == "attributes" else "attributes"
    if use.id in schema.names(other, use.domain):
        return f'device.{other}["{use.domain}"].{use.id}', True
    close_domain = _close(use.domain, schema.domains())
    for domain in sorted(schema.domains()):
        if use.id in schema.names(use.map, domain):
            return f'device.{use.map}["{domain}"].{use.id}', domain == close_domain
    if close_domain and (
        not schema.names(use.map, close_domain) or use.id in schema.names(use.map, close_domain)
    ):
        return f'device.{use.map}["{close_domain}"].{use.id}', True
    return "", False


@inventory_rule("selector.unknown-attribute")
def unknown_attribute(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
    lint = _lint(inventory, ctx)
    if lint is None:
        return
    schema = lint.schema
    closed = bool(ctx.whole_cluster)
    for sel in _all_selectors(lint.facts, ctx):
        uses = lint.uses(sel.expression)
        if uses is None:
            continue
        seen: set[tuple[str, str, str]] = set()
        for use in uses.lookups:
            key = (use.map, use.domain, use.id)
            if key in seen:
                continue
            seen.add(key)
            known = use.domain in schema.domains()
            if known and use.id in schema.names(use.map, use.domain):
                continue
            hint, slip = _suggest(use, schema)
            if not known and not closed and not hint:
                continue  # a domain of devices that are not in the input: nothing to compare with
            what = "attribute" if use.map == "attributes" else "capacity"
            if known:
                n = schema.drivers.get(use.domain, 0)
                checked = f" ({n} devices of driver {use.domain} checked)" if n else ""
                head = f"no device in {_where(ctx)} publishes the {what} `{use.domain}/{use.id}`{checked}"
            else:
                head = f"no device in {_where(ctx)} publishes anything in domain `{use.domain}`"
            tail = (
                "; guarded by has() or optional chaining, the selector is false on every device"
                if use.guarded
                else "; unguarded, the lookup is a runtime error on every device it is evaluated on (the "
                "scheduler aborts the allocation with it)"
            )
            did = f"; did you mean `{hint}`?" if hint else ""
            lint.flagged.add(sel.expression)
            sure = closed or slip  # else the devices that publish it may be elsewhere: an info
            yield InventoryFinding(
                sel.index, sel.path, f"`{_ref(use)}`: {head}{tail}{did}", None if sure else Severity.INFO
            )


def _type_issue(use: Use, types: set[str], values: list[str]) -> str:
    shown = ", ".join(quote(v) if "string" in types else clip(v) for v in values[:3])
    shown += ", ..." if len(values) > 3 else ""
    kind = "/".join(sorted(types))
    article = "an" if kind[0] in "aeiou" else "a"
    about = f"`{_ref(use)}` is {article} {kind} attribute" + (f" ({shown})" if shown else "")
    if use.accessor in ATTRIBUTE_TYPES:
        return (
            f"{about}: attribute values are plain CEL values, so `.{use.accessor}` is a runtime error "
            f'("no such key: {use.accessor}") on every device that has it; compare the value itself, e.g. '
            f"`{_ref(use)} == {_example(types, values)}`"
        )
    for ckind, value in use.compared:
        want = _CEL_TYPE.get(ckind)
        if want is None or want in types or any(t.rstrip("s") == want for t in types):
            continue
        lit = _literal(ckind, value)
        fix = _fix(types, ckind, value)
        did = f"; did you mean `{_ref(use)} == {fix}`?" if fix else ""
        return f"{about}, compared with the {ckind} {lit}: the comparison is never true{did}"
    return ""


def _literal(kind: str, value: object) -> str:
    if kind == "string":
        return go_quote(str(value))
    if kind == "bool":
        return "true" if value else "false"
    return str(value)


def _example(types: set[str], values: list[str]) -> str:
    v = values[0] if values else ""
    if "string" in types:
        return go_quote(v or "...")
    return v or "..."


def _fix(types: set[str], kind: str, value: object) -> str:
    if "string" in types and kind in ("bool", "int", "uint", "double"):
        return go_quote(_literal(kind, value))
    if "bool" in types and kind == "string" and str(value).lower() in ("true", "false"):
        return str(value).lower()
    if "int" in types and kind == "string" and str(value).lstrip("-").isdigit():
        return str(int(str(value)))
    return ""


@inventory_rule("selector.attribute-type")
def attribute_type(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
    lint = _lint(inventory, ctx)
    if lint is None:
        return
    for sel in _all_selectors(lint.facts, ctx):
        uses = lint.uses(sel.expression)
        if uses is None:
            continue
        for use in uses.lookups:
            if use.map != "attributes":
                continue
            entry = lint.schema.attributes.get(use.domain, {}).get(use.id)
            if entry is None or not entry[0]:
                continue
            issue = _type_issue(use, entry[0], entry[1])
            if issue:
                lint.flagged.add(sel.expression)
                yield InventoryFinding(sel.index, sel.path, issue)


# --- matching no device ------------------------------------------------------------------------


class _Matcher:
    """Evaluates selectors on the run's devices (bounded by MAX_EVALUATIONS)."""

    def __init__(self, lint: _Lint, deadline: Deadline | None) -> None:
        self.lint = lint
        self.ev = SelectorEvaluator(list_attributes=lint.gates[0], consumable_capacity=lint.gates[1])
        self.left = MAX_EVALUATIONS
        self.stop = Deadline.after(MAX_SECONDS).earliest(deadline)
        self.memo: dict[tuple[str, ...], tuple[int, int, str] | None] = {}

    def count(self, expressions: tuple[str, ...]) -> tuple[int, int, str] | None:
        """(devices matching all `expressions`, devices whose evaluation failed, the first error), or None
        when the evaluation budget (evaluations, seconds, the run's deadline) ran out."""
        if expressions in self.memo:
            return self.memo[expressions]
        matched = failed = 0
        first = ""
        samples = self.lint.schema.samples
        if len(samples) * len(expressions) > self.left or self.stop.expired():
            self.memo[expressions] = None
            return None
        for n, (driver, dev) in enumerate(samples):
            if self.stop.expired():
                self.left = 0
                self.memo[expressions] = None
                return None
            ok = True
            for expr in expressions:
                self.left -= 1
                try:
                    if not self.ev.matches(expr, ("lint", n), driver, dev):
                        ok = False
                        break
                except CelRuntimeError as e:
                    ok = False
                    failed += 1
                    first = first or e.detail.split(". consider using", 1)[0]
                    break
            matched += ok
        got = (matched, failed, first)
        self.memo[expressions] = got
        return got


def _drivers_of(lint: _Lint, expressions: tuple[str, ...]) -> set[str]:
    """The drivers the expressions are about: compared with device.driver, or whose domain they read."""
    out: set[str] = set()
    for e in expressions:
        uses = lint.uses(e)
        if uses is None:
            continue
        out |= uses.drivers
        out |= {u.domain for u in uses.lookups if u.domain in lint.schema.drivers}
    return out


def _value_hints(lint: _Lint, expressions: tuple[str, ...]) -> list[tuple[str, bool]]:
    """Did-you-means for string literals compared with an attribute that never has that value (with
    whether a published value is close)."""
    hints = []
    for e in expressions:
        uses = lint.uses(e)
        for use in uses.lookups if uses is not None else ():
            entry = lint.schema.attributes.get(use.domain, {}).get(use.id)
            if entry is None:
                continue
            for ckind, value in use.compared:
                if ckind != "string" or str(value) in entry[1]:
                    continue
                cand = _close(str(value), set(entry[1]))
                if cand is not None:
                    hint = f"`{_ref(use)}` is never {quote(str(value))}: did you mean {quote(cand)}?"
                    hints.append((hint, True))
                else:
                    shown = ", ".join(quote(v) for v in entry[1][:5])
                    hints.append(
                        (f"`{_ref(use)}` is never {quote(str(value))} (the devices have {shown})", False)
                    )
    return hints


@inventory_rule("selector.matches-nothing")
def matches_nothing(inventory: Inventory, ctx: Context) -> Iterator[InventoryFinding]:
    lint = _lint(inventory, ctx)
    if lint is None or not lint.facts.complete or len(lint.schema.samples) > MAX_SAMPLES:
        return
    closed = bool(ctx.whole_cluster)
    matcher = _Matcher(lint, ctx.deadline)
    classes = lint.facts.classes()
    budget = MAX_SELECTORS
    for i, f in enumerate(lint.facts.facts):
        if budget <= 0 or matcher.stop.expired():
            return
        budget -= len(f.selectors) if isinstance(f, ClassFacts) else 0
        budget -= sum(len(r.selectors) for r in f.requests) if isinstance(f, ClaimFacts) else 0
        if isinstance(f, ClassFacts) and f.selectors:
            if any(s.expression in lint.flagged for s in f.selectors):
                continue
            exprs = tuple(s.expression for s in f.selectors)
            found = _judge(
                lint, matcher, exprs, closed, ctx, f"the selectors of DeviceClass {f.name}", of_class=True
            )
            if found:
                yield InventoryFinding(i, f.selectors[0].path, found[0], found[1])
        elif isinstance(f, ClaimFacts):
            for r in f.requests:
                if not r.selectors:
                    continue
                cls = classes.get(r.class_name)
                own = tuple(s.expression for s in r.selectors)
                exprs = (tuple(s.expression for s in cls.selectors) if cls else ()) + own
                if any(e in lint.flagged for e in exprs):
                    continue
                what = (
                    f"class {r.class_name} and this request's selectors together"
                    if cls
                    else "this request's selectors"
                )
                found = _judge(lint, matcher, exprs, closed, ctx, what, own)
                if found and _fallback_matches(lint, matcher, f, r, classes):
                    found = (
                        found[0].replace(
                            "a claim using it cannot be allocated",
                            "this alternative is never chosen, another one of the request matches (firstAvailable "
                            "falls back to it)",
                        ),
                        Severity.INFO,
                    )
                if found:
                    yield InventoryFinding(i, r.selectors[0].path, found[0], found[1])


def _fallback_matches(
    lint: _Lint, matcher: _Matcher, claim: ClaimFacts, r: Any, classes: dict[str, ClassFacts]
) -> bool:
    """Whether `r` is a subrequest of `firstAvailable` with a sibling that matches some device: then
    matching nothing is what an alternative may do (the scheduler tries the next one)."""
    base, sep, _ = r.path.rpartition(".firstAvailable[")
    if not sep:
        return False
    for other in claim.requests:
        if other is r or not other.path.startswith(base + ".firstAvailable["):
            continue
        cls = classes.get(other.class_name)
        if cls is None:
            continue
        exprs = tuple(s.expression for s in cls.selectors) + tuple(s.expression for s in other.selectors)
        if not all(lint.compiles(e) for e in exprs):
            continue
        got = matcher.count(exprs) if exprs else (1, 0, "")
        if got is not None and got[0] > 0:
            return True
    return False


def _judge(
    lint: _Lint,
    matcher: _Matcher,
    exprs: tuple[str, ...],
    closed: bool,
    ctx: Context,
    what: str,
    own: tuple[str, ...] = (),
    of_class: bool = False,
) -> tuple[str, Severity | None] | None:
    """The finding's message and severity (None: the rule's), or None when something matches. Without
    --cluster the devices of the input may be a sample: an info, unless a value has a close match. A
    DeviceClass about drivers that publish no device in the cluster at all (a chart installs classes for
    hardware a cluster may not have) is an info too: only a claim using it would fail."""
    if not exprs or not all(lint.compiles(e) for e in exprs):
        return None
    drivers = _drivers_of(lint, exprs)
    present = {d for d in drivers if d in lint.schema.drivers}
    if not closed and not present:
        return None  # about drivers whose devices are not in the input
    if of_class and drivers and not present:
        return (
            f"{what} are about driver {listing(sorted(drivers))}, which publishes no device in "
            f"{_where(ctx)}: a claim using the class cannot be allocated",
            Severity.INFO,
        )
    got = matcher.count(exprs)
    if got is None or got[0] > 0:
        return None
    matched, failed, first = got
    total = len(lint.schema.samples)
    scope = f"the {total} devices in {_where(ctx)}"
    if present:
        n = sum(lint.schema.drivers[d] for d in present)
        scope = f"the {n} devices of driver {listing(sorted(present))} in {_where(ctx)}"
    msg = f"{what} match none of {scope}: a claim using it cannot be allocated"
    if failed:
        msg += f"; the evaluation failed on {failed} of them ({snippet(first, 120)})"
    hints = _value_hints(lint, own or exprs)
    if hints:
        msg += "; " + listing([h for h, _ in hints], "; ", 3)
    sure = closed or any(close for _, close in hints)
    return msg, None if sure else Severity.INFO


__all__ = ["SelectorFacts", "SliceFacts", "attribute_type", "matches_nothing", "unknown_attribute"]
