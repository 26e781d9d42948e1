"""The evaluator implements what the checker declares: every overload of the DRA environment (stored
expressions: every gate on) has a runtime implementation, and every type identifier evaluates."""

from __future__ import annotations

from webhook.cel.checker.checker import dra_env
from webhook.cel.checker.decls import TYPE_IDENTS
from webhook.cel.interpreter.planner import _SPECIAL
from webhook.cel.interpreter.planner import TYPE_IDENTS as RUNTIME_TYPE_IDENTS
from webhook.cel.lib.functions import FUNCTIONS
from webhook.cel.runtime import SelectorEvaluator

# The Kubernetes authorization library is declared in every Kubernetes environment, but its receivers
# (`authorizer` and what it returns) are not DRA variables: no selector can reach these functions.
UNREACHABLE = {
    "allowed",
    "check",
    "error",
    "errored",
    "fieldSelector",
    "group",
    "labelSelector",
    "name",
    "namespace",
    "path",
    "reason",
    "resource",
    "serviceAccount",
    "subresource",
}


def test_every_declared_overload_has_a_runtime_implementation() -> None:
    env = dra_env(list_attributes=True, consumable_capacity=True, stored=True)
    missing = [
        (name, o.id)
        for name, overloads in env.functions.items()
        if name not in _SPECIAL and name not in UNREACHABLE
        for o in overloads
        if (name, o.member, len(o.args)) not in FUNCTIONS
    ]
    assert missing == []


def test_every_type_identifier_evaluates() -> None:
    assert set(TYPE_IDENTS) <= set(RUNTIME_TYPE_IDENTS)
    ev = SelectorEvaluator(list_attributes=True, consumable_capacity=True)
    for name in TYPE_IDENTS:
        assert ev.matches(f"type({name}) == type", name, "d.example.com", {"name": "x"}), name


def test_former_operator_names_still_evaluate() -> None:
    ev = SelectorEvaluator(list_attributes=True, consumable_capacity=True)
    assert ev.matches(
        "_in_(1, [1]) && __not_strictly_false__(1 / 0 == 1)", "k", "d.example.com", {"name": "x"}
    )
    assert ev.matches("optional.unwrap([optional.of(1), optional.none()]) == [1]", "k", "d", {"name": "x"})
    assert ev.matches("[optional.of(1), optional.none()].unwrapOpt() == [1]", "k", "d", {"name": "x"})
