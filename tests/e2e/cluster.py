"""The end-to-end cluster: the API-server stand-in process (list/watch + writes, its admission side playing the
rendered webhook configurations: tests/standin/admission.py) and a real `draguard serve --state cluster`
(gunicorn, one worker, TLS from `draguard certs`) it calls, as a Service `draguard.draguard-system.svc`.

    cluster = Cluster.start(tmp, policy={"feasibility": {"kinds": {"Pod": "enforce"}}})
    answer = cluster.create(pod("p", "one-gpu"), user="jane", dry_run=True)   # through admission
    answer.status, answer.body, answer.warnings
    cluster.restart_webhook(...), cluster.stop()

The webhook configurations are deploy/ rendered by `kubectl kustomize` (the self-managed-certs overlay, its
certificate from `draguard certs`; without kubectl the module is skipped, as tests/deploy is). The Service's address is what the admission side reads from its config file:
set when the webhook is ready (its readiness probe passes), removed when it stops (a Pod leaving the
Endpoints), as a cluster's Service routing does.
"""

from __future__ import annotations

import copy
import http.client
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import forkrun
from tests.deploy.deploy_render import KUBECTL, NO_KUBECTL, copy_deploy, kustomize
from tests.server.server_proc import Server, metric_samples
from tests.standin.process import StandIn, wait_for

ROOT = Path(__file__).resolve().parents[2]
DRA = "resource.k8s.io/v1"
SERVICE = ("draguard-system", "draguard")
DRAGUARD_USER = "system:serviceaccount:draguard-system:draguard"
PLURALS = {
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
    "Pod": "pods",
    "Namespace": "namespaces",
    "Node": "nodes",
}


# ---------------------------------------------------------------------------------------------------------
# objects


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }


def device_class(name: str) -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{name}"'}}]},
    }


def resource_slice(node_name: str, driver: str, devices: int, name: str | None = None) -> dict[str, Any]:
    prefix = driver.split(".")[0]
    return {
        "apiVersion": DRA,
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"{prefix}-{i}",
                    "attributes": {"model": {"string": "X100"}, "index": {"int": i}},
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def request_spec(cls: str, count: int) -> dict[str, Any]:
    return {
        "devices": {
            "requests": [
                {
                    "name": "dev",
                    "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count},
                }
            ]
        }
    }


def _meta(name: str, ns: str) -> dict[str, Any]:
    """A name ending in "-" is a generateName."""
    return {"generateName" if name.endswith("-") else "name": name, "namespace": ns}


def template(name: str, cls: str, count: int, ns: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceClaimTemplate",
        "metadata": _meta(name, ns),
        "spec": {"spec": request_spec(cls, count)},
    }


def claim(name: str, cls: str, count: int, ns: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceClaim",
        "metadata": _meta(name, ns),
        "spec": request_spec(cls, count),
    }


def allocated_claim(
    name: str, cls: str, node_name: str, devices: list[str], ns: str = "ml"
) -> dict[str, Any]:
    """A claim the scheduler has allocated (its status as kube-scheduler writes it)."""
    driver = cls
    return claim(name, cls, len(devices), ns) | {
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "dev", "driver": driver, "pool": node_name, "device": d} for d in devices
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                    ]
                },
            }
        },
    }


def pod(name: str, template_name: str | None = None, ns: str = "ml", **limits: str) -> dict[str, Any]:
    """A Pod with one container using a claim from `template_name` (and/or extended resources `limits`)."""
    container: dict[str, Any] = {"name": "main", "image": "registry.example.com/ml/trainer:1.0"}
    spec: dict[str, Any] = {"containers": [container]}
    if template_name:
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": template_name}]
        container["resources"] = {"claims": [{"name": "dev"}]}
    if limits:
        container.setdefault("resources", {})["limits"] = {k.replace("__", "/"): v for k, v in limits.items()}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(name, ns), "spec": spec}


# ---------------------------------------------------------------------------------------------------------
# webhook configurations


def _draguard(*args: str) -> str:
    p = forkrun.run(args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _certs(directory: Path) -> str:
    """`draguard certs` for the Service (and 127.0.0.1, which the tests' own /readyz probes use)."""
    return _draguard(
        "certs", "--dir", str(directory), "--service", SERVICE[1], "--namespace", SERVICE[0],
        "--dns", "localhost", "--ip", "127.0.0.1",
    ).strip()  # fmt: skip


def render_webhooks(tmp: Path) -> tuple[Path, Path, str]:
    """deploy/ rendered as a platform team installs it with self-managed certificates: a copy of deploy/,
    `draguard certs` into its certs/ directory, `kubectl kustomize overlays/self-managed-certs`. Returns
    (the rendered YAML, the certificate directory, what was rendered). Skips without kubectl."""
    if KUBECTL is None:
        pytest.skip(NO_KUBECTL)
    deploy = copy_deploy(tmp)
    certs = deploy / "components" / "self-managed-certs" / "certs"
    _certs(certs)
    objects = kustomize(deploy / "overlays" / "self-managed-certs")
    out = tmp / "rendered.yaml"
    out.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return out, certs, "deploy/overlays/self-managed-certs, rendered by kubectl kustomize"


# ---------------------------------------------------------------------------------------------------------
# the cluster


@dataclass
class Answer:
    status: int
    body: Any
    warnings: list[str]
    seconds: float

    @property
    def message(self) -> str:
        return str(self.body.get("message", "")) if isinstance(self.body, dict) else str(self.body)


def _warnings(headers: http.client.HTTPMessage) -> list[str]:
    out = []
    for h in headers.get_all("Warning") or []:
        text = h.split(" ", 2)[2] if h.startswith("299 ") else h
        out.append(text[1:-1] if text.startswith('"') and text.endswith('"') else text)
    return out


class Cluster:
    def __init__(self, tmp: Path, objects: list[dict[str, Any]], policy: dict[str, Any] | None) -> None:
        self.tmp = tmp
        self.rendered, self.certs, self.source = render_webhooks(tmp)
        self.admission_config = tmp / "admission.yaml"
        self._services: dict[str, str] = {}
        self._write_admission_config()
        self.api = StandIn.start(tmp, tls=True, admission_config=self.admission_config)
        self.api.seed(objects)
        self._write_admission_config()
        self.kubeconfig = self.api.kubeconfig(tmp / "kubeconfig", token=DRAGUARD_USER)
        self.policy: Path | None = None
        if policy is not None:
            self.policy = tmp / "policy.yaml"
            self.policy.write_text(yaml.safe_dump(policy))
        self.webhook: Server | None = None
        self.start_webhook()

    @classmethod
    def start(cls, tmp: Path, objects: list[dict[str, Any]], policy: dict[str, Any] | None = None) -> Cluster:
        return cls(tmp, objects, policy)

    # -- the Service's endpoints, as the admission side sees them --
    def _write_admission_config(self) -> None:
        data = {
            "configurations": [str(self.rendered)],
            "services": dict(self._services),
            "apiserver": self.api.url if hasattr(self, "api") else None,
            "apiserverCA": str(self.api.ca) if hasattr(self, "api") and self.api.ca else None,
            "served": ["v1"],
        }
        tmp = self.admission_config.with_name(self.admission_config.name + ".tmp")
        tmp.write_text(yaml.safe_dump(data))
        os.replace(tmp, self.admission_config)

    def route(self, port: int | None) -> None:
        """Point the Service at this port (None: no ready endpoint)."""
        self._services = {} if port is None else {f"{SERVICE[0]}/{SERVICE[1]}": f"127.0.0.1:{port}"}
        self._write_admission_config()

    # -- the webhook --
    def start_webhook(self, wait_ready: bool = True) -> Server:
        args = ["--kubeconfig", str(self.kubeconfig), "--certs", str(self.certs), "--workers", "1"]
        if self.policy is not None:
            args += ["--policy", str(self.policy)]
        self.webhook = Server(self.tmp, *args, certs=self.certs, wait_ready=wait_ready)
        if wait_ready:
            self.route(self.webhook.port)
        return self.webhook

    def stop_webhook(self) -> int:
        assert self.webhook is not None
        self.route(None)  # a terminating Pod leaves the Service's endpoints
        code = self.webhook.stop()
        return code

    def worker_pid(self) -> int:
        assert self.webhook is not None
        pid = self.webhook.proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        assert len(children) == 1, children
        return int(children[0])

    def pause_worker(self) -> int:
        """SIGSTOP the webhook's one worker: connections are accepted by the kernel, nothing answers."""
        pid = self.worker_pid()
        os.kill(pid, signal.SIGSTOP)
        return pid

    def resume_worker(self, pid: int) -> None:
        os.kill(pid, signal.SIGCONT)

    def readyz(self) -> dict[str, Any] | None:
        assert self.webhook is not None
        status, body = self.webhook.get("/readyz")
        return json.loads(body) if status == 200 else None

    def probe(self, timeout: float = 1.0) -> dict[str, Any] | None:
        """/readyz as a readiness probe with a timeout: None unless 200 in time (a worker that has not
        synced yet accepts no connection, so the probe times out)."""
        assert self.webhook is not None
        conn = http.client.HTTPSConnection(
            "127.0.0.1", self.webhook.port, context=self.webhook.context(), timeout=timeout
        )
        try:
            conn.request("GET", "/readyz")
            r = conn.getresponse()
            body = r.read()
            return json.loads(body) if r.status == 200 else None
        except (OSError, http.client.HTTPException):
            return None
        finally:
            conn.close()

    def metrics(self) -> dict[Any, float]:
        assert self.webhook is not None
        status, body = self.webhook.get("/metrics")
        assert status == 200
        return metric_samples(body.decode())

    def visible(self, kind: str, rv: int) -> bool:
        ready = self.readyz()
        return ready is not None and int(ready.get("resourceVersions", {}).get(kind, "0")) >= rv

    # -- API writes (through admission) --
    def create(self, obj: dict[str, Any], user: str = "jane", dry_run: bool = False) -> Answer:
        kind = obj["kind"]
        group_version = obj["apiVersion"]
        base = f"/apis/{group_version}" if "/" in group_version else f"/api/{group_version}"
        ns = obj["metadata"].get("namespace")
        path = f"{base}/namespaces/{ns}/{PLURALS[kind]}" if ns else f"{base}/{PLURALS[kind]}"
        if dry_run:
            path += "?dryRun=All"
        t0 = time.monotonic()
        status, body, headers = self.api.request("POST", path, copy.deepcopy(obj), token=user)
        return Answer(status, body, _warnings(headers), time.monotonic() - t0)

    def update(self, obj: dict[str, Any], user: str = "jane", subresource: str = "") -> Answer:
        """PUT `obj` (with its metadata.resourceVersion) to the object, or to its subresource."""
        meta = obj["metadata"]
        path = self._path(obj["kind"], meta["name"], meta.get("namespace")) + (
            f"/{subresource}" if subresource else ""
        )
        t0 = time.monotonic()
        status, body, headers = self.api.request("PUT", path, copy.deepcopy(obj), token=user)
        return Answer(status, body, _warnings(headers), time.monotonic() - t0)

    @staticmethod
    def _path(kind: str, name: str, ns: str | None) -> str:
        base = f"/apis/{DRA}" if kind not in ("Pod", "Namespace", "Node") else "/api/v1"
        return f"{base}/namespaces/{ns}/{PLURALS[kind]}/{name}" if ns else f"{base}/{PLURALS[kind]}/{name}"

    def get(self, kind: str, name: str, ns: str | None = None) -> tuple[int, Any]:
        status, body, _ = self.api.request("GET", self._path(kind, name, ns))
        return status, body

    def admission_log(self) -> list[str]:
        return [line for line in self.api.log().splitlines() if line.startswith("admission:")]

    def stop(self) -> None:
        try:
            if self.webhook is not None:
                self.webhook.stop()
        finally:
            self.api.stop()


__all__ = ["Answer", "Cluster", "wait_for"]
