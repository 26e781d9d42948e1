"""`--extended-resources translate` on the mutating endpoint: a Pod CREATE whose extended resources a
DeviceClass maps is rewritten into claims from ResourceClaimTemplates per (namespace, class, count), built
from the scheduler's own special-claim requests (upstream createRequestsAndMappings); the templates are
applied through the writer (not for dryRun, not when the state has them); a failed write is answered by
the failure mode; the validating endpoint knows the templates just made. A property test applies the
patch with `jsonpatch` on generated Pods and checks it against upstream's requests and mappings."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import jsonpatch
import pytest
from admission_fixtures import admission_review, cluster_objects, pod, served, snapshot
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from webhook.admission import AdmissionConfig, review, review_with_info
from webhook.admission.extended import parse_template_name, template_name, template_object, translate
from webhook.admission.patch import pointer
from webhook.admission.templates_writer import TemplateWriteError
from webhook.config.context import Context
from webhook.config.policy import Policy
from webhook.config.profile import load_profile
from webhook.simulate import extended as ext
from webhook.validate import checked_object

SNAP = snapshot()
CLASSES = [o for o in cluster_objects() if o["kind"] == "DeviceClass"]
MAPPING = ext.class_mapping(CLASSES)
P135 = load_profile("1.35")
IMPLICIT = "deviceclass.resource.kubernetes.io/"


class Writer:
    """Records what it is asked to apply; fails with `error` when set."""

    def __init__(self, error: TemplateWriteError | None = None) -> None:
        self.applied: list[dict[str, Any]] = []
        self.timeouts: list[float] = []
        self.error = error

    def apply(self, template: dict[str, Any], timeout: float) -> None:
        self.timeouts.append(timeout)
        if self.error is not None:
            raise self.error
        self.applied.append(copy.deepcopy(template))


def _config(writer: Writer, **kw: Any) -> AdmissionConfig:
    return AdmissionConfig(
        endpoint="mutate", profile=P135, extended_resources="translate", templates=writer, **kw
    )


def _container(name: str, res: dict[str, str] | None, sidecar: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "registry.example.com/x:1", "resources": {}}
    if res is not None:
        c["resources"] = {"requests": dict(res), "limits": dict(res)}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def _pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    p = pod("p")
    p["spec"]["containers"] = containers
    if init:
        p["spec"]["initContainers"] = init
    return p


def _mutate(
    obj: dict[str, Any], writer: Writer | None = None, snap: Any = SNAP, **kw: Any
) -> tuple[dict[str, Any], Any, Writer]:
    writer = writer or Writer()
    config = _config(writer, failure_mode=kw.pop("mode", "open"))
    out, info = review_with_info(admission_review(served(obj), **kw), snap, config)
    return out["response"], info, writer


def _patched(obj: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    ops = json.loads(base64.b64decode(response["patch"])) if "patch" in response else []
    return jsonpatch.apply_patch(served(obj), ops)


def test_one_container_gets_a_claim_from_a_template_per_class_and_count() -> None:
    p = _pod([_container("main", {"example.com/h100": "2", "cpu": "1"})])
    response, info, writer = _mutate(p)
    assert info.extended == "translated" and response["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(response["patch"])) == [
        {"op": "remove", "path": "/spec/containers/0/resources/requests/example.com~1h100"},
        {"op": "remove", "path": "/spec/containers/0/resources/limits/example.com~1h100"},
        {
            "op": "add",
            "path": "/spec/containers/0/resources/claims",
            "value": [{"name": "container-0-request-1"}],
        },
        {
            "op": "add",
            "path": "/spec/resourceClaims",
            "value": [
                {"name": "container-0-request-1", "resourceClaimTemplateName": "draguard-h100.example.com-2"}
            ],
        },
    ]
    assert writer.applied == [template_object("ml", "h100.example.com", 2)]
    assert writer.applied[0]["spec"]["spec"]["devices"]["requests"] == [
        {
            "name": "devices",
            "exactly": {"deviceClassName": "h100.example.com", "allocationMode": "ExactCount", "count": 2},
        }
    ]
    assert 0 < writer.timeouts[0] <= 2.0
    assert response["warnings"] == [
        "draguard moved extended resources into ResourceClaims (--extended-resources translate): example.com/h100 "
        'of container "main" → claim "container-0-request-1" (2 × DeviceClass "h100.example.com", template '
        '"draguard-h100.example.com-2")'
    ]
    assert response["auditAnnotations"] == {
        "extended-resources": "container-0-request-1=draguard-h100.example.com-2"
    }


def test_init_containers_share_claims_as_they_share_requests_upstream() -> None:
    # upstream: the sidecar (index 1) and the app container (3) get their own requests; a plain init
    # container reuses the requests of long-lived containers at its index or later until it has enough
    # (init-a: 2 + 1 of 5, init-b: the app's 1 of 2) and asks for the rest (init-a 2, init-b 1); of the
    # plain init requests only the largest stays, and the others are mapped to it
    h100 = "example.com/h100"
    p = _pod(
        [_container("app", {h100: "1"})],
        init=[
            _container("init-a", {h100: "5"}),
            _container("sidecar", {h100: "2"}, sidecar=True),
            _container("init-b", {h100: "2"}),
        ],
    )
    reqs, _ = ext.special_requests(served(p), frozenset({h100}), MAPPING)
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [
        ("container-0-request-0", 2),
        ("container-1-request-0", 2),
        ("container-3-request-0", 1),
    ]
    response, _, writer = _mutate(p)
    patched = _patched(p, response)
    assert patched["spec"]["resourceClaims"] == [
        {"name": "container-0-request-0", "resourceClaimTemplateName": "draguard-h100.example.com-2"},
        {"name": "container-1-request-0", "resourceClaimTemplateName": "draguard-h100.example.com-2"},
        {"name": "container-3-request-0", "resourceClaimTemplateName": "draguard-h100.example.com-1"},
    ]
    refs = {
        c["name"]: [r["name"] for r in c["resources"].get("claims", [])]
        for c in patched["spec"]["initContainers"] + patched["spec"]["containers"]
    }
    assert refs == {
        "init-a": ["container-1-request-0", "container-3-request-0", "container-0-request-0"],
        "sidecar": ["container-1-request-0"],
        "init-b": ["container-3-request-0", "container-0-request-0"],
        "app": ["container-3-request-0"],
    }
    assert [t["metadata"]["name"] for t in writer.applied] == [
        "draguard-h100.example.com-2",
        "draguard-h100.example.com-1",
    ]


def test_implicit_names_and_two_resources_in_one_container() -> None:
    p = _pod([_container("main", {IMPLICIT + "gpu.example.com": "1", "example.com/a100": "4"})])
    patched = _patched(p, _mutate(p)[0])
    # request j is the resource's index in the container's sorted resource names, as upstream
    assert patched["spec"]["resourceClaims"] == [
        {"name": "container-0-request-0", "resourceClaimTemplateName": "draguard-gpu.example.com-1"},
        {"name": "container-0-request-1", "resourceClaimTemplateName": "draguard-a100.example.com-4"},
    ]
    assert patched["spec"]["containers"][0]["resources"] == {
        "requests": {},
        "limits": {},
        "claims": [{"name": "container-0-request-0"}, {"name": "container-0-request-1"}],
    }


NVIDIA_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "nvidia-gpu", "creationTimestamp": "2026-12-01T10:00:00Z"},
    "spec": {"extendedResourceName": "nvidia.com/gpu"},
}


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        # the Pod: one extended resource, its memory limit sorted first
        ({"memory": "1Gi", "nvidia.com/gpu": "1"}, "container-0-request-1"),
        ({"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "1"}, "container-0-request-2"),
        ({"cpu": "500m", "example.com/h100": "1", "memory": "1Gi"}, "container-0-request-1"),
    ],
)
def test_claims_are_named_as_the_scheduler_names_its_special_claims_requests(
    limits: dict[str, str], expected: str
) -> None:
    """Upstream (`extendeddynamicresources.go` createResourceRequestAndMappings) names a request
    `container-<i>-request-<j>`: i the container's index in initContainers ++ containers, j the resource's
    index among *all* the container's requests sorted by name — cpu and memory count, so a Pod's single GPU
    after its memory request is `request-1`. The container carries limits only: the API server defaults
    requests from them before any webhook sees the Pod (`SetDefaults_Pod`), and the scheduler reads those
    requests. The translated claim takes the request's name, so `kubectl describe` shows the name the
    scheduler's own claim (native mode) would carry."""
    p = _pod(
        [{"name": "main", "image": "registry.example.com/ml/trainer:1.0", "resources": {"limits": limits}}]
    )
    p["spec"]["containers"][0]["resources"]["requests"] = dict(limits)  # SetDefaults_Pod
    snap = snapshot([*cluster_objects(), NVIDIA_CLASS])
    response, info, writer = _mutate(p, snap=snap)
    assert info.extended == "translated"
    patched = _patched(p, response)
    assert patched["spec"]["resourceClaims"][0]["name"] == expected
    assert patched["spec"]["containers"][0]["resources"]["claims"] == [{"name": expected}]
    assert set(patched["spec"]["containers"][0]["resources"]["limits"]) == set(limits) - {
        "nvidia.com/gpu",
        "example.com/h100",
    }
    # the scheduler's special claim for the same Pod (native mode) names its one request the same way
    resource = next(r for r in limits if "/" in r)
    requests, mappings = ext.special_requests(
        served(p), frozenset({resource}), ext.class_mapping([*CLASSES, NVIDIA_CLASS])
    )
    assert [r["name"] for r in requests] == [expected]
    assert [(m.container_name, m.resource, m.request) for m in mappings] == [("main", resource, expected)]


def test_names_no_class_maps_stay_for_device_plugins() -> None:
    p = _pod([_container("main", {"vendor.com/fpga": "1", IMPLICIT + "nope": "1"})])
    response, info, writer = _mutate(p)
    assert info.extended == "unmapped" and "patch" not in response and writer.applied == []
    response, info, _ = _mutate(_pod([_container("main", {"cpu": "1"})]))
    assert info.extended is None and "patch" not in response


def test_existing_claims_are_kept_and_new_names_do_not_collide() -> None:
    p = _pod([_container("main", {"example.com/h100": "1"})])
    p["spec"]["resourceClaims"] = [{"name": "container-0-request-0", "resourceClaimTemplateName": "one-gpu"}]
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "container-0-request-0"}]
    response, _, _ = _mutate(p)
    ops = json.loads(base64.b64decode(response["patch"]))
    assert [op for op in ops if op["op"] == "add"] == [
        {
            "op": "add",
            "path": "/spec/containers/0/resources/claims/-",
            "value": {"name": "container-0-request-0-1"},
        },
        {
            "op": "add",
            "path": "/spec/resourceClaims/-",
            "value": {
                "name": "container-0-request-0-1",
                "resourceClaimTemplateName": "draguard-h100.example.com-1",
            },
        },
    ]


def test_dry_run_gets_the_same_patch_and_writes_nothing() -> None:
    p = _pod([_container("main", {"example.com/h100": "1"})])
    real, _, _ = _mutate(p)
    dry, info, writer = _mutate(p, dry_run=True)
    assert info.extended == "dryrun" and writer.applied == [] and writer.timeouts == []
    assert dry["patch"] == real["patch"]


def test_a_template_the_state_holds_is_not_applied_again() -> None:
    p = _pod([_container("main", {"example.com/h100": "1"})])
    stored = template_object("ml", "h100.example.com", 1)
    _, _, writer = _mutate(p, snap=snapshot([*cluster_objects(), stored]))
    assert writer.timeouts == []
    edited = copy.deepcopy(stored)
    edited["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 3
    _, _, writer = _mutate(p, snap=snapshot([*cluster_objects(), edited]))
    assert writer.applied == [stored]


FAILED = TemplateWriteError(
    "applying ResourceClaimTemplate ml/draguard-h100.example.com-1: HTTP 403: resourceclaimtemplates.resource.k8s.io "
    '"draguard-h100.example.com-1" is forbidden',
    403,
)


def test_a_failed_write_admits_unchanged_in_failure_mode_open() -> None:
    p = _pod([_container("main", {"example.com/h100": "1"})])
    response, info, _ = _mutate(p, Writer(FAILED))
    assert response["allowed"] is True and "patch" not in response
    assert (info.decision, info.extended) == ("error", "error")
    assert response["warnings"] == [
        f"draguard could not translate this Pod's extended resources into ResourceClaims ({FAILED}); admitted "
        "unchanged (failure mode: open): this cluster's scheduler does not serve its extended resources through DRA"
    ]


def test_a_failed_write_denies_in_failure_mode_closed() -> None:
    p = _pod([_container("main", {"example.com/h100": "1"})])
    response, info, _ = _mutate(p, Writer(FAILED), mode="closed")
    assert response["allowed"] is False and "patch" not in response
    assert response["status"] == {
        "metadata": {},
        "status": "Failure",
        "message": f"draguard could not translate this Pod's extended resources into ResourceClaims ({FAILED}); "
        "denied (failure mode: closed), retry later",
        "reason": "InternalError",
        "code": 500,
    }
    assert info.extended == "error"


def test_counts_no_claim_holds_and_device_plugin_nodes_are_warned_about() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "plugin-node"},
        "status": {"allocatable": {"cpu": "8", "example.com/h100": "8"}},
    }
    p = _pod([_container("main", {"example.com/h100": "40"})])
    response, _, _ = _mutate(p, snap=snapshot([*cluster_objects(), node]))
    assert response["warnings"][1:] == [
        'Pod claim "container-0-request-0" asks for 40 devices of DeviceClass "h100.example.com" but a claim holds '
        "at most 32: the Pod stays Pending",
        "1 node(s) advertise example.com/h100 through a device plugin; this Pod now asks for DRA devices only",
    ]


def test_update_and_the_validating_endpoint_do_not_translate() -> None:
    p = served(_pod([_container("main", {"example.com/h100": "1"})]))
    writer = Writer()
    update = review(admission_review(p, operation="UPDATE", old=p), SNAP, _config(writer))["response"]
    assert "patch" not in update and writer.timeouts == []


def test_the_validating_endpoint_knows_the_templates_just_made() -> None:
    p = _pod([_container("main", {"example.com/h100": "2"})])
    patched = _patched(p, _mutate(p)[0])
    validate = AdmissionConfig(profile=P135, extended_resources="translate")
    out, info = review_with_info(admission_review(patched), SNAP, validate)
    assert out["response"] == {"uid": out["response"]["uid"], "allowed": True}
    assert info.verdict == "feasible"
    # not a draguard template: the usual unknown-claim warning, and nothing to check
    other = copy.deepcopy(patched)
    other["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "someone-elses"
    out, info = review_with_info(admission_review(other), SNAP, validate)
    assert info.verdict == "skipped" and "(pod.unknown-claim)" in out["response"]["warnings"][0]
    five = _pod([_container("main", {"example.com/h100": "5"})])
    out, info = review_with_info(admission_review(_patched(five, _mutate(five)[0])), SNAP, validate)
    assert info.verdict == "unsatisfiable"


def test_template_names_round_trip_and_long_class_names_are_cut() -> None:
    assert template_name("gpu.example.com", 2) == "draguard-gpu.example.com-2"
    assert parse_template_name("draguard-gpu.example.com-2") == ("gpu.example.com", 2)
    assert parse_template_name("draguard-a-1-12") == ("a-1", 12)
    for bad in ("draguard-gpu", "draguard--2", "draguard-x-02", "other-gpu-2", "draguard-x-²"):
        assert parse_template_name(bad) is None
    long = "a" * 120 + "." + "b" * 120 + ".example.com"
    name = template_name(long, 7)
    assert len(name) <= 253 and name.endswith("-7") and name != template_name(long[:-1] + "n", 7)
    stored, found = checked_object(template_object("ml", long, 7), Context(P135, lint=False), Policy())
    assert stored is not None and [v for v in found if v.severity == "error"] == []


# -- the property: the patch, applied by a library, is upstream's requests and mappings as claims ----------

NAMES = [
    "example.com/h100",
    "example.com/a100",
    IMPLICIT + "gpu.example.com",
    IMPLICIT + "tpu.example.com",  # no such class
    "vendor.com/fpga",  # no class maps it
    "cpu",
    "memory",
]
QTY = st.sampled_from(["0", "1", "2", "3", "8", "500m", "1k"]) | st.integers(0, 4)


@st.composite
def _resources(draw: Any) -> dict[str, Any] | None:
    if draw(st.integers(0, 5)) == 0:
        return None  # no `resources` at all
    chosen = draw(st.dictionaries(st.sampled_from(NAMES), QTY, max_size=4))
    res: dict[str, Any] = {}
    where = draw(st.sampled_from(["both", "limits", "requests"]))
    if where in ("both", "requests"):
        res["requests"] = dict(chosen)
    if where in ("both", "limits"):
        res["limits"] = dict(chosen)
    return res


@st.composite
def _pods(draw: Any) -> dict[str, Any]:
    n_init, n_app = draw(st.integers(0, 3)), draw(st.integers(1, 3))
    existing = draw(
        st.lists(
            st.sampled_from(["gpu", "container-0-request-0", "container-1-request-1"]),
            max_size=2,
            unique=True,
        )
    )
    containers: list[dict[str, Any]] = []
    for i in range(n_init + n_app):
        c: dict[str, Any] = {"name": f"c{i}", "image": "x", "x-unowned": draw(st.integers())}
        res = draw(_resources())
        if res is not None:
            if existing and draw(st.booleans()):
                res["claims"] = [{"name": draw(st.sampled_from(existing))}]
            c["resources"] = res
        if i < n_init and draw(st.booleans()):
            c["restartPolicy"] = "Always"
        containers.append(c)
    p = pod("p")
    p["spec"]["containers"] = containers[n_init:]
    if n_init:
        p["spec"]["initContainers"] = containers[:n_init]
    if existing:
        p["spec"]["resourceClaims"] = [{"name": n, "resourceClaimTemplateName": "one-gpu"} for n in existing]
    return p


def _leaves(doc: Any, here: str = "") -> dict[str, str]:
    if isinstance(doc, dict):
        return {p: v for k, x in doc.items() for p, v in _leaves(x, here + pointer((k,))).items()}
    if isinstance(doc, list):
        return {p: v for i, x in enumerate(doc) for p, v in _leaves(x, f"{here}/{i}").items()}
    return {here: json.dumps(doc)}


def _cpath(i: int, n_init: int) -> str:
    return f"/spec/initContainers/{i}" if i < n_init else f"/spec/containers/{i - n_init}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=_pods(), dry_run=st.booleans())
def test_the_patch_is_upstreams_special_claim_as_claims(p: dict[str, Any], dry_run: bool) -> None:
    obj = served(p)
    writer = Writer()
    out, info = review_with_info(admission_review(copy.deepcopy(obj), dry_run=dry_run), SNAP, _config(writer))
    response = out["response"]
    assert response["allowed"] is True
    mapped = frozenset(r for r in ext.requested_resources(obj) if r in MAPPING)
    reqs, maps = ext.special_requests(obj, mapped, MAPPING) if mapped else ([], [])
    event("translated" if reqs else "nothing to translate")
    if not reqs:
        assert "patch" not in response and writer.timeouts == []
        assert info.extended in (None, "unmapped")
        return
    assert info.extended == ("dryrun" if dry_run else "translated")
    ops = json.loads(base64.b64decode(response["patch"]))
    patched = jsonpatch.apply_patch(obj, ops)
    containers, n_init = ext.all_containers(obj)
    after, _ = ext.all_containers(patched)

    # 1. removed: exactly the (container, resource) pairs upstream maps; nothing else changes
    translated = {(m.container_index, m.resource) for m in maps}
    removed = {
        f"{_cpath(i, n_init)}/resources/{part}{pointer((r,))}"
        for i, r in translated
        for part in ("requests", "limits")
        if r in (containers[i].get("resources") or {}).get(part, {})
    }
    assert {op["path"] for op in ops if op["op"] == "remove"} == removed
    before_leaves, after_leaves = _leaves(obj), _leaves(patched)
    for path, value in before_leaves.items():
        if path not in removed:
            assert after_leaves.get(path) == value, path  # every other field kept, lists not reordered

    # 2. one Pod claim per upstream request, from the template of its class and count
    old_entries = obj["spec"].get("resourceClaims") or []
    entries = patched["spec"]["resourceClaims"]
    assert entries[: len(old_entries)] == old_entries
    new = entries[len(old_entries) :]
    assert len(new) == len(reqs) and len(entries) == len({e["name"] for e in entries})
    claim_of = {}
    for r, e in zip(reqs, new, strict=True):
        assert parse_template_name(e["resourceClaimTemplateName"]) == (
            r["exactly"]["deviceClassName"],
            r["exactly"]["count"],
        )
        claim_of[r["name"]] = e["name"]

    # 3. each container refers to the claims of the requests upstream maps it to (shared = shared)
    for i, c in enumerate(after):
        refs = [x["name"] for x in (c.get("resources") or {}).get("claims", [])]
        had = [x["name"] for x in (containers[i].get("resources") or {}).get("claims", [])]
        assert refs[: len(had)] == had
        assert refs[len(had) :] == list(
            dict.fromkeys(claim_of[m.request] for m in maps if m.container_index == i)
        )

    # 4. valid for the API server's Pod rules, and translating again changes nothing
    _, found = checked_object(copy.deepcopy(patched), Context(P135, lint=False), Policy())
    assert [v for v in found if v.rule.startswith("pod.") and v.severity == "error"] == []
    assert translate(patched, "ml", CLASSES).ops == []

    # 5. the templates: applied unless dry run, each once, valid
    templates = [template_object("ml", *parse_template_name(e["resourceClaimTemplateName"])) for e in new]  # type: ignore[misc]
    unique = list({t["metadata"]["name"]: t for t in templates}.values())
    assert writer.applied == ([] if dry_run else unique)
