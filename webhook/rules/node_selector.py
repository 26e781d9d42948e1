"""Node selector checks as the API server runs them inside DRA objects (core `ValidateNodeSelector`).

A helper, not a rule: ResourceSlice rules call it for `spec.nodeSelector` and per-device selectors.
Label values in `matchExpressions` are validated (DRA passes `allowInvalidLabelValue=false`).
"""

from __future__ import annotations

from typing import Any

from webhook.model import names
from webhook.model.violation import Finding
from webhook.rules import fielderr

_FIELD_SELECTOR_KEYS = ("metadata.name",)  # only the object name may be used in matchFields


def node_selector_findings(selector: dict[str, Any], path: str) -> list[Finding]:
    """Findings for one `core.NodeSelector` at `path` (e.g. `spec.nodeSelector`)."""
    out: list[Finding] = []
    terms_path = path + ".nodeSelectorTerms"
    terms = selector.get("nodeSelectorTerms") or ()
    if not terms:
        out.append(Finding(terms_path, fielderr.required("must have at least one node selector term")))
        return out
    for i, term in enumerate(terms):
        if not term:
            continue
        base = f"{terms_path}[{i}]"
        for j, req in enumerate(term.get("matchExpressions") or ()):
            _expression(req or {}, f"{base}.matchExpressions[{j}]", out)
        for j, req in enumerate(term.get("matchFields") or ()):
            _field_requirement(req or {}, f"{base}.matchFields[{j}]", out)
    return out


def _expression(req: dict[str, Any], path: str, out: list[Finding]) -> None:
    op = req.get("operator") or ""
    values = req.get("values") or ()
    if op in ("In", "NotIn"):
        if not values:
            out.append(
                Finding(
                    path + ".values",
                    fielderr.required("must be specified when `operator` is 'In' or 'NotIn'"),
                )
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            out.append(
                Finding(
                    path + ".values",
                    fielderr.forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
                )
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            out.append(
                Finding(
                    path + ".values",
                    fielderr.required("must be specified single value when `operator` is 'Lt' or 'Gt'"),
                )
            )
    else:
        out.append(Finding(path + ".operator", fielderr.invalid(op, "not a valid selector operator")))
    key = req.get("key") or ""
    for m in names.label_key(key):
        out.append(Finding(path + ".key", names.render(key, m)))
    for k, v in enumerate(values):
        if not isinstance(v, str):
            continue
        for m in names.label_value(v):
            out.append(Finding(f"{path}.values[{k}]", names.render(v, m)))


def _field_requirement(req: dict[str, Any], path: str, out: list[Finding]) -> None:
    op = req.get("operator") or ""
    values = req.get("values") or ()
    if op in ("In", "NotIn"):
        if len(values) != 1:
            out.append(
                Finding(
                    path + ".values",
                    fielderr.required(
                        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
                    ),
                )
            )
    else:
        out.append(Finding(path + ".operator", fielderr.invalid(op, "not a valid selector operator")))
    key = req.get("key") or ""
    if key not in _FIELD_SELECTOR_KEYS:
        out.append(Finding(path + ".key", fielderr.invalid(key, "not a valid field selector key")))
        return
    for k, v in enumerate(values):
        if not isinstance(v, str):
            continue
        for m in names.node_name(v):
            out.append(Finding(f"{path}.values[{k}]", names.render(v, m)))
