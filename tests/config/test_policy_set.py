"""The DraguardPolicies one server holds (webhook/config/policyset.py) and the status it writes
(policystatus.py): the last valid version of an object stays in force while a newer one is invalid, each
verdict is written once, and two servers that disagree do not overwrite each other forever."""

from __future__ import annotations

import copy
from typing import Any

from webhook.config.fields import FieldError
from webhook.config.policy import PolicySpec
from webhook.config.policyset import PolicySet
from webhook.config.policystatus import says, status_patch, verdict_of
from webhook.config.profile import load_profile
from webhook.model.catalogue import RULES
from webhook.model.violation import Severity

NOW = "2026-01-02T03:04:05Z"


def policy(name: str, setting: str, generation: int = 1, uid: str = "u1", rv: str = "10") -> dict[str, Any]:
    return {
        "apiVersion": "draguard.io/v1alpha1",
        "kind": "DraguardPolicy",
        "metadata": {"name": name, "uid": uid, "generation": generation, "resourceVersion": rv},
        "spec": {"rules": {"pool.completeness": setting}},
    }


def new_set(*base: PolicySpec) -> PolicySet:
    return PolicySet(RULES, load_profile("1.37"), base, clock=lambda: NOW)


def written(obj: dict[str, Any], patch: Any) -> dict[str, Any]:
    """The object after the server wrote its status (as the API server stores a status merge patch)."""
    return {**copy.deepcopy(obj), "status": copy.deepcopy(patch["status"])}


def test_a_valid_policy_is_in_force_and_its_status_written_once() -> None:
    s = new_set()
    obj = policy("p", "error")
    s.apply(obj)
    snap = s.publish()
    assert snap.policy.severity == {"pool.completeness": Severity.ERROR}
    assert snap.states["p"].applied == 1 and snap.states["p"].verdict.valid
    (write,) = snap.writes
    assert write.name == "p"
    assert write.patch == {
        "metadata": {"resourceVersion": "10"},
        "status": {
            "observedGeneration": 1,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "observedGeneration": 1,
                    "lastTransitionTime": NOW,
                    "reason": "Applied",
                    "message": "generation 1 is in force",
                },
                {
                    "type": "Invalid",
                    "status": "False",
                    "observedGeneration": 1,
                    "lastTransitionTime": NOW,
                    "reason": "Valid",
                    "message": "",
                },
            ],
        },
    }
    # the watch brings the object back with that status: nothing more to write, the policy object unchanged
    s.apply(written(obj, write.patch) | {"metadata": {**obj["metadata"], "resourceVersion": "11"}})
    again = s.publish()
    assert again.writes == () and again.policy is snap.policy


def test_an_invalid_generation_keeps_the_last_valid_one_in_force() -> None:
    s = new_set()
    s.apply(policy("p", "error"))
    s.publish()
    bad = policy("p", "severe", generation=2, rv="12")
    s.apply(bad)
    snap = s.publish()
    assert snap.policy.severity == {"pool.completeness": Severity.ERROR}  # generation 1's
    state = snap.states["p"]
    assert (state.generation, state.applied, state.verdict.valid) == (2, 1, False)
    (write,) = snap.writes
    ready, invalid = write.patch["status"]["conditions"]
    assert (ready["status"], ready["reason"], ready["observedGeneration"]) == ("False", "Invalid", 2)
    assert (invalid["status"], invalid["reason"]) == ("True", "InvalidValue")
    assert invalid["message"].startswith('spec.rules[pool.completeness]: Unsupported value: "severe"')
    # fixed in generation 3: in force, Ready again
    s.apply(policy("p", "info", generation=3, rv="14"))
    snap = s.publish()
    assert snap.policy.severity == {"pool.completeness": Severity.INFO}
    assert snap.states["p"].applied == 3


def test_an_invalid_first_generation_or_a_new_object_of_that_name_is_not_in_force() -> None:
    s = new_set()
    s.apply(policy("p", "severe"))
    snap = s.publish()
    assert snap.policy.severity == {} and snap.states["p"].applied is None
    s.apply(policy("p", "error", generation=2))
    s.publish()
    s.apply(policy("p", "severe", uid="u2"))  # deleted and created again (the delete not seen)
    assert s.publish().policy.severity == {}


def test_deleting_a_policy_takes_it_out_and_the_file_policy_stays() -> None:
    base = PolicySpec(rules={"pool.completeness": "info"})
    s = new_set(base)
    assert s.snapshot().policy.severity == {"pool.completeness": Severity.INFO}
    s.apply(policy("p", "error"))
    assert s.publish().policy.severity == {"pool.completeness": Severity.ERROR}
    s.delete("DraguardPolicy", None, "p")
    snap = s.publish()
    assert snap.policy.severity == {"pool.completeness": Severity.INFO}
    assert snap.states == {} and snap.objects("DraguardPolicy") == {}


def test_a_server_that_disagrees_is_not_overwritten_forever() -> None:
    """Two versions of draguard during a rollout (one knows a rule, one does not): each writes its verdict
    once for a generation, then leaves the other's standing."""
    s = new_set()
    obj = policy("p", "error")
    s.apply(obj)
    (mine,) = s.publish().writes
    theirs = status_patch(
        obj, verdict_of(1, [FieldError("spec.rules[x]", "unknown rule id", "UnknownRule")]), NOW
    )
    s.apply(written(obj, theirs))  # the other server wrote after this one
    assert s.publish().writes == ()
    # a new generation is judged (and written) again
    s.apply(policy("p", "warning", generation=2, rv="20"))
    assert [w.name for w in s.publish().writes] == ["p"]


def test_transition_times_move_only_when_a_condition_changes() -> None:
    ok = verdict_of(1, [])
    obj = written(policy("p", "error"), status_patch(policy("p", "error"), ok, "2020-01-01T00:00:00Z"))
    assert says(obj["status"], ok)
    bad = verdict_of(2, [FieldError("spec", "x")])
    conditions = status_patch(obj, bad, NOW)["status"]["conditions"]
    assert [c["lastTransitionTime"] for c in conditions] == [NOW, NOW]
    still_ok = status_patch(obj, verdict_of(2, []), NOW)["status"]["conditions"]
    assert [c["lastTransitionTime"] for c in still_ok] == ["2020-01-01T00:00:00Z"] * 2
    assert not says(obj["status"], verdict_of(2, []))  # another generation
