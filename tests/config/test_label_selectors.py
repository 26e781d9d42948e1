"""Tenant namespace selectors (webhook/config/labelselector.py): validated as apimachinery's
ValidateLabelSelector validates a metav1.LabelSelector (paths and wording as the API server reports them),
and matched as LabelSelectorAsSelector matches one."""

from __future__ import annotations

from typing import Any

import pytest

from webhook.config.fields import Reader
from webhook.config.labelselector import LabelSelector, Requirement, parse_label_selector
from webhook.model.path import Path


def _parse(data: Any) -> tuple[LabelSelector | None, list[str]]:
    r = Reader()
    sel = parse_label_selector(r, data, Path("namespaceSelector"))
    return sel, [str(e) for e in r.errors]


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        # upstream's cases (apimachinery validation_test.go, TestValidateLabelSelector), as they report them
        (
            {"matchExpressions": [{"key": "a", "operator": "In"}]},
            [
                "namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ],
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
            [
                "namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ],
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            [
                "namespaceSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            ],
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            [
                'namespaceSelector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator'
            ],
        ),
        (
            {"matchExpressions": [{"key": "a/b/c", "operator": "Exists"}]},
            [
                'namespaceSelector.matchExpressions[0].key: Invalid value: "a/b/c": a valid label key must consist of '
                "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                "'MyName' or 'my.name' or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
                "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ],
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["ok", "no way"]}]},
            [
                'namespaceSelector.matchExpressions[0].values[1]: Invalid value: "no way": a valid label must be an '
                "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyValue' or 'my_value' or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ],
        ),
        # matchLabels: both the key and the value are reported at matchLabels itself
        (
            {"matchLabels": {"-bad": "ok"}},
            [
                'namespaceSelector.matchLabels: Invalid value: "-bad": name part must consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName' "
                "or 'my.name' or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
        ),
        (
            {"matchLabels": {"team": 3}},
            ["namespaceSelector.matchLabels[team]: Invalid value: 3: must be of type string, not integer"],
        ),
        (
            {"matchExpression": []},
            [
                "namespaceSelector.matchExpression: unknown field \"matchExpression\" (did you mean 'matchExpressions'?)"
            ],
        ),
        (
            {"matchExpressions": [{"operator": "Exists"}]},
            ["namespaceSelector.matchExpressions[0].key: Required value"],
        ),
    ],
)
def test_what_the_api_server_rejects_is_an_error_at_its_path(data: Any, errors: list[str]) -> None:
    sel, got = _parse(data)
    assert sel is None
    assert got == errors


def test_valid_selectors() -> None:
    sel, errors = _parse(
        {
            "matchLabels": {"example.com/tier": "shared", "team": ""},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "staging"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert errors == []
    assert sel == LabelSelector(
        (("example.com/tier", "shared"), ("team", "")),
        (Requirement("env", "In", frozenset({"prod", "staging"})), Requirement("legacy", "DoesNotExist")),
    )
    assert _parse(None) == (None, [])


@pytest.mark.parametrize(
    ("requirement", "labels", "selected"),
    [
        (Requirement("env", "In", frozenset({"prod"})), {"env": "prod"}, True),
        (Requirement("env", "In", frozenset({"prod"})), {"env": "dev"}, False),
        (Requirement("env", "In", frozenset({"prod"})), {}, False),
        (Requirement("env", "NotIn", frozenset({"prod"})), {}, True),  # absent is "not in"
        (Requirement("env", "NotIn", frozenset({"prod"})), {"env": "prod"}, False),
        (Requirement("env", "Exists"), {"env": ""}, True),
        (Requirement("env", "Exists"), {}, False),
        (Requirement("env", "DoesNotExist"), {}, True),
        (Requirement("env", "DoesNotExist"), {"env": "x"}, False),
    ],
)
def test_requirements_match_as_upstream_selectors(
    requirement: Requirement, labels: dict[str, str], selected: bool
) -> None:
    assert requirement.matches(labels) is selected
    assert LabelSelector((), (requirement,)).matches(labels) is selected


def test_the_empty_selector_selects_every_namespace_and_terms_all_hold() -> None:
    assert LabelSelector().matches({})
    sel = LabelSelector((("team", "a"),), (Requirement("env", "In", frozenset({"prod"})),))
    assert sel.matches({"team": "a", "env": "prod", "other": "x"})
    assert not sel.matches({"team": "a", "env": "dev"})
    assert not sel.matches({"team": "b", "env": "prod"})
