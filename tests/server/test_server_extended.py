"""`draguard serve --extended-resources` / `--field-manager`: usage errors before anything starts, the
admission configs the server builds from them (the mutating one with the real template writer), the
translation counter on /metrics, and a real `draguard serve --state cluster --extended-resources
translate` fed by the API-server stand-in: the Pod CREATE is rewritten, its template applied to the
stand-in by server-side apply (not for dryRun, not again once the watch has brought it into the state)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from prometheus_client import REGISTRY

from tests.cliproc import draguard
from tests.server.server_proc import Server, make_certs, metric_samples, review_of, wait_for
from tests.standin.process import StandIn
from webhook.admission import ReviewInfo
from webhook.admission.templates_writer import ApiTemplateWriter
from webhook.server import app
from webhook.server.options import ServeOptions
from webhook.server.wiring import make_config, serve_profile

ROOT = Path(__file__).resolve().parents[2]


def test_usage_errors_name_the_fix(tmp_path: Path) -> None:
    base = ("serve", "--state", str(ROOT / "examples"), "--certs", str(tmp_path / "none"), "--port", "0")
    for args, message in [
        (
            ("--k8s-version", "1.35", "--extended-resources", "native"),
            "--extended-resources native: the DRAExtendedResource feature gate is off in Kubernetes 1.35",
        ),
        (("--extended-resources", "translate"), "add --state cluster"),
        (("--field-manager", "x" * 129), "--field-manager: 1 to 128 printable characters"),
        (("--extended-resources", "always"), "invalid choice: 'always'"),
    ]:
        p = draguard(*base, *args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert message in p.stderr, (args, p.stderr)


def _options(**kw: object) -> ServeOptions:
    return ServeOptions(state="cluster", certs="certs", **kw)  # type: ignore[arg-type]


def test_the_configs_follow_the_flags() -> None:
    options = _options()
    assert make_config(options, "validate", serve_profile(options), None).extended_resources == "native"
    options = _options(k8s_version="1.35")
    assert make_config(options, "mutate", serve_profile(options), None).extended_resources == "off"
    options = _options(k8s_version="1.35", extended_resources="translate", field_manager="platform-draguard")
    mutate = make_config(options, "mutate", serve_profile(options), None)
    validate = make_config(options, "validate", serve_profile(options), None)
    assert mutate.extended_resources == validate.extended_resources == "translate"
    assert (
        isinstance(mutate.templates, ApiTemplateWriter)
        and mutate.templates.field_manager == "platform-draguard"
    )
    assert validate.templates is None  # the validating endpoint never writes


def test_translations_are_counted_by_result() -> None:
    name = "draguard_extended_resource_translations_total"

    def count(result: str) -> float:
        return REGISTRY.get_sample_value(name, {"result": result}) or 0.0

    before = {r: count(r) for r in ("translated", "unmapped", "dryrun", "error")}
    for result in ("translated", "translated", "dryrun", "error", None):
        app._observe("mutate", ReviewInfo("Pod", "CREATE", "allowed", extended=result), 0.001)
    assert {r: count(r) - before[r] for r in before} == {
        "translated": 2,
        "unmapped": 0,
        "dryrun": 1,
        "error": 1,
    }


SA = "system:serviceaccount:draguard-system:draguard"
TEMPLATES = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaimtemplates"


def _trainer(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example.com/trainer:1",
                    "resources": {"limits": {"example.com/gpu": "2"}, "requests": {"example.com/gpu": "2"}},
                }
            ]
        },
    }


def test_translate_end_to_end_with_the_stand_in(tmp_path: Path) -> None:
    gpu_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {
            "extendedResourceName": "example.com/gpu",
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
        },
    }
    with StandIn.start(tmp_path, tls=True) as api:
        api.seed([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}, gpu_class])
        make_certs(tmp_path / "certs")
        server = Server(
            tmp_path,
            *("--state", "cluster", "--kubeconfig", str(api.kubeconfig(tmp_path / "kubeconfig", token=SA))),
            *(
                "--k8s-version",
                "1.35",
                "--extended-resources",
                "translate",
                "--field-manager",
                "draguard-e2e",
            ),
            *("--certs", str(tmp_path / "certs"), "--workers", "1"),
            certs=tmp_path / "certs",
        )
        try:
            status, dry = server.review(review_of(_trainer("t0"), dry_run=True), path="/mutate")
            assert status == 200 and dry["response"]["allowed"] is True
            assert api.request("GET", f"{TEMPLATES}/draguard-gpu.example.com-2")[0] == 404

            status, answer = server.review(review_of(_trainer("t1")), path="/mutate")
            ops = json.loads(base64.b64decode(answer["response"]["patch"]))
            assert ops[-1] == {
                "op": "add",
                "path": "/spec/resourceClaims",
                "value": [
                    {
                        "name": "container-0-request-0",
                        "resourceClaimTemplateName": "draguard-gpu.example.com-2",
                    }
                ],
            }
            assert ops == json.loads(base64.b64decode(dry["response"]["patch"]))
            code, stored, _ = api.request("GET", f"{TEMPLATES}/draguard-gpu.example.com-2")
            assert code == 200 and stored["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2
            assert [f["manager"] for f in stored["metadata"]["managedFields"]] == ["draguard-e2e"]

            def held() -> bool:
                return json.loads(server.get("/readyz")[1])["objects"]["ResourceClaimTemplate"] == 1

            wait_for("the watch to bring the template into the state", held)
            api.requests(clear=True)
            status, again = server.review(review_of(_trainer("t2")), path="/mutate")
            assert again["response"]["patch"] == answer["response"]["patch"]
            assert [r for r in api.requests() if r["method"] == "PATCH"] == []

            samples = metric_samples(server.get("/metrics")[1].decode())
            counted = {
                dict(labels)["result"]: v
                for (name, labels), v in samples.items()
                if name == "draguard_extended_resource_translations_total"
            }
            assert counted == {"translated": 2.0, "dryrun": 1.0}
        finally:
            assert server.stop() == 0, server.log()
