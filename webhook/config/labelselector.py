"""Label selectors (`metav1.LabelSelector`) as a tenant's `namespaceSelector` holds them: validated as the
API server validates them (apimachinery `ValidateLabelSelector`: operators In, NotIn, Exists, DoesNotExist;
values only and always with In/NotIn; label keys qualified names, values label values) and matched against
a namespace's labels. The empty selector matches every namespace, as `LabelSelectorAsSelector` makes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from webhook.config.fields import FieldError, Reader, invalid, required
from webhook.model import names
from webhook.model.path import Path

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist"]
OPERATORS: tuple[Operator, ...] = get_args(Operator)
MAX_VALUES = 256  # per requirement (the CRD's maxItems)
MAX_REQUIREMENTS = 64
MAX_LABELS = 64


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: Operator
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        return not present


@dataclass(frozen=True)
class LabelSelector:
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a namespace with these labels is selected (every term holds; no term: every one)."""
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            r.matches(labels) for r in self.match_expressions
        )


def _label_name(r: Reader, key: str, path: Path) -> None:
    for message in names.label_key(key):
        r.add(invalid(path, key, message, "InvalidSelector"))


def _label_value(r: Reader, value: str, path: Path) -> None:
    for message in names.label_value(value):
        r.add(invalid(path, value, message, "InvalidSelector"))


def _requirement(r: Reader, data: Any, path: Path) -> Requirement | None:
    before = len(r.errors)
    req = r.mapping(data, path, ("key", "operator", "values"), need=("key", "operator"))
    if req is None:
        return None
    key = r.string(req.get("key"), path.child("key"))
    op = req.get("operator")
    values_path = path.child("values")
    values = r.listing(req.get("values"), values_path, MAX_VALUES)
    texts = [r.string(v, values_path.index(j)) for j, v in enumerate(values or ())]
    if op is not None and op not in OPERATORS:
        r.add(invalid(path.child("operator"), op, "not a valid selector operator", "InvalidSelector"))
    elif op in ("In", "NotIn") and not values:
        r.add(required(values_path, "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist") and values:
        r.add(
            FieldError(
                str(values_path),
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                "InvalidSelector",
            )
        )
    if key is not None:
        _label_name(r, key, path.child("key"))
    for j, v in enumerate(texts):
        if v is not None:
            _label_value(r, v, values_path.index(j))
    if len(r.errors) > before or key is None or op is None:
        return None
    return Requirement(key, op, frozenset(t for t in texts if t is not None))


def parse_label_selector(r: Reader, data: Any, path: Path) -> LabelSelector | None:
    """The selector at `path`, or None when it is absent or has errors (recorded in `r`)."""
    before = len(r.errors)
    sel = r.mapping(data, path, ("matchLabels", "matchExpressions"))
    if sel is None:
        return None
    labels_path = path.child("matchLabels")
    labels = r.mapping(sel.get("matchLabels"), labels_path, None)
    pairs: list[tuple[str, str]] = []
    if labels is not None and len(labels) > MAX_LABELS:
        r.add(FieldError(str(labels_path), f"Too many: {len(labels)}: must have at most {MAX_LABELS} labels"))
    for k, v in (labels or {}).items():
        value = r.string(v, labels_path.key(str(k)))
        if not isinstance(k, str) or value is None:
            continue
        _label_name(r, k, labels_path)  # upstream reports both at matchLabels itself
        _label_value(r, value, labels_path)
        pairs.append((k, value))
    exprs_path = path.child("matchExpressions")
    exprs = r.listing(sel.get("matchExpressions"), exprs_path, MAX_REQUIREMENTS)
    reqs = [_requirement(r, e, exprs_path.index(i)) for i, e in enumerate(exprs or ())]
    if len(r.errors) > before:
        return None
    return LabelSelector(tuple(sorted(pairs)), tuple(q for q in reqs if q is not None))
