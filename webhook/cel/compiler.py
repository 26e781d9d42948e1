"""Compile DRA CEL selectors exactly as the v1.37 API server does: length, syntax, macros, types against the
`device` declaration of the feature gates, AST validators, a bool result and the estimated cost limit.

    compile_selector("device.driver == 'gpu.example.com'", list_attributes=False, consumable_capacity=True)
    -> Compiled (checked AST: .ast, .types, .refs; .cost) | CompileError (kind + message in apiserver wording)

Pure Python (lexer, parser, checker, validators, cost estimator in this package). Results are cached in a
cache bounded by bytes. The evaluator attaches its runtime program through `set_planner` (see `Compiled`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from webhook.cel.checker import types as t
from webhook.cel.checker.checker import Checked, Env, check, dra_env
from webhook.cel.checker.constfold import instantiation_error
from webhook.cel.checker.cost import estimate_cost
from webhook.cel.checker.types import Type
from webhook.cel.checker.validators import validate
from webhook.cel.common.ast import Call, Const, Expr, Ident, ParsedExpr, Select, walk
from webhook.cel.common.errors import Issue, render
from webhook.cel.parser.parser import parse
from webhook.cel.uses import Uses, analyse
from webhook.model.cache import ByteLRU

MAX_EXPRESSION_BYTES = 10 * 1024  # CELSelectorExpressionMaxLength
MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost
CACHE_BYTES = 32 << 20


@dataclass(frozen=True)
class CompileError:
    """Why an expression is rejected. kind: "TooLong" | "Invalid" | "Forbidden" (apiserver error types)."""

    kind: str
    message: str  # the detail: "must have at most 10240 bytes", "compilation failed: ...", ...


class Compiled:
    """A selector that passed compilation.

    `ast`: the checked AST with its source positions (`webhook.cel.common.ast`); `qualified`: the checker's
    resolution of namespaced calls and qualified identifiers (the planner needs it). `types`/`refs`: the
    checker's side tables, recomputed from the AST when first asked for (nothing at run time needs them, so a
    cached selector does not keep them). `program`: the runtime program, built lazily by the planner the
    evaluator registers with `set_planner`. `attribute_domains`/`capacity_domains`: the literal domains the
    selector looks up (computed on first use). `cost`: the estimated worst-case cost (computed on first use
    when the compilation did not check it: the scheduler's stored expressions never need it)."""

    __slots__ = (
        "expression",
        "list_attributes",
        "consumable_capacity",
        "_cost",
        "ast",
        "qualified",
        "output_type",
        "_checked",
        "_domains",
        "_uses",
        "_program",
        "_lock",
    )
    unchecked = False  # kept for callers of the former engine: always False

    def __init__(
        self,
        expression: str,
        list_attributes: bool,
        consumable_capacity: bool,
        cost: int | None,
        ast: ParsedExpr,
        qualified: dict[int, str],
        output_type: Type,
    ) -> None:
        self.expression = expression
        self.list_attributes = list_attributes
        self.consumable_capacity = consumable_capacity
        self._cost = cost
        self.ast = ast
        self.qualified = qualified
        self.output_type = output_type
        self._checked: Checked | None = None
        self._domains: tuple[frozenset[str], frozenset[str]] | None = None
        self._uses: Uses | None = None
        self._program: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Compiled({self.expression!r}, output_type={self.output_type})"

    @property
    def cost(self) -> int:
        """The estimated worst-case cost (cel-go's CostEstimate.Max)."""
        cost = self._cost
        if cost is None:
            env = environment(self.list_attributes, self.consumable_capacity, False)
            checked = self._checked if self._checked is not None else check(self.ast, env)
            cost = self._cost = estimate_cost(self.ast, checked)
        return cost

    def _check(self) -> Checked:
        checked = self._checked
        if checked is None:
            env = environment(self.list_attributes, self.consumable_capacity, False)
            checked = self._checked = check(self.ast, env)
        return checked

    @property
    def types(self) -> dict[int, Type]:
        """The checker's type of every node id (recomputed on first access)."""
        return self._check().types

    @property
    def refs(self) -> dict[int, tuple[str, ...]]:
        """The checker's overload ids / identifier names by node id (recomputed on first access)."""
        return self._check().refs

    @property
    def attribute_domains(self) -> frozenset[str]:
        if self._domains is None:
            self._domains = _domains(self.ast.expr)
        return self._domains[0]

    @property
    def capacity_domains(self) -> frozenset[str]:
        if self._domains is None:
            self._domains = _domains(self.ast.expr)
        return self._domains[1]

    @property
    def uses(self) -> Uses:
        """The device lookups and driver literals of the expression (`webhook.cel.uses.analyse`), worked
        out on first access and kept with the compilation: several rules read them. Read-only."""
        uses = self._uses
        if uses is None:
            uses = self._uses = analyse(self.ast.expr)
        return uses

    @property
    def program(self) -> Any:
        """The evaluator's program for this selector (planned once, on first use)."""
        planner = _PLANNER
        if planner is None:
            from webhook.cel.interpreter.program import plan_compiled

            planner = plan_compiled
        if self._program is None:
            with self._lock:
                if self._program is None:
                    self._program = planner(self)
        return self._program

    def evaluate(self, device: dict[str, Any]) -> bool:
        """Evaluate against a normalised device through the registered planner's program."""
        prog = self.program
        if prog is None:
            raise RuntimeError("no CEL evaluator registered (webhook.cel.compiler.set_planner)")
        return bool(prog.evaluate(device))


_PLANNER: Callable[[Compiled], Any] | None = None


def set_planner(planner: Callable[[Compiled], Any] | None) -> None:
    """Register the evaluator: `planner(compiled)` returns an object with `evaluate(device) -> bool`."""
    global _PLANNER
    _PLANNER = planner


_ENVS: dict[tuple[bool, bool, bool], Env] = {}


def environment(list_attributes: bool, consumable_capacity: bool, stored: bool) -> Env:
    key = (list_attributes, consumable_capacity, stored)
    env = _ENVS.get(key)
    if env is None:
        env = _ENVS[key] = dra_env(
            list_attributes=list_attributes, consumable_capacity=consumable_capacity, stored=stored
        )
    return env


def _domains(root: Expr) -> tuple[frozenset[str], frozenset[str]]:
    """Literal domains looked up in `device.attributes` / `device.capacity` (by `.d`, `[d]`, `[?d]`, `.?d`)."""
    attrs: set[str] = set()
    caps: set[str] = set()
    for e in walk(root):
        if isinstance(e, Select) and not e.test_only:
            which = _device_map(e.operand)
            if which:
                (attrs if which == "attributes" else caps).add(e.field)
        elif isinstance(e, Call) and e.function in ("_[_]", "_[?_]", "_?._") and len(e.args) == 2:
            which = _device_map(e.args[0])
            key = e.args[1]
            if which and isinstance(key, Const) and isinstance(key.value, str) and key.kind == "string":
                (attrs if which == "attributes" else caps).add(key.value)
    return frozenset(attrs), frozenset(caps)


def _device_map(e: Expr) -> str:
    if (
        isinstance(e, Select)
        and not e.test_only
        and e.field in ("attributes", "capacity")
        and isinstance(e.operand, Select) is False
    ):
        op = e.operand
        if isinstance(op, Ident) and op.name in ("device", ".device"):
            return e.field
    return ""


def _compile(
    expression: str, list_attributes: bool, consumable_capacity: bool, check_cost: bool
) -> Compiled | CompileError:
    if len(expression) * 4 > MAX_EXPRESSION_BYTES and (
        len(expression.encode("utf-8", "surrogatepass")) > MAX_EXPRESSION_BYTES
    ):
        return CompileError("TooLong", f"may not be more than {MAX_EXPRESSION_BYTES} bytes")
    parsed = parse(expression)
    if parsed.expr is None:
        return CompileError("Invalid", "compilation failed: " + render(parsed.issues, expression))
    pe = parsed.expr
    env = environment(list_attributes, consumable_capacity, False)
    checked = check(pe, env)
    if not checked.issues and _needs_validators(checked):
        issues: list[Issue] = []

        def report(node_id: int, message: str) -> None:
            line, col = pe.source.location(node_id)
            issues.append(Issue(line, col, message))

        validate(pe.expr, checked, report)
        checked.issues.extend(issues)
    if checked.issues:
        return CompileError("Invalid", "compilation failed: " + render(checked.issues, expression))
    out = checked.types.get(pe.expr.id, t.DYN_T)
    if out != t.BOOL_T and out != (t.DYN_T if list_attributes else t.ANY_T):
        return CompileError("Invalid", f"must evaluate to bool or the unknown type, not {out}")
    if _needs_planning_checks(checked):
        planning = instantiation_error(pe.expr)
        if planning is not None:
            return CompileError("Invalid", "program instantiation failed: " + planning)
    # estimated now, while the checker's result is at hand (`Compiled` does not keep it): the selector
    # rules compile without the limit and compare the cost themselves, which would otherwise check the
    # expression a second time
    cost = estimate_cost(pe, checked)
    if check_cost and cost > MAX_COST:
        return CompileError("Forbidden", "too complex, exceeds cost limit")
    return Compiled(expression, list_attributes, consumable_capacity, cost, pe, checked.qualified, out)


# The validators and the planning checks only look at list/map literals and calls of a few functions:
# they run when the checker saw one.
_VALIDATED = frozenset({"duration", "timestamp", "matches", "format"})
_PLANNED = frozenset(
    {"matches", "find", "findAll"} | {"bool", "bytes", "double", "duration", "dyn"}
) | frozenset({"int", "string", "timestamp", "type", "uint"})


def _needs_validators(checked: Checked) -> bool:
    return checked.aggregates or not checked.calls.isdisjoint(_VALIDATED)


def _needs_planning_checks(checked: Checked) -> bool:
    return not checked.calls.isdisjoint(_PLANNED)


def _retained_bytes(result: Compiled | CompileError) -> int:
    """A size estimate of a cache entry: the expression, its AST and position array (~100 B per node)."""
    if isinstance(result, CompileError):
        return 200 + 2 * len(result.message)
    return 600 + 2 * len(result.expression) + 100 * result.ast.max_id


_CACHE: ByteLRU[tuple[str, bool, bool, bool], Compiled | CompileError] = ByteLRU(CACHE_BYTES)


def compile_selector(
    expression: str, *, list_attributes: bool, consumable_capacity: bool, check_cost: bool = True
) -> Compiled | CompileError:
    """Compile one selector expression in the DRA environment (see module docstring).
    `check_cost=False`: no estimated-cost limit (the scheduler compiles stored expressions with every gate on
    and no limit: StoredExpressions)."""
    key = (expression, list_attributes, consumable_capacity, check_cost)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    result = _compile(expression, list_attributes, consumable_capacity, check_cost)
    _CACHE.put(key, result, _retained_bytes(result))
    return result
