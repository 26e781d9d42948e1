"""The registry of runtime function implementations the evaluator dispatches to.

A function is registered per (name, member, arity) — `arity` counts the receiver of a member call —
with its Python implementation and, where cel-go / Kubernetes charge more than 1, its runtime cost.
Implementations take CEL values (see `webhook.cel.common.values`) and return one, raising `CelError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from webhook.cel.common.values import SIZE_LIMIT_MESSAGE, EvaluationStopped, size_of

# The largest string/list/bytes a single operation may build (characters or elements); the evaluator
# also bounds the total an evaluation builds (see program.Frame).
MAX_RESULT_SIZE = 4_000_000


@dataclass(frozen=True, slots=True)
class Fn:
    """One overload group. `cost(args, result)`: the call's runtime cost (None: 1).
    `grows(args, result)`: how many characters/elements the call newly built (counted against the
    evaluation's size budget), None for calls whose results are small."""

    impl: Callable[..., Any]
    cost: Callable[[tuple[Any, ...], Any], int] | None = None
    grows: Callable[[tuple[Any, ...], Any], int] | None = None


FUNCTIONS: dict[tuple[str, bool, int], Fn] = {}


def register(
    name: str,
    arity: int,
    impl: Callable[..., Any],
    *,
    member: bool = False,
    both: bool = False,
    cost: Callable[[tuple[Any, ...], Any], int] | None = None,
    grows: bool | Callable[[tuple[Any, ...], Any], int] = False,
) -> None:
    """Register `impl` for `name` with `arity` arguments (receiver included for member calls);
    `both`: callable as `f(x, ...)` and `x.f(...)`."""
    fn = Fn(impl, cost, result_size if grows is True else (grows or None))
    if both or not member:
        FUNCTIONS[(name, False, arity)] = fn
    if both or member:
        FUNCTIONS[(name, True, arity)] = fn


def result_size(args: tuple[Any, ...], result: Any) -> int:
    return actual_size(result)


def names() -> set[str]:
    return {k[0] for k in FUNCTIONS}


# ---- cost helpers (cel-go common/cost.go factors, computed in float64 as Go does) -------------------

TRAVERSAL = 0.1  # StringTraversalCostFactor
REGEX = 0.25  # RegexStringLengthCostFactor


def actual_size(v: Any) -> int:
    n = size_of(v)
    return 1 if n is None else n


def ceil_factor(n: float, factor: float = TRAVERSAL) -> int:
    return math.ceil(n * factor)


def cost_first_traversal(args: tuple[Any, ...], result: Any) -> int:
    return math.ceil(actual_size(args[0]) * TRAVERSAL)


def cost_first_double_traversal(args: tuple[Any, ...], result: Any) -> int:
    return math.ceil(actual_size(args[0]) * 2 * TRAVERSAL)


def cost_regex(args: tuple[Any, ...], result: Any) -> int:
    str_cost = math.ceil((1.0 + actual_size(args[0])) * TRAVERSAL)
    regex_cost = math.ceil(actual_size(args[1]) * REGEX)
    return str_cost * regex_cost


def check_size(n: int) -> None:
    """Refuse to build a value of more than MAX_RESULT_SIZE characters/elements."""
    if n > MAX_RESULT_SIZE:
        raise EvaluationStopped(SIZE_LIMIT_MESSAGE)
