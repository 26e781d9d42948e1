"""A webhook's matchConditions, compiled and evaluated as the API server does, with draguard's own CEL
engine (webhook/cel/: parser, checker, planner) in an environment of the admission variables.

Variables (k8s.io/apiserver `admission/plugin/cel`): `object` (null on DELETE), `oldObject` (null on
CREATE), `request` (the AdmissionRequest without object/oldObject), `namespaceObject` (declared by the
shared admission environment; the webhook matcher passes no namespace, so it is always null here) — all
declared `dyn`, as the webhook matcher has no schema for them. `authorizer` and
`authorizer.requestResource` are not implemented by the stand-in: an expression naming them is refused
when the configuration is loaded (loudly, never evaluated wrongly).

Evaluation (`matchconditions/matcher.go`): any condition false → the webhook is skipped (even if another
errored); otherwise any error → failurePolicy Fail: the request is rejected (403 Forbidden, without
calling), Ignore: the webhook is skipped. One runtime cost budget (RuntimeCELCostBudgetMatchConditions)
is shared by a webhook's conditions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webhook.cel.checker import decls
from webhook.cel.checker import types as t
from webhook.cel.checker.checker import Env, check, output_type
from webhook.cel.common.ast import Ident, walk
from webhook.cel.common.errors import render
from webhook.cel.common.values import CelError, EvaluationStopped
from webhook.cel.interpreter.program import PlanError, Program, plan
from webhook.cel.parser.parser import parse

VARIABLES = ("object", "oldObject", "request", "namespaceObject")
UNSUPPORTED = ("authorizer",)
COST_BUDGET = 2_500_000  # apiserver/pkg/apis/cel: RuntimeCELCostBudgetMatchConditions (per webhook call)
MAX_CONDITIONS = 64


class ConditionError(ValueError):
    """A matchCondition the API server would refuse to store, or one the stand-in cannot evaluate."""


def _env() -> Env:
    variables: dict[str, t.Type] = {name: t.DYN_T for name in VARIABLES}
    for name, tt in decls.TYPE_IDENTS.items():
        variables[name] = t.type_of(tt)
    return Env(variables, {}, dict(decls.FUNCTIONS))


_ENV = _env()


@dataclass(frozen=True)
class Condition:
    name: str
    expression: str
    program: Program


def compile_conditions(conditions: list[dict[str, Any]] | None) -> list[Condition]:
    """Compile a webhook's matchConditions; raises ConditionError (what the API server's validation of the
    configuration reports, or what the stand-in does not implement)."""
    conditions = conditions or []
    if len(conditions) > MAX_CONDITIONS:
        raise ConditionError(
            f"matchConditions: Too many: {len(conditions)}: must have at most {MAX_CONDITIONS} items"
        )
    out: list[Condition] = []
    seen: set[str] = set()
    for i, c in enumerate(conditions):
        name, expression = c.get("name"), c.get("expression")
        if not isinstance(name, str) or not name:
            raise ConditionError(f"matchConditions[{i}].name: Required value")
        if name in seen:
            raise ConditionError(f'matchConditions[{i}].name: Duplicate value: "{name}"')
        seen.add(name)
        if not isinstance(expression, str) or not expression:
            raise ConditionError(f"matchConditions[{i}].expression: Required value")
        parsed = parse(expression)
        if parsed.expr is None:
            raise ConditionError(
                f"matchConditions[{i}].expression: Invalid value: compilation failed: {render(parsed.issues, expression)}"
            )
        for node in walk(parsed.expr.expr):
            if isinstance(node, Ident) and node.name in UNSUPPORTED:
                raise ConditionError(
                    f"matchConditions[{i}] ({name}): the stand-in does not implement the CEL variable "
                    f"`{node.name}`: extend tests/standin/admission_cel.py before using it"
                )
        checked = check(parsed.expr, _ENV)
        if checked.issues:
            raise ConditionError(
                f"matchConditions[{i}].expression: Invalid value: compilation failed: {render(checked.issues, expression)}"
            )
        out_t = output_type(checked, parsed.expr)
        if out_t not in (t.BOOL_T, t.DYN_T):
            raise ConditionError(
                f"matchConditions[{i}].expression: Invalid value: must evaluate to bool, got {out_t}"
            )
        try:
            program = plan(parsed.expr.expr, frozenset(VARIABLES), qualified=checked.qualified)
        except PlanError as e:
            raise ConditionError(f"matchConditions[{i}].expression: {e}") from None
        out.append(Condition(name, expression, program))
    return out


@dataclass(frozen=True)
class Match:
    """matchconditions.MatchResult: `error` set means failurePolicy Fail rejects the request."""

    matches: bool
    error: str = ""
    failed: str = ""  # the name of the condition that was false


def evaluate(conditions: list[Condition], variables: dict[str, Any], failure_policy: str) -> Match:
    """Evaluate every condition (in order, one shared cost budget) and decide as the matcher does."""
    errors: list[str] = []
    budget = COST_BUDGET
    for c in conditions:
        try:
            value, cost = c.program.evaluate(variables=variables, limit=budget)
        except EvaluationStopped as e:
            if "cost" in e.message:  # the filter stops: no further expressions, failurePolicy decides
                message = "validation failed due to running out of cost budget, no further validation rules will be run"
                return Match(False, message if failure_policy == "Fail" else "")
            errors.append(f"expression '{c.expression}' resulted in error: {e.message}")
            continue
        except CelError as e:
            errors.append(f"expression '{c.expression}' resulted in error: {e.message}")
            budget -= getattr(e, "cost", 0) or 0
            continue
        budget -= cost
        if value is False:
            return Match(False, failed=c.name)
        if value is not True:
            errors.append(f"expression '{c.expression}' resulted in error: no such overload")
    if errors:
        if failure_policy == "Fail":
            return Match(False, errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
        return Match(False)
    return Match(True)
