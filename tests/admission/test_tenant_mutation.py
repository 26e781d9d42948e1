"""The mutating endpoint's required selector (tenant entries with `requiredSelector.enforcement: Mutate`),
property-tested through `review()`: for generated ResourceClaims and ResourceClaimTemplates (several
requests, `exactly` and `firstAvailable`, existing selectors, some already carrying the required one, some
at the 32-selector limit), the patch applied by the `jsonpatch` library

- puts the selector into every request and subrequest;
- changes nothing else (the result with the selector removed equals the object with it removed, and the
  selectors a request had stay first, in order);
- is idempotent (the patched object gets no patch; applying the patch's additions twice adds nothing);
- leaves an object draguard's own validation finds nothing new in, which the validating endpoint admits;
- is no more permissive: on a generated device list, the devices every selector of a (sub)request matches
  after the patch are a subset of those before;

and a request where adding would make more than 32 selectors is denied, unpatched, at that field."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import jsonpatch
from admission_fixtures import admission_review, cluster_objects, served, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.admission import AdmissionConfig, review
from webhook.cel.runtime import CelRuntimeError, SelectorEvaluator
from webhook.config.context import Context
from webhook.config.policy import combine
from webhook.config.policyobject import check_policy_object
from webhook.config.profile import load_profile
from webhook.model.catalogue import RULES
from webhook.simulate.tenants import has_selector, targets
from webhook.validate import checked_object

DRIVER = "gpu.example.com"
REQUIRED = 'device.attributes["gpu.example.com"].tier == "shared"'
OTHER_REQUIRED = 'device.attributes["gpu.example.com"].mem >= 16'
SELECTORS = (
    'device.driver == "gpu.example.com"',
    'device.attributes["gpu.example.com"].model == "A100"',
    'device.attributes["gpu.example.com"].mem >= 40',
    'device.attributes["gpu.example.com"].tier != "dedicated"',
    "true",
    REQUIRED,
)
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"team": "a"}}}
SNAP = snapshot([*cluster_objects(), NAMESPACE])
PROFILE = load_profile("1.37")


def _policy(*expressions: str, mode: str = "Enforce") -> Any:
    obj = {
        "apiVersion": "draguard.io/v1alpha1",
        "kind": "DraguardPolicy",
        "metadata": {"name": "gpu-tenants"},
        "spec": {
            "tenants": [
                {
                    "name": f"t{i}",
                    "mode": mode,
                    "namespaceSelector": {"matchLabels": {"team": "a"}},
                    "requiredSelector": {"expression": e, "enforcement": "Mutate"},
                }
                for i, e in enumerate(expressions)
            ]
        },
    }
    spec = check_policy_object(obj, RULES, PROFILE)
    assert not isinstance(spec, list), spec
    return combine([spec])


POLICY = _policy(REQUIRED)
MUTATE = AdmissionConfig(endpoint="mutate", policy=POLICY)
VALIDATE = AdmissionConfig(endpoint="validate", policy=POLICY)

# -- generated objects -------------------------------------------------------------------------------


def _selectors() -> st.SearchStrategy[list[dict[str, Any]] | None]:
    sel = st.sampled_from(SELECTORS).map(lambda e: {"cel": {"expression": e}})
    return st.one_of(
        st.none(),
        st.lists(sel, max_size=3),
        st.integers(30, 32).flatmap(lambda n: st.lists(sel, min_size=n, max_size=n)),  # at the limit
    )


def _with_selectors(base: dict[str, Any], sels: list[dict[str, Any]] | None) -> dict[str, Any]:
    return base if sels is None else {**base, "selectors": sels}


_CLASSES = st.sampled_from(["gpu.example.com", "a100.example.com", "h100.example.com"])


@st.composite
def _exact(draw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"deviceClassName": draw(_CLASSES)}
    if draw(st.booleans()):
        base["allocationMode"] = "All"
    else:
        base["count"] = draw(st.integers(1, 4))
    return _with_selectors(base, draw(_selectors()))


@st.composite
def _request(draw: Any, name: str) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"name": name, "exactly": draw(_exact())}
    n = draw(st.integers(1, 3))
    subs = [{"name": f"s{j}", **draw(_exact())} for j in range(n)]
    return {"name": name, "firstAvailable": subs}


@st.composite
def _claim(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 4))
    devices = {"requests": [draw(_request(f"r{i}")) for i in range(n)]}
    if draw(st.booleans()):
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "team-a"},
            "spec": {"devices": devices},
        }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "team-a"},
        "spec": {"metadata": {"labels": {"app": "x"}}, "spec": {"devices": devices}},
    }


_DEVICES = st.lists(
    st.fixed_dictionaries(
        {
            "tier": st.sampled_from(["shared", "dedicated"]),
            "model": st.sampled_from(["A100", "H100"]),
            "mem": st.sampled_from([8, 16, 40, 80]),
        }
    ).map(
        lambda a: {
            "attributes": {
                "tier": {"string": a["tier"]},
                "model": {"string": a["model"]},
                "mem": {"int": a["mem"]},
            }
        }
    ),
    min_size=1,
    max_size=8,
)

# -- helpers -------------------------------------------------------------------------------------------


def _ops(response: dict[str, Any]) -> list[dict[str, Any]]:
    assert response["patchType"] == "JSONPatch"
    return json.loads(base64.b64decode(response["patch"]))


def _respond(obj: dict[str, Any], config: AdmissionConfig, operation: str = "CREATE") -> dict[str, Any]:
    return review(admission_review(served(obj), operation=operation), SNAP, config)["response"]


def _without(obj: dict[str, Any], expressions: tuple[str, ...]) -> dict[str, Any]:
    """`obj` with the selectors `expressions` removed from every (sub)request (an emptied list removed)."""
    out = copy.deepcopy(obj)
    for _, _, r in targets(out):
        if not isinstance(r.get("selectors"), list):
            continue
        kept = [s for s in r["selectors"] if s.get("cel", {}).get("expression") not in expressions]
        if kept:
            r["selectors"] = kept
        else:
            del r["selectors"]
    return out


def _findings(obj: dict[str, Any]) -> set[tuple[str, str, str]]:
    _, found = checked_object(copy.deepcopy(obj), Context(PROFILE, lint=False), None)
    return {(v.rule, v.field, v.message) for v in found}


def _matching(request: dict[str, Any], devices: list[dict[str, Any]]) -> set[int]:
    ev = SelectorEvaluator(list_attributes=False, consumable_capacity=False)
    out = set()
    for i, d in enumerate(devices):
        try:
            if all(
                ev.matches(s["cel"]["expression"], ("d", i), DRIVER, {"name": f"d{i}", **d})
                for s in request.get("selectors") or []
            ):
                out.add(i)
        except CelRuntimeError:
            continue
    return out


def _overfull(obj: dict[str, Any], expressions: tuple[str, ...]) -> list[str]:
    """The selectors fields where adding `expressions` makes more than 32 selectors."""
    out = []
    for at, _, r in targets(obj):
        missing = [e for e in expressions if not has_selector(r, e)]
        if missing and len(r.get("selectors") or []) + len(missing) > 32:
            out.append(str(at.child("selectors")))
    return out


# -- the property ----------------------------------------------------------------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=_claim(), devices=_DEVICES)
def test_the_required_selector_is_added_everywhere_and_nothing_else_changes(
    obj: dict[str, Any], devices: list[dict[str, Any]]
) -> None:
    response = _respond(obj, MUTATE)
    overfull = _overfull(obj, (REQUIRED,))
    if overfull:  # no room for the selector: denied there, never admitted without it
        assert response["allowed"] is False and "patch" not in response
        fields = [c["field"] for c in response["status"]["details"]["causes"]]
        assert fields == overfull
        assert all(c["message"].startswith("Too many: 33") for c in response["status"]["details"]["causes"])
        assert "gpu-tenants/t0" in response["status"]["message"]
        return
    assert response["allowed"] is True
    if "patch" not in response:  # every request had it already
        assert all(has_selector(r, REQUIRED) for _, _, r in targets(obj))
        return
    ops = _ops(response)
    assert all(op["op"] == "add" for op in ops)
    patched = jsonpatch.apply_patch(obj, ops)

    # every request and subrequest restricted; the selectors it had kept first, in order
    for (_, _, before), (_, _, after) in zip(targets(obj), targets(patched), strict=True):
        assert has_selector(after, REQUIRED)
        had = before.get("selectors") or []
        assert after["selectors"][: len(had)] == had
        assert after["selectors"][len(had) :] == (
            [] if has_selector(before, REQUIRED) else [{"cel": {"expression": REQUIRED}}]
        )
    # nothing else changed
    assert _without(patched, (REQUIRED,)) == _without(obj, (REQUIRED,))
    # idempotent: the patched object needs nothing; the same additions once more add nothing new
    again = _respond(patched, MUTATE)
    assert again["allowed"] is True and "patch" not in again
    # valid: draguard's own validation finds nothing new, and the validating endpoint's tenant check passes
    assert _findings(patched) <= _findings(obj)
    checked = _respond(patched, VALIDATE)
    causes = checked.get("status", {}).get("details", {}).get("causes", [])
    assert not [c for c in causes if "tenant" in c["message"]]
    # no more permissive: what each (sub)request's selectors match can only shrink
    for (_, _, before), (_, _, after) in zip(targets(obj), targets(patched), strict=True):
        assert _matching(after, devices) <= _matching(before, devices)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=_claim())
def test_two_entries_add_both_selectors_once_each(obj: dict[str, Any]) -> None:
    config = AdmissionConfig(endpoint="mutate", policy=_policy(REQUIRED, OTHER_REQUIRED, REQUIRED))
    response = _respond(obj, config)
    if _overfull(obj, (REQUIRED, OTHER_REQUIRED)):
        assert response["allowed"] is False and "patch" not in response
        return
    patched = jsonpatch.apply_patch(obj, _ops(response)) if "patch" in response else obj
    for _, _, r in targets(patched):
        expressions = [s["cel"]["expression"] for s in r["selectors"]]
        assert expressions.count(OTHER_REQUIRED) == 1
        assert REQUIRED in expressions
    assert _without(patched, (REQUIRED, OTHER_REQUIRED)) == _without(obj, (REQUIRED, OTHER_REQUIRED))
    assert "patch" not in _respond(patched, config)


def test_not_on_update_nor_outside_the_tenants_namespaces() -> None:
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "team-a"},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }
    assert "patch" in _respond(claim, MUTATE)
    update = review(admission_review(served(claim), operation="UPDATE", old=served(claim)), SNAP, MUTATE)[
        "response"
    ]
    assert update["allowed"] is True and "patch" not in update  # a claim's spec is immutable
    elsewhere = copy.deepcopy(claim)
    elsewhere["metadata"]["namespace"] = "ml"
    assert "patch" not in _respond(elsewhere, MUTATE)
    warn = AdmissionConfig(endpoint="mutate", policy=_policy(REQUIRED, mode="Warn"))
    assert "patch" not in _respond(claim, warn)  # Warn and Audit entries change nothing
