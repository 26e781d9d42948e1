"""Compile a CEL AST (`webhook.cel.common.ast`) once into Python closures, and evaluate it with cel-go's
semantics, runtime cost (interpreter/runtimecost.go + Kubernetes' library costs) and size limits.

    program = plan(ast_root, variables={"device"})
    value, cost = program.evaluate(variables={"device": ...})       # or device=DeviceInput (DRA)

`evaluate` raises only `CelError` (a CEL error value: "no such key: x", "division by zero", ...) and
`EvaluationStopped` (cost limit, size limit, or an internal failure such as MemoryError).

Each node becomes one closure `f(frame) -> value`. Chains that can be arbitrarily long in an accepted
expression (unary operators, left-deep binary operators, member calls, field selections and indexes)
are compiled into loops, so neither planning nor evaluation recurses once per link; what remains
nests as deep as the parser's recursion limit allows.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from webhook.cel.common import ast as A
from webhook.cel.common.values import (
    COST_LIMIT_MESSAGE,
    CelError,
    EvaluationStopped,
    type_name,
)
from webhook.cel.interpreter.activation import EvaluationError
from webhook.cel.interpreter.closures import ALLOC_LIMIT, COST_LIMIT, Closure, ErrorBox, Frame
from webhook.cel.interpreter.planner import PlanError, Planner
from webhook.cel.lib import extlib, k8slib, netlib, stdlib  # noqa: F401  (they register the functions)

# Frames per nesting level are few; beyond this plan depth an evaluation runs on a fresh thread
# (whose recursion depth starts at 0) so a deep but accepted expression never hits RecursionError.
_THREAD_DEPTH = 150


class Program:
    """A planned expression (immutable, shareable between threads)."""

    __slots__ = ("_fn", "_nslots", "_deep")

    def __init__(self, fn: Closure, nslots: int, depth: int) -> None:
        self._fn = fn
        self._nslots = nslots
        self._deep = depth > _THREAD_DEPTH

    def evaluate(
        self,
        *,
        device: Any = None,
        variables: dict[str, Any] | None = None,
        limit: int = COST_LIMIT,
        alloc_limit: int = ALLOC_LIMIT,
    ) -> tuple[Any, int]:
        """(value, actual cost). Raises CelError or EvaluationStopped (see the module docstring)."""
        frame = Frame(self._nslots, limit, alloc_limit, device, variables or {})
        if self._deep:
            return _on_thread(self._run, frame)
        return self._run(frame)

    def _run(self, frame: Frame) -> tuple[Any, int]:
        try:
            value = self._fn(frame)
            if type(value) is ErrorBox:
                raise value.error
            if frame.cost > frame.limit:
                raise EvaluationStopped(COST_LIMIT_MESSAGE)
        except (CelError, EvaluationStopped) as e:
            e.cost = frame.cost
            raise
        except MemoryError:
            raise _stopped("evaluation ran out of memory", frame) from None
        except RecursionError:
            raise _stopped("expression nests too deeply to evaluate", frame) from None
        except Exception as e:  # a defect of ours: still never a traceback for the caller
            raise _stopped(f"internal evaluation error: {type(e).__name__}: {e}", frame) from None
        return value, frame.cost


def _stopped(message: str, frame: Frame) -> EvaluationStopped:
    e = EvaluationStopped(message)
    e.cost = frame.cost
    return e


def _on_thread(run: Callable[[Frame], tuple[Any, int]], frame: Frame) -> tuple[Any, int]:
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(run(frame))
        except BaseException as e:  # handed back to the caller's thread
            box.append(e)

    t = threading.Thread(target=target, name="cel-deep-eval", daemon=True)
    t.start()
    t.join()
    out = box[0] if box else EvaluationStopped("internal evaluation error: no result")
    if isinstance(out, BaseException):
        raise out
    return out  # type: ignore[no-any-return]


def plan(
    root: A.Expr,
    variables: frozenset[str] = frozenset(),
    device: str | None = None,
    optimize: bool = True,
    qualified: dict[int, str] | None = None,
) -> Program:
    """Plan an AST once; raises PlanError if it uses a construct the evaluator has no implementation of,
    or where cel-go fails to create the program (a constant conversion or regex that is an error).
    `qualified`: the checker's resolution of namespaced calls (`sets.contains(...)`) by node id."""
    planner = Planner(variables, device, optimize, qualified)
    depth = A.depth(root)
    if depth > _THREAD_DEPTH // 2 and sys.getrecursionlimit() - depth < 400:
        box: list[Any] = []

        def target() -> None:
            try:
                box.append(Program(planner.plan(root), planner.nslots, planner.max_depth))
            except BaseException as e:
                box.append(e)

        t = threading.Thread(target=target, name="cel-deep-plan", daemon=True)
        t.start()
        t.join()
        out = box[0] if box else PlanError("planning failed")
        if isinstance(out, BaseException):
            if isinstance(out, RecursionError):
                raise PlanError("expression nests too deeply to evaluate")
            raise out
        return out  # type: ignore[no-any-return]
    try:
        return Program(planner.plan(root), planner.nslots, planner.max_depth)
    except RecursionError:
        raise PlanError("expression nests too deeply to evaluate") from None


class SelectorProgram:
    """The program of a compiled DRA selector (`webhook.cel.compiler.Compiled.program`)."""

    __slots__ = ("program",)

    def __init__(self, program: Program) -> None:
        self.program = program

    def evaluate(self, device: Any) -> bool:
        """Evaluate on a `webhook.cel.interpreter.activation.DeviceInput`; raises EvaluationError (any failure)."""
        if getattr(device, "failure", None):
            raise EvaluationError(device.failure)
        try:
            value, _ = self.program.evaluate(device=device)
        except (CelError, EvaluationStopped) as e:
            raise EvaluationError(e.message) from None
        if value is True or value is False:
            return value
        raise EvaluationError(f"CEL result of type {type_name(value)} could not be converted to bool")


def plan_compiled(compiled: Any) -> SelectorProgram:
    """The planner behind `Compiled.program` (a checked DRA selector: `device` is the API device)."""
    return SelectorProgram(plan(compiled.ast.expr, device="device", qualified=compiled.qualified))


__all__ = ["ALLOC_LIMIT", "COST_LIMIT", "PlanError", "Program", "SelectorProgram", "plan", "plan_compiled"]
