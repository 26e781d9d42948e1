"""`draguard serve` end to end: a real gunicorn server over HTTPS on 127.0.0.1 with certificates from
`draguard certs`, two workers, real AdmissionReviews; bad bodies, size and time limits, metrics across
workers, and state directory changes."""

from __future__ import annotations

import base64
import copy
import json
import shutil
import socket
import ssl
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from server_proc import (
    EXAMPLES,
    Server,
    StateServer,
    example_review,
    make_certs,
    metric_samples,
    review_of,
    served,
    wait_for,
)

CAP = 1 << 20  # --max-body-bytes of the shared server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StateServer]:
    tmp = tmp_path_factory.mktemp("serve")
    policy = tmp / "policy.yaml"
    policy.write_text("feasibility:\n  kinds: {ResourceClaim: enforce}\n")
    yield from served(
        tmp,
        EXAMPLES,
        "--policy", str(policy),
        "--reload-interval", "0.1",
        "--max-body-bytes", str(CAP),
        workers=2,
        ignore=shutil.ignore_patterns("admission"),
    )  # fmt: skip


def _status(data: bytes) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(data)
    assert body["kind"] == "Status" and body["status"] == "Failure", body
    return body


def test_a_real_review_is_answered_with_its_uid(server: Server) -> None:
    ar = example_review("claim-create.json")
    for path in ("/validate", "/mutate", "/validate?timeout=10s"):
        status, answer = server.review(ar, path)
        assert status == 200, answer
        assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
        assert answer["response"]["uid"] == ar["request"]["uid"]
        assert answer["response"]["allowed"] is True


def test_an_invalid_object_is_denied_with_its_field_path(server: Server) -> None:
    ar = example_review("slice-create-invalid.json")
    status, answer = server.review(ar)
    assert status == 200
    response = answer["response"]
    assert response["uid"] == ar["request"]["uid"] and response["allowed"] is False
    assert response["status"]["code"] == 422 and response["status"]["reason"] == "Invalid"
    assert [c["field"] for c in response["status"]["details"]["causes"]] == ["spec.devices[0].name"]


def test_the_url_timeout_bounds_the_feasibility_check(server: Server) -> None:
    ar = example_review("claim-create-unsatisfiable.json")
    status, answer = server.review(ar, "/validate?timeout=10s")  # time enough: proven unsatisfiable
    assert status == 200 and answer["response"]["allowed"] is False
    assert "can never be allocated on this cluster" in answer["response"]["status"]["message"]
    status, answer = server.review(ar, "/validate?timeout=0s")  # no time: undecided, admitted
    assert status == 200 and answer["response"]["allowed"] is True
    assert "feasibility undecided" in answer["response"]["warnings"][0]
    _, text = server.request("GET", "/metrics")
    m = metric_samples(text.decode())
    for verdict in ("unsatisfiable", "undecided"):
        assert (
            m[("draguard_feasibility_verdicts_total", (("kind", "ResourceClaim"), ("verdict", verdict)))] >= 1
        )
    assert m[("draguard_feasibility_duration_seconds_count", (("kind", "ResourceClaim"),))] >= 2
    denied = (
        ("decision", "denied"),
        ("endpoint", "validate"),
        ("kind", "ResourceClaim"),
        ("operation", "CREATE"),
    )
    assert m[("draguard_admission_requests_total", denied)] >= 1


def _manifest(path: Path, kind: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(
        next(
            d
            for d in yaml.safe_load_all(path.read_text())
            if d and d["kind"] == kind and d["metadata"]["name"] == name
        )
    )


def _verdicts(server: Server, kind: str) -> dict[str, float]:
    _, text = server.request("GET", "/metrics")
    m = metric_samples(text.decode())
    out: dict[str, float] = {}
    for (name, labels), value in m.items():
        d = dict(labels)
        if name == "draguard_feasibility_verdicts_total" and d.get("kind") == kind:
            out[d["verdict"]] = value
    return out


def test_a_pods_feasibility_runs_on_the_real_state(server: Server) -> None:
    """Pod CREATE resolves its template claim in the worker's state (Snapshot.objects) and runs the
    allocator: feasible is silent, unsatisfiable a warning (Pods are in mode warn here)."""
    before = _verdicts(server, "Pod")
    trainer = _manifest(EXAMPLES / "simulate" / "gpu-cluster.yaml", "Pod", "trainer-1")
    status, answer = server.review(review_of(trainer))
    assert status == 200 and answer["response"] == {"uid": answer["response"]["uid"], "allowed": True}
    inference = _manifest(EXAMPLES / "extended-resource.yaml", "Pod", "vllm-inference")
    inference["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "5"  # worker-7 has 4
    status, answer = server.review(review_of(inference))
    response = answer["response"]
    assert status == 200 and response["allowed"] is True
    assert response["auditAnnotations"] == {"feasibility": "unsatisfiable"}
    assert response["warnings"] == [
        'Pod "default/vllm-inference" can never be allocated on this cluster, not even with every device free '
        "and untainted: request container-0-request-1: the largest node, worker-7, has 4 devices of class nvidia-a100; "
        "5 requested (5 node(s) considered, 5 pruned by device counts, best node worker-7) (admission.feasibility: "
        "unsatisfiable, mode warn)"
    ]
    after = _verdicts(server, "Pod")
    assert after.get("feasible", 0) >= before.get("feasible", 0) + 1
    assert after.get("unsatisfiable", 0) >= before.get("unsatisfiable", 0) + 1
    assert "skipped" not in after


def test_the_mutating_endpoint_answers_a_json_patch(server: Server) -> None:
    """A slice with an alpha field the v1.37 API server drops: a base64 JSONPatch that, applied by a
    JSONPatch library, gives exactly the object without that field; dryRun gets the same patch."""
    obj = _manifest(EXAMPLES / "compatibility-groups.yaml", "ResourceSlice", "gpu-devices")
    answers = []
    for dry_run in (False, True):
        status, answer = server.review(review_of(obj, dry_run=dry_run), "/mutate?timeout=10s")
        assert status == 200
        answers.append(answer["response"])
    wet, dry = answers
    assert wet["allowed"] is True and wet["patchType"] == "JSONPatch"
    assert (dry["patch"], dry["warnings"]) == (wet["patch"], wet["warnings"])
    ops = json.loads(base64.b64decode(wet["patch"]))
    assert ops == [
        {"op": "remove", "path": "/spec/devices/1/consumesCounters/0/compatibilityGroups"},
        {"op": "remove", "path": "/spec/devices/0/consumesCounters/0/compatibilityGroups"},
    ]
    expected = copy.deepcopy(obj)
    for device in expected["spec"]["devices"]:
        del device["consumesCounters"][0]["compatibilityGroups"]
    assert jsonpatch.apply_patch(obj, ops) == expected
    assert len(wet["warnings"]) == 2 and all("DRADeviceCompatibilityGroups" in w for w in wet["warnings"])
    status, answer = server.review(review_of(obj), "/validate")  # validating: allowed, the same warnings
    assert status == 200 and answer["response"]["allowed"] is True and "patch" not in answer["response"]


def test_dry_run_gets_the_same_denial(server: Server) -> None:
    ar = example_review("slice-create-invalid.json")
    dry = copy.deepcopy(ar)
    dry["request"]["dryRun"] = True
    dry["request"]["uid"] = "dry-" + ar["request"]["uid"]
    _, wet_answer = server.review(ar)
    _, dry_answer = server.review(dry)
    assert dry_answer["response"]["uid"] == dry["request"]["uid"]
    assert {k: v for k, v in dry_answer["response"].items() if k != "uid"} == {
        k: v for k, v in wet_answer["response"].items() if k != "uid"
    }


def _namespaces_loaded(server: Server, count: int) -> bool:
    def one() -> bool:
        status, data = server.request("GET", "/readyz")
        return status == 200 and json.loads(data)["objects"].get("Namespace", 0) == count

    return all(one() for _ in range(10))  # ten fresh connections (both workers) agree


def test_admin_access_follows_the_namespace_label_in_the_state(server: StateServer) -> None:
    state = server.state
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "debug-all-gpus", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "all",
                        "exactly": {
                            "deviceClassName": "example-gpu",
                            "allocationMode": "All",
                            "adminAccess": True,
                        },
                    }
                ]
            }
        },
    }
    assert server.review(review_of(claim))[1]["response"]["allowed"] is True  # namespace unknown: skipped
    namespace = state / "zz-namespace.yaml"
    namespace.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {team: ml}}\n")
    wait_for("the Namespace in every worker", lambda: _namespaces_loaded(server, 1))
    response = server.review(review_of(claim))[1]["response"]
    assert response["allowed"] is False and response["status"]["code"] == 422
    assert response["status"]["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: "
            "true` label on the containing namespace",
            "field": "spec.devices.requests[0].adminAccess",
        }
    ]
    tmp = state / ".zz-namespace.yaml.tmp"
    tmp.write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n"
        '  labels: {team: ml, resource.kubernetes.io/admin-access: "true"}\n'
    )
    tmp.replace(namespace)
    wait_for(
        "the labelled Namespace in every worker",
        lambda: all(server.review(review_of(claim))[1]["response"]["allowed"] for _ in range(10)),
    )
    namespace.unlink()
    wait_for("the Namespace to go", lambda: _namespaces_loaded(server, 0))


def test_the_certificate_is_verified_against_the_generated_ca(server: Server, tmp_path: Path) -> None:
    other = tmp_path / "other"
    make_certs(other)
    ctx = ssl.create_default_context(cafile=str(other / "ca.crt"))
    with pytest.raises(ssl.SSLCertVerificationError):
        server.request("GET", "/healthz", conn=server.connection(ctx))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.1: offering it is the point
        old = ssl.create_default_context(cafile=str(server.certs / "ca.crt"))  # type: ignore[operator]
        old.set_ciphers("DEFAULT:@SECLEVEL=0")
        old.minimum_version = ssl.TLSVersion.TLSv1
        old.maximum_version = ssl.TLSVersion.TLSv1_1
    with pytest.raises(ssl.SSLError, match="alert protocol version"):  # the server refuses it
        server.request("GET", "/healthz", conn=server.connection(old))
    tls12 = server.context()
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2
    assert server.request("GET", "/healthz", conn=server.connection(tls12)) == (200, b"ok\n")


BAD_BODIES = [
    (b"", "the body is empty"),
    (b"   \n", "the body is empty"),
    (b"apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\n", "not a JSON object"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"apiVersion": "admission.k8s.io/v1",', "not valid JSON"),
    (b'{"a": NaN}', "not valid JSON"),
    (b'{"a": 1} {"b": 2}', "2 JSON values"),
    (b'{"request": {"uid": "x", "uid": "y"}}', "repeats a key (request.uid)"),
    (b'{"a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nested deeper"),
    (b'{"a": 1' + b"0" * 5000 + b"}", "4300 digits"),
    (b'\xff\xfe{"a": 1}', "not UTF-8"),
]


@pytest.mark.parametrize(("body", "message"), BAD_BODIES, ids=[m for _, m in BAD_BODIES])
def test_a_body_that_is_no_json_object_gets_400(server: Server, body: bytes, message: str) -> None:
    status, data = server.request("POST", "/validate", body)
    assert status == 400, data
    assert message in _status(data)["message"]


@pytest.mark.parametrize(
    "ar",
    [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
        {"apiVersion": "admission.k8s.io/v1beta2", "kind": "AdmissionReview", "request": {"uid": "u"}},
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"},
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"operation": "CREATE"}},
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": "nope"},
    ],
    ids=["a-pod", "unknown-version", "no-request", "no-uid", "request-not-object"],
)
def test_json_that_is_no_admission_review_gets_400(server: Server, ar: dict[str, Any]) -> None:
    status, data = server.request("POST", "/validate", json.dumps(ar).encode())
    assert status == 400, data
    assert _status(data)["message"]


def _raw(server: Server, head: bytes, body: bytes = b"") -> bytes:
    """Send raw bytes over TLS and read the answer until the server closes or sends a full response."""
    ctx = server.context()
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as plain:
        with ctx.wrap_socket(plain, server_hostname="127.0.0.1") as tls:
            tls.sendall(head + body)
            out = b""
            while b"\r\n\r\n" not in out or len(out.split(b"\r\n\r\n", 1)[1]) < _length(out):
                chunk = tls.recv(65536)
                if not chunk:
                    break
                out += chunk
            return out


def _length(raw: bytes) -> int:
    for line in raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 1 << 30


def test_a_declared_body_over_the_cap_gets_413_before_it_is_sent(server: Server) -> None:
    head = (
        b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {CAP + 1}\r\n\r\n".encode()
    )
    answer = _raw(server, head)  # not one byte of the body is sent: the answer cannot wait for it
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body["reason"] == "RequestEntityTooLarge" and str(CAP) in body["message"]


def test_a_chunked_body_over_the_cap_gets_413(server: Server) -> None:
    chunk = b"x" * (64 << 10)
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(CAP // len(chunk) + 1))
    head = b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer = _raw(server, head, chunks + b"0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_body_slower_than_the_deadline_gets_408(server: Server) -> None:
    head = (
        b"POST /validate?timeout=1s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n"
    )
    answer = _raw(server, head, b'{"apiVersion": ')  # the rest never comes
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"did not arrive before the deadline" in answer or b"timed out" in answer


def test_metrics_add_up_over_both_workers(server: Server) -> None:
    ar = example_review("claim-create.json")
    for _ in range(6):  # new connections: both workers answer some
        assert server.review(ar)[0] == 200
    assert server.request("POST", "/validate", b"nope")[0] == 400
    status, text = server.request("GET", "/metrics")
    assert status == 200
    m = metric_samples(text.decode())
    # each worker published its state at least once: only an aggregation over processes sees both
    assert m[("draguard_state_reloads_total", (("result", "ok"),))] >= 2
    allowed = (
        ("decision", "allowed"),
        ("endpoint", "validate"),
        ("kind", "ResourceClaim"),
        ("operation", "CREATE"),
    )
    assert m[("draguard_admission_requests_total", allowed)] >= 6
    assert m[("draguard_http_rejected_requests_total", (("code", "400"), ("endpoint", "validate")))] >= 1
    latency = (("endpoint", "validate"), ("kind", "ResourceClaim"))
    assert m[("draguard_admission_request_duration_seconds_count", latency)] >= 6
    from cryptography import x509

    cert = x509.load_pem_x509_certificate((server.certs / "tls.crt").read_bytes())  # type: ignore[operator]
    expiry = m[("draguard_tls_certificate_expiry_timestamp_seconds", ())]
    assert expiry == cert.not_valid_after_utc.timestamp()
    assert m[("draguard_state_objects", (("kind", "DeviceClass"),))] == _classes(server)
    assert m[("draguard_state_age_seconds", ())] >= 0


def _classes(server: Server) -> int:
    status, data = server.request("GET", "/readyz")
    assert status == 200
    return int(json.loads(data)["objects"].get("DeviceClass", 0))


def _all_workers_show(server: Server, count: int) -> bool:
    return all(_classes(server) == count for _ in range(10))  # ten fresh connections agree


def test_state_directory_changes_are_picked_up(server: StateServer) -> None:
    state = server.state
    before = _classes(server)
    new = state / "zz-new-class.yaml"
    new.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: brand-new}\nspec: {}\n"
    )
    wait_for("the new DeviceClass in every worker", lambda: _all_workers_show(server, before + 1))
    new.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: [broken\n")
    kept = "document left out of the state: input.parse: YAML syntax error: while parsing a flow sequence"
    wait_for("the broken file to be read", lambda: kept in server.log())
    assert f"{new}:4: {kept}" in server.log() and "its previous objects stay in the state" in server.log()
    assert _all_workers_show(server, before + 1)  # the last good objects of a broken file stay
    new.unlink()
    wait_for("the DeviceClass to go", lambda: _all_workers_show(server, before))
    invalid = state / "zz-invalid.yaml"
    invalid.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: Not_Valid}\nspec: {}\n"
    )
    wait_for(
        "the invalid class to be reported",
        lambda: "DeviceClass Not_Valid left out of the state" in server.log(),
    )
    assert _all_workers_show(server, before)
    invalid.unlink()


def test_the_worker_survives_everything_above(server: Server) -> None:
    status, answer = server.review(example_review("claim-create.json"))
    assert status == 200 and answer["response"]["allowed"] is True
    assert "Traceback" not in server.log()
