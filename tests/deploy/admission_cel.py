"""The CEL environment of webhook matchConditions, on draguard's own CEL front end and evaluator.

The API server compiles matchConditions with the variables of its admission CEL environment
(apiserver/pkg/admission/plugin/cel/compile.go, `createEnvForOpts` with HasAuthorizer): `object` and
`oldObject` (dyn), `namespaceObject` (kubernetes.Namespace), `request` (kubernetes.AdmissionRequest,
without uid/object/oldObject), `authorizer` and `authorizer.requestResource`, over the base library that
DRA selectors use too. The declared types are ported from there (field names and types), so a typo in
`request.userInfo.username` is a compile error here as it is there; `object` is dyn, as upstream.
"""

from __future__ import annotations

from typing import Any

from webhook.cel.checker import decls
from webhook.cel.checker import types as t
from webhook.cel.checker.checker import Env, check
from webhook.cel.checker.validators import validate
from webhook.cel.common.errors import Issue, render
from webhook.cel.interpreter.program import plan
from webhook.cel.parser.parser import parse

_S, _B, _I, _TS = t.STRING_T, t.BOOL_T, t.INT_T, t.TIMESTAMP_T
_STRINGS = t.list_of(_S)

_STRUCTS: dict[str, dict[str, t.Type]] = {
    "kubernetes.GroupVersionKind": {"group": _S, "version": _S, "kind": _S},
    "kubernetes.GroupVersionResource": {"group": _S, "version": _S, "resource": _S},
    "kubernetes.UserInfo": {
        "username": _S,
        "uid": _S,
        "groups": _STRINGS,
        "extra": t.map_of(_S, _STRINGS),
    },
    "kubernetes.AdmissionRequest": {
        "kind": t.struct("kubernetes.GroupVersionKind"),
        "resource": t.struct("kubernetes.GroupVersionResource"),
        "subResource": _S,
        "requestKind": t.struct("kubernetes.GroupVersionKind"),
        "requestResource": t.struct("kubernetes.GroupVersionResource"),
        "requestSubResource": _S,
        "name": _S,
        "namespace": _S,
        "operation": _S,
        "userInfo": t.struct("kubernetes.UserInfo"),
        "dryRun": _B,
        "options": t.DYN_T,
    },
    "kubernetes.NamespaceSpec": {"finalizers": _STRINGS},
    "kubernetes.NamespaceCondition": {
        "status": _S,
        "type": _S,
        "lastTransitionTime": _TS,
        "message": _S,
        "reason": _S,
    },
    "kubernetes.NamespaceStatus": {
        "conditions": t.list_of(t.struct("kubernetes.NamespaceCondition")),
        "phase": _S,
    },
    "kubernetes.NamespaceMetadata": {
        "name": _S,
        "generateName": _S,
        "namespace": _S,
        "labels": t.map_of(_S, _S),
        "annotations": t.map_of(_S, _S),
        "UID": _S,
        "creationTimestamp": _TS,
        "deletionGracePeriodSeconds": _I,
        "deletionTimestamp": _TS,
        "generation": _I,
        "resourceVersion": _S,
        "finalizers": _STRINGS,
    },
    "kubernetes.Namespace": {
        "metadata": t.struct("kubernetes.NamespaceMetadata"),
        "spec": t.struct("kubernetes.NamespaceSpec"),
        "status": t.struct("kubernetes.NamespaceStatus"),
    },
}

VARIABLES = ("object", "oldObject", "namespaceObject", "request", "authorizer", "authorizer.requestResource")


def environment() -> Env:
    variables: dict[str, t.Type] = {
        "object": t.DYN_T,
        "oldObject": t.DYN_T,
        "namespaceObject": t.struct("kubernetes.Namespace"),
        "request": t.struct("kubernetes.AdmissionRequest"),
        "authorizer": t.struct("kubernetes.authorization.Authorizer"),
        "authorizer.requestResource": t.struct("kubernetes.authorization.ResourceCheck"),
    }
    for name, tt in decls.TYPE_IDENTS.items():
        variables[name] = t.type_of(tt)
    return Env(variables, dict(_STRUCTS), dict(decls.FUNCTIONS))


def compile_condition(expression: str) -> str:
    """ "" when `expression` compiles to a bool in the matchConditions environment, else the errors."""
    return compile_bool(expression, environment())


def compile_bool(expression: str, env: Env, dyn: bool = False) -> str:
    """ "" when `expression` compiles to a bool in `env` (`dyn`: or to dyn, which a bool may be at run
    time), else the errors."""
    parsed = parse(expression)
    if parsed.expr is None:
        return "compilation failed: " + render(parsed.issues, expression)
    checked = check(parsed.expr, env)
    issues = list(checked.issues)
    if not issues:

        def report(node_id: int, message: str) -> None:
            line, col = parsed.expr.source.location(node_id)  # type: ignore[union-attr]
            issues.append(Issue(line, col, message))

        validate(parsed.expr.expr, checked, report)
    if issues:
        return "compilation failed: " + render(issues, expression)
    out = checked.types.get(parsed.expr.expr.id, t.DYN_T)
    if out != t.BOOL_T and not (dyn and out == t.DYN_T):
        return f"must evaluate to bool but got {out}"
    return ""


def evaluate(expression: str, **variables: Any) -> Any:
    """The value of a (compiling) condition for JSON-shaped variables, with draguard's evaluator."""
    parsed = parse(expression)
    assert parsed.expr is not None, parsed.issues
    program = plan(parsed.expr.expr, variables=frozenset(VARIABLES))
    env = {name: None for name in ("object", "oldObject", "namespaceObject")}
    env.update(variables)
    value, _ = program.evaluate(variables=env)
    return value
