"""matchConditions in the stand-in: compiled by draguard's CEL engine in the admission variables'
environment, decided as upstream's matchconditions matcher decides (false beats errors; errors go to the
failurePolicy), and the expressions draguard's own webhook configurations (deploy/) use, over real Pods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.standin.admission_cel import ConditionError, Match, compile_conditions, evaluate

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def variables(obj: Any = None, old: Any = None, username: str = "jane") -> dict[str, Any]:
    request = {"operation": "CREATE", "userInfo": {"username": username, "groups": ["system:authenticated"]}}
    return {"object": obj, "oldObject": old, "request": request, "namespaceObject": None}


def conditions(*pairs: tuple[str, str]) -> list[Any]:
    return compile_conditions([{"name": n, "expression": e} for n, e in pairs])


def test_all_true_matches_and_the_first_false_skips() -> None:
    cs = conditions(("a", "request.userInfo.username != 'robot'"), ("b", "object.spec.x > 1"))
    assert evaluate(cs, variables({"spec": {"x": 2}}), "Fail").matches
    m = evaluate(cs, variables({"spec": {"x": 2}}, username="robot"), "Fail")
    assert (m.matches, m.failed, m.error) == (False, "a", "")


def test_false_wins_over_an_error_whatever_the_failure_policy() -> None:
    cs = conditions(("errs", "object.spec.missing == 1"), ("no", "false"))
    for policy in ("Fail", "Ignore"):
        m = evaluate(cs, variables({"spec": {}}), policy)
        assert (m.matches, m.failed, m.error) == (False, "no", "")


def test_an_error_fails_closed_with_fail_and_skips_with_ignore() -> None:
    cs = conditions(("ok", "true"), ("errs", "object.spec.missing == 1"))
    m = evaluate(cs, variables({"spec": {}}), "Fail")
    assert (
        not m.matches
        and m.error == "expression 'object.spec.missing == 1' resulted in error: no such key: missing"
    )
    m = evaluate(cs, variables({"spec": {}}), "Ignore")
    assert (m.matches, m.error) == (False, "")
    # several errors are aggregated as apimachinery's NewAggregate prints them
    two = conditions(("e1", "object.a == 1"), ("e2", "object.b == 1"))
    assert evaluate(two, variables({}), "Fail").error.startswith(
        "[expression 'object.a == 1' resulted in error"
    )


def test_object_is_null_on_delete_and_old_object_on_create() -> None:
    cs = conditions(("delete", "object == null && oldObject.metadata.name == 'x'"))
    assert evaluate(cs, variables(None, {"metadata": {"name": "x"}}), "Fail").matches
    cs = conditions(("create", "oldObject == null"))
    assert evaluate(cs, variables({"metadata": {}}), "Fail").matches


def test_the_cost_budget_is_shared_and_running_out_goes_to_the_failure_policy() -> None:
    # each condition costs ~100,000 on a 1,000,000-character string: 30 of them exceed the 2,500,000 budget
    cs = conditions(*((f"c{i}", "!object.s.contains('b')") for i in range(30)))
    big = variables({"s": "a" * 1_000_000})
    assert evaluate(cs[:20], big, "Fail").matches  # 20 fit in the budget
    m = evaluate(cs, big, "Fail")
    assert not m.matches and m.error == (
        "validation failed due to running out of cost budget, no further validation rules will be run"
    )
    assert evaluate(cs, big, "Ignore") == Match(False)  # skipped, no error


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("objct.x == 1", "undeclared reference to 'objct'"),
        ("1 + 2", "must evaluate to bool"),
        ("object.(", "Syntax error"),
        (
            "authorizer.group('').resource('pods').check('create').allowed()",
            "does not implement the CEL variable",
        ),
        ("authorizer.requestResource.check('get').allowed()", "does not implement the CEL variable"),
    ],
)
def test_conditions_the_api_server_refuses_or_the_stand_in_cannot_play_fail_at_load(
    expression: str, message: str
) -> None:
    with pytest.raises(ConditionError, match=message):
        conditions(("c", expression))


def test_condition_names_are_required_and_unique() -> None:
    with pytest.raises(ConditionError, match="Duplicate value"):
        conditions(("c", "true"), ("c", "false"))
    with pytest.raises(ConditionError, match="Required value"):
        compile_conditions([{"expression": "true"}])
    with pytest.raises(ConditionError, match="Too many"):
        conditions(*((f"c{i}", "true") for i in range(65)))


def pod(
    *containers: dict[str, Any], claims: list[Any] | None = None, annotations: Any = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": list(containers)}
    if claims is not None:
        spec["resourceClaims"] = claims
    meta: dict[str, Any] = {"name": "p", "namespace": "ml"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def container(limits: dict[str, str] | None = None, requests: dict[str, str] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "image": "busybox"}
    if limits is not None or requests is not None:
        c["resources"] = {k: v for k, v in (("limits", limits), ("requests", requests)) if v is not None}
    return c


POD_CASES = [
    ("a claim", pod(container(), claims=[{"name": "gpu", "resourceClaimTemplateName": "t"}]), True),
    ("no claims, no resources", pod(container()), False),
    ("an empty claim list", pod(container(), claims=[]), False),
    ("cpu and memory only", pod(container({"cpu": "1", "memory": "1Gi"})), False),
    ("an extended resource limit", pod(container({"example.com/gpu": "2"})), True),
    ("an extended resource request", pod(container(None, {"example.com/gpu": "1"})), True),
    (
        "an implicit DeviceClass resource",
        pod(container({"deviceclass.resource.kubernetes.io/gpu": "1"})),
        True,
    ),
    ("a second container", pod(container(), container({"example.com/nic": "1"})), True),
]


def deploy_webhook(name: str) -> dict[str, Any]:
    """A webhook as deploy/ declares it: the base's configurations, the translate component's patch."""
    base = [
        yaml.safe_load((DEPLOY / "base" / f).read_text())
        for f in ("validating-webhook.yaml", "mutating-webhook.yaml")
    ]
    webhooks = [w for cfg in base for w in cfg["webhooks"]]
    webhooks += [
        op["value"]
        for op in yaml.safe_load((DEPLOY / "components" / "translate" / "pods-webhook.yaml").read_text())
    ]
    (w,) = [w for w in webhooks if w["name"] == name]
    return w


def test_every_match_condition_of_deploy_compiles_and_excludes_draguard_itself() -> None:
    names = ["objects.validate.draguard.io", "claim-status.validate.draguard.io", "pods.validate.draguard.io"]
    names += ["objects.mutate.draguard.io", "pods.mutate.draguard.io"]
    for name in names:
        hook = deploy_webhook(name)
        cs = compile_conditions(hook["matchConditions"])
        me = evaluate(
            cs,
            variables(
                pod(container({"example.com/gpu": "1"})),
                username="system:serviceaccount:draguard-system:draguard",
            ),
            "Fail",
        )
        assert (me.matches, me.failed) == (False, "not-draguard-itself"), name


@pytest.mark.parametrize(("pod_", "sent"), [c[1:] for c in POD_CASES], ids=[c[0] for c in POD_CASES])
def test_the_pods_webhook_conditions_send_only_pods_that_use_devices(
    pod_: dict[str, Any], sent: bool
) -> None:
    hook = deploy_webhook("pods.validate.draguard.io")
    cs = compile_conditions(hook["matchConditions"])
    assert evaluate(cs, variables(pod_), hook["failurePolicy"]).matches is sent


TRANSLATE_CASES = [
    ("an extended resource", pod(container({"example.com/gpu": "2"})), True),
    (
        "claims only: nothing to translate",
        pod(container(), claims=[{"name": "gpu", "resourceClaimTemplateName": "t"}]),
        False,
    ),
    (
        "a mirror Pod is never mutated",
        pod(container({"example.com/gpu": "2"}), annotations={"kubernetes.io/config.mirror": "x"}),
        False,
    ),
    ("other annotations", pod(container({"example.com/gpu": "2"}), annotations={"a": "b"}), True),
    (
        "an init container's extended resource",
        pod(container())
        | {
            "spec": {
                "containers": [container()],
                "initContainers": [container(None, {"example.com/gpu": "1"})],
            }
        },
        True,
    ),
]


@pytest.mark.parametrize(
    ("pod_", "sent"), [c[1:] for c in TRANSLATE_CASES], ids=[c[0] for c in TRANSLATE_CASES]
)
def test_the_translate_webhook_conditions_send_only_pods_with_extended_resources(
    pod_: dict[str, Any], sent: bool
) -> None:
    hook = deploy_webhook("pods.mutate.draguard.io")
    cs = compile_conditions(hook["matchConditions"])
    assert evaluate(cs, variables(pod_), hook["failurePolicy"]).matches is sent
