"""The ResourceClaimTemplate writer against the API-server stand-in (tests/standin, a real process over
HTTPS): server-side apply creates the template owned by the field manager, applying it again changes
nothing (same resourceVersion), the API server's failures become TemplateWriteError, and a translated
Pod CREATE through review() leaves the template in the API server."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from admission_fixtures import admission_review, pod, served, snapshot

from tests.standin import process
from webhook.admission import AdmissionConfig, review_with_info
from webhook.admission.extended import template_object
from webhook.admission.templates_writer import APPLY_PATCH, ApiTemplateWriter, TemplateWriteError
from webhook.config.profile import load_profile
from webhook.state.live.client import load_api_client

SA = "system:serviceaccount:draguard-system:draguard"
TEMPLATES = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaimtemplates"


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_server_side_apply_against_the_stand_in(tmp_path: Path) -> None:
    with process.StandIn.start(tmp_path, tls=True) as api:
        api.seed([_namespace("ml")])
        kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig", token=SA))
        writer = ApiTemplateWriter(lambda: load_api_client(kubeconfig), field_manager="draguard")
        template = template_object("ml", "gpu.example.com", 2)
        name = template["metadata"]["name"]

        writer.apply(template, timeout=10)
        status, stored, _ = api.request("GET", f"{TEMPLATES}/{name}")
        assert status == 200 and stored["spec"] == template["spec"]
        assert stored["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "draguard"}
        assert [(f["manager"], f["operation"]) for f in stored["metadata"]["managedFields"]] == [
            ("draguard", "Apply")
        ]

        writer.apply(template, timeout=10)  # idempotent: nothing changes
        status, again, _ = api.request("GET", f"{TEMPLATES}/{name}")
        assert again["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
        patches = [r for r in api.requests() if r["method"] == "PATCH"]
        assert [(r["path"], r["contentType"], r["user"], r["status"]) for r in patches] == [
            (f"{TEMPLATES}/{name}", APPLY_PATCH, SA, 201),
            (f"{TEMPLATES}/{name}", APPLY_PATCH, SA, 200),
        ]
        assert all(r["query"] == {"fieldManager": "draguard", "force": "true"} for r in patches)

        api.fail(1, 500, path="resourceclaimtemplates")
        with pytest.raises(TemplateWriteError) as e:
            writer.apply(template, timeout=10)
        assert e.value.status == 500
        with pytest.raises(TemplateWriteError) as e:  # the namespace does not exist
            writer.apply(template_object("nowhere", "gpu.example.com", 2), timeout=10)
        assert e.value.status == 404


def test_a_translated_pod_leaves_its_template_in_the_api_server(tmp_path: Path) -> None:
    with process.StandIn.start(tmp_path, tls=True) as api:
        api.seed([_namespace("ml")])
        kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig", token=SA))
        config = AdmissionConfig(
            endpoint="mutate",
            profile=load_profile("1.35"),
            extended_resources="translate",
            templates=ApiTemplateWriter(lambda: load_api_client(kubeconfig)),
        )
        p = pod("trainer")
        p["spec"]["containers"][0]["resources"] = {"limits": {"example.com/h100": "2"}}
        for dry_run in (True, False):
            out, info = review_with_info(admission_review(served(p), dry_run=dry_run), snapshot(), config)
            assert out["response"]["allowed"] is True
            ops = json.loads(base64.b64decode(out["response"]["patch"]))
            name = ops[-1]["value"][0]["resourceClaimTemplateName"]
            status, stored, _ = api.request("GET", f"{TEMPLATES}/{name}")
            assert (info.extended, status) == (("dryrun", 404) if dry_run else ("translated", 200))
        assert stored["spec"] == template_object("ml", "h100.example.com", 2)["spec"]
