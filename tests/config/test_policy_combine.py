"""Several policies in force at once (webhook/config/policy.py `combine`): the most restrictive setting wins,
whatever the order, and every tenant entry applies under its `<policy>/<tenant>` id."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.config.labelselector import LabelSelector
from webhook.config.policy import (
    ALL_KINDS,
    FEASIBILITY_KINDS,
    FEASIBILITY_MODES,
    RULE_SETTINGS,
    FeasibilityPolicy,
    FeasibilitySettings,
    PolicySpec,
    combine,
    strictest_mode,
)
from webhook.config.tenants import Tenant
from webhook.model.violation import Severity, Violation

RANK = {"off": 0, "warn": 1, "enforce": 2}


def test_a_rule_takes_the_strictest_severity_any_policy_sets() -> None:
    a = PolicySpec("a", {"pool.completeness": "off", "slice.driver.uppercase": "info", "x.only-a": "off"})
    b = PolicySpec("b", {"pool.completeness": "warning", "slice.driver.uppercase": "error"})
    c = PolicySpec("c", {"slice.driver.uppercase": "warning"})
    policy = combine([a, b, c])
    assert policy.disabled == {"x.only-a"}  # a rule only one policy turns off is off
    assert policy.severity == {
        "pool.completeness": Severity.WARNING,
        "slice.driver.uppercase": Severity.ERROR,
    }
    v = Violation("pool.completeness", Severity.INFO, "spec", "m")
    assert policy.apply([v, Violation("x.only-a", Severity.ERROR, "", "m")]) == [
        Violation("pool.completeness", Severity.WARNING, "spec", "m")
    ]
    assert policy.sources == ("a", "b", "c")


def test_feasibility_is_each_policys_own_answer_then_the_strictest() -> None:
    relaxed = FeasibilitySettings("off", namespaces={"sandbox": {ALL_KINDS: "off"}})
    claims = FeasibilitySettings(kinds={"ResourceClaim": "enforce"})
    prod = FeasibilitySettings(namespaces={"ml-prod": {"Pod": "enforce"}})
    f = combine(
        [
            PolicySpec("r", feasibility=relaxed),
            PolicySpec("c", feasibility=claims),
            PolicySpec("p", feasibility=prod),
        ]
    ).feasibility
    # claims: `c` enforces them everywhere, also in the namespace `r` turns off
    assert f.mode("ResourceClaim", "sandbox") == "enforce"
    assert f.mode("ResourceClaim", None) == "enforce"
    # Pods: only `r` answers outside ml-prod (off); in ml-prod `p` enforces
    assert f.mode("Pod", "default") == "off"
    assert f.mode("Pod", "sandbox") == "off"
    assert f.mode("Pod", "ml-prod") == "enforce"


def test_nothing_set_is_warn_and_one_policy_keeps_its_own_settings() -> None:
    assert combine([]).feasibility == FeasibilityPolicy()
    assert combine([PolicySpec("a"), PolicySpec("b")]).feasibility.mode("Pod", "x") == "warn"
    one = FeasibilitySettings(kinds={"Pod": "enforce"}, namespaces={"a": {"Pod": "off"}})
    assert combine([PolicySpec("a", feasibility=one)]).feasibility == FeasibilityPolicy(
        "warn", {"Pod": "enforce"}, {"a": {"Pod": "off"}}
    )


def _tenant(policy: str, name: str) -> Tenant:
    return Tenant(policy, name, LabelSelector())


def test_every_tenant_entry_applies_under_its_qualified_id() -> None:
    a = PolicySpec("team-b", tenants=(_tenant("team-b", "gpus"), _tenant("team-b", "cpus")))
    b = PolicySpec("team-a", tenants=(_tenant("team-a", "gpus"),))
    assert [t.id for t in combine([a, b]).tenants] == ["team-a/gpus", "team-b/cpus", "team-b/gpus"]


# -- properties ----------------------------------------------------------------------------------------

NAMESPACES = ("a", "b", "c")
modes = st.sampled_from(FEASIBILITY_MODES)
kinds_st = st.sampled_from(FEASIBILITY_KINDS)
settings_st = st.builds(
    FeasibilitySettings,
    default=st.none() | modes,
    kinds=st.dictionaries(kinds_st, modes, max_size=2),
    namespaces=st.dictionaries(
        st.sampled_from(NAMESPACES),
        st.dictionaries(kinds_st | st.just(ALL_KINDS), modes, min_size=1),
        max_size=3,
    ),
)
specs_st = st.lists(
    st.builds(
        PolicySpec,
        name=st.sampled_from(["p", "q", "r", "s"]),
        rules=st.dictionaries(
            st.sampled_from(["r1", "r2", "r3"]), st.sampled_from(RULE_SETTINGS), max_size=3
        ),
        feasibility=settings_st,
    ),
    max_size=5,
)


# a loaded machine must not fail them: generation speed is not what they test. The domain is small (4
# names, 3 rules, 3 namespaces, 4 modes), and drawing these nested dictionaries is nearly all the cost
# (200 examples: 11 s of 11.3 s per test), so 75 examples each
PROPERTY = settings(
    max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@PROPERTY
@given(specs_st)
def test_the_combined_mode_is_the_strictest_policys_answer_everywhere(specs: list[PolicySpec]) -> None:
    f = combine(specs).feasibility
    for kind in FEASIBILITY_KINDS:
        for ns in (*NAMESPACES, "elsewhere", None):
            want = strictest_mode(s.feasibility.mode(kind, ns) for s in specs) or "warn"
            assert f.mode(kind, ns) == want, (kind, ns)


@PROPERTY
@given(specs_st, st.randoms())
def test_the_order_of_the_policies_does_not_matter(specs: list[PolicySpec], rnd: random.Random) -> None:
    shuffled = list(specs)
    rnd.shuffle(shuffled)
    a, b = combine(specs), combine(shuffled)
    assert (a.disabled, dict(a.severity), a.sources) == (b.disabled, dict(b.severity), b.sources)
    for kind in FEASIBILITY_KINDS:
        for ns in (*NAMESPACES, None):
            assert a.feasibility.mode(kind, ns) == b.feasibility.mode(kind, ns)


@PROPERTY
@given(specs_st, specs_st)
def test_adding_policies_never_makes_anything_less_strict(
    specs: list[PolicySpec], more: list[PolicySpec]
) -> None:
    before, after = combine(specs), combine(specs + more)
    for kind in FEASIBILITY_KINDS:
        for ns in (*NAMESPACES, None):
            if any(s.feasibility.mode(kind, ns) for s in specs):
                assert RANK[after.feasibility.mode(kind, ns)] >= RANK[before.feasibility.mode(kind, ns)]
    rank = {s: i for i, s in enumerate(RULE_SETTINGS)}
    for rule in {r for s in specs for r in s.rules}:
        old = "off" if rule in before.disabled else before.severity[rule].value
        new = "off" if rule in after.disabled else after.severity[rule].value
        assert rank[new] >= rank[old]
