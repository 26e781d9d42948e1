"""The pre-commit hook on a large repository: generates a git repository of 2,000 files (a realistic mix:
ResourceSlices of pools split over two files, DeviceClasses, claims, templates, Pods and Deployments that
use them, plenty of non-DRA manifests, Helm chart templates, CI configs, docs, JSON configs), changes one
file, and times the hook's command as a real process, cold (a new interpreter each run), every run printed.

    python bench/precommit_bench.py                  # 2,000 files, 5 runs of each command
    python bench/precommit_bench.py --files 4000 --runs 3 --full

Commands timed, run in the repository's root as pre-commit runs them (the first run of all also compiles
draguard's bytecode, as the first run after an install does):
  hook      draguard validate --summary --context . <changed file>   (the hook's entry)
  alone     draguard validate --summary <changed file>               (the changed file without context)
  --full    draguard validate --summary .                            (every file validated, for comparison)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = "gpu.example.com"
NIC = "nic.example.com"


def _gpu_counters(node: int) -> str:
    sets = "".join(
        f"  - name: gpu-{g}\n    counters:\n      memory: {{value: 80Gi}}\n      cores: {{value: '132'}}\n"
        for g in range(4)
    )
    return (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
        f"metadata:\n  name: node-{node:04d}-gpu-counters\n"
        f"spec:\n  driver: {DRIVER}\n  nodeName: node-{node:04d}\n"
        f"  pool: {{name: node-{node:04d}, generation: 1, resourceSliceCount: 2}}\n"
        f"  sharedCounters:\n{sets}"
    )


def _gpu_devices(node: int) -> str:
    devices = "".join(
        f"  - name: gpu-{g}-part-{p}\n"
        "    attributes:\n"
        "      model: {string: ExampleGPU-X100}\n"
        f"      index: {{int: {g}}}\n"
        "      driverVersion: {version: 1.2.3}\n"
        f"      resource.kubernetes.io/pcieRoot: {{string: pci0000:{g // 2:02d}}}\n"
        "    capacity:\n      memory: {value: 20Gi}\n      cores: {value: 33}\n"
        "    consumesCounters:\n"
        f"    - counterSet: gpu-{g}\n      counters:\n        memory: {{value: 20Gi}}\n        cores: {{value: '33'}}\n"
        for g in range(4)
        for p in range(4)
    )
    return (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
        f"metadata:\n  name: node-{node:04d}-gpu-devices\n"
        f"spec:\n  driver: {DRIVER}\n  nodeName: node-{node:04d}\n"
        f"  pool: {{name: node-{node:04d}, generation: 1, resourceSliceCount: 2}}\n"
        f"  devices:\n{devices}"
    )


def _nic_slice(node: int) -> str:
    devices = "".join(
        f"  - name: eth{i}\n    attributes:\n      rdma: {{bool: true}}\n      speed: {{string: 100G}}\n"
        for i in range(4)
    )
    return (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
        f"metadata:\n  name: node-{node:04d}-nics\n"
        f"spec:\n  driver: {NIC}\n  nodeName: node-{node:04d}\n"
        f"  pool: {{name: node-{node:04d}, generation: 1, resourceSliceCount: 1}}\n"
        f"  devices:\n{devices}"
    )


def _device_class(i: int) -> str:
    driver = DRIVER if i % 2 == 0 else NIC
    sel = f"device.driver == '{driver}'"
    if driver == DRIVER:
        sel += f" && device.attributes['{DRIVER}'].index == {i % 4}"
    return (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
        f"metadata:\n  name: class-{i:02d}\n"
        f'spec:\n  selectors:\n  - cel:\n      expression: "{sel}"\n'
    )


def _requests(cls: int, indent: str) -> str:
    return (
        f"{indent}devices:\n{indent}  requests:\n{indent}  - name: gpu\n{indent}    exactly:\n"
        f"{indent}      deviceClassName: class-{cls:02d}\n{indent}      count: 1\n"
    )


def _claim_template(team: int, app: int) -> str:
    return (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
        f"metadata:\n  name: app-{app:03d}-gpu\n  namespace: team-{team:02d}\n"
        f"spec:\n  spec:\n{_requests(app % 20, '    ')}"
    )


def _pod_spec(indent: str, claim_key: str, claim: str) -> str:
    return (
        f"{indent}containers:\n{indent}- name: main\n{indent}  image: registry.example.com/app:1.0\n"
        f"{indent}  resources:\n{indent}    claims:\n{indent}    - name: gpu\n"
        f"{indent}resourceClaims:\n{indent}- name: gpu\n{indent}  {claim_key}: {claim}\n"
    )


def _deployment(team: int, app: int, dra: bool) -> str:
    spec = (
        _pod_spec("      ", "resourceClaimTemplateName", f"app-{app:03d}-gpu")
        if dra
        else "      containers:\n      - name: main\n        image: registry.example.com/web:2.1\n"
        "        ports:\n        - containerPort: 8080\n"
    )
    return (
        "apiVersion: apps/v1\nkind: Deployment\n"
        f"metadata:\n  name: app-{app:03d}\n  namespace: team-{team:02d}\n"
        f"spec:\n  replicas: 2\n  selector:\n    matchLabels: {{app: app-{app:03d}}}\n"
        f"  template:\n    metadata:\n      labels: {{app: app-{app:03d}}}\n    spec:\n{spec}"
    )


def _claim(team: int, n: int) -> str:
    return (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
        f"metadata:\n  name: shared-{n:03d}\n  namespace: team-{team:02d}\n"
        f"spec:\n{_requests(n % 20, '  ')}"
    )


def _pod(team: int, n: int) -> str:
    return (
        "apiVersion: v1\nkind: Pod\n"
        f"metadata:\n  name: job-{n:03d}\n  namespace: team-{team:02d}\n"
        f"spec:\n{_pod_spec('  ', 'resourceClaimName', f'shared-{n:03d}')}"
    )


def _plain(kind: str, name: str, ns: str) -> str:
    """A non-DRA manifest of a common kind."""
    meta = f"metadata:\n  name: {name}\n  namespace: {ns}\n"
    body = {
        "Service": "apiVersion: v1\nkind: Service\n"
        + meta
        + f"spec:\n  selector: {{app: {name}}}\n  ports:\n  - port: 80\n    targetPort: 8080\n",
        "ConfigMap": "apiVersion: v1\nkind: ConfigMap\n"
        + meta
        + "data:\n  LOG_LEVEL: info\n  config.yaml: |\n    listen: :8080\n    workers: 4\n",
        "ServiceAccount": "apiVersion: v1\nkind: ServiceAccount\n" + meta,
        "Role": "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n"
        + meta
        + 'rules:\n- apiGroups: [""]\n  resources: [configmaps]\n  verbs: [get, list, watch]\n',
        "RoleBinding": "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
        + meta
        + f"roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {name}}}\n"
        f"subjects:\n- kind: ServiceAccount\n  name: {name}\n",
        "NetworkPolicy": "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
        + meta
        + f"spec:\n  podSelector: {{matchLabels: {{app: {name}}}}}\n  policyTypes: [Ingress]\n",
        "Ingress": "apiVersion: networking.k8s.io/v1\nkind: Ingress\n"
        + meta
        + f"spec:\n  rules:\n  - host: {name}.example.com\n    http:\n      paths:\n      - path: /\n"
        f"        pathType: Prefix\n        backend:\n          service: {{name: {name}, port: {{number: 80}}}}\n",
        "HorizontalPodAutoscaler": "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
        + meta
        + f"spec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}\n"
        "  minReplicas: 2\n  maxReplicas: 10\n",
    }
    return body[kind]


HELM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "chart.fullname" . }}
  labels:
    {{- include "chart.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicaCount }}
  template:
    spec:
      containers:
      - name: {{ .Chart.Name }}
        image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
"""

WORKFLOW = """\
name: ci
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
    - uses: actions/checkout@v4
    - run: make test
"""


def generate(root: Path, files: int) -> dict[str, int]:
    """Write the repository (about `files` files, scaled from the 2,000-file mix); return counts by group."""
    scale = files / 2000
    n = lambda k: max(1, round(k * scale))  # noqa: E731
    out: dict[str, str] = {}
    for node in range(n(100)):
        out[f"drivers/gpu/nodes/node-{node:04d}/counters.yaml"] = _gpu_counters(node)
        out[f"drivers/gpu/nodes/node-{node:04d}/devices.yaml"] = _gpu_devices(node)
    for node in range(n(100)):
        out[f"drivers/nic/nodes/node-{node:04d}.yaml"] = _nic_slice(node)
    for i in range(20):
        out[f"classes/class-{i:02d}.yaml"] = _device_class(i)
    for app in range(n(150)):
        team = app % 10
        d = f"teams/team-{team:02d}/app-{app:03d}"
        out[f"{d}/claim-template.yaml"] = _claim_template(team, app)
        out[f"{d}/deployment.yaml"] = _deployment(team, app, dra=True)
        out[f"{d}/service.yaml"] = _plain("Service", f"app-{app:03d}", f"team-{team:02d}")
        out[f"{d}/configmap.yaml"] = _plain("ConfigMap", f"app-{app:03d}", f"team-{team:02d}")
        out[f"{d}/hpa.yaml"] = _plain("HorizontalPodAutoscaler", f"app-{app:03d}", f"team-{team:02d}")
    for k in range(n(100)):
        team = k % 10
        out[f"teams/team-{team:02d}/claims/shared-{k:03d}.yaml"] = _claim(team, k)
        out[f"teams/team-{team:02d}/jobs/job-{k:03d}.yaml"] = _pod(team, k)
    plain = ("Service", "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "NetworkPolicy", "Ingress")
    for s in range(n(60)):
        d = f"platform/svc-{s:02d}"
        out[f"{d}/deployment.yaml"] = _deployment(s % 10, 500 + s, dra=False)
        for kind in plain:
            out[f"{d}/{kind.lower()}.yaml"] = _plain(kind, f"svc-{s:02d}", "platform")
    for t in range(30):
        out[f"namespaces/team-{t:02d}.yaml"] = (
            f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-{t:02d}\n"
        )
    for c in range(n(20)):
        d = f"charts/chart-{c:02d}"
        out[f"{d}/Chart.yaml"] = f"apiVersion: v2\nname: chart-{c:02d}\nversion: 0.1.{c}\n"
        out[f"{d}/values.yaml"] = (
            "replicaCount: 2\nimage:\n  repository: registry.example.com/x\n  tag: '1.0'\n"
        )
        out[f"{d}/templates/deployment.yaml"] = HELM
        out[f"{d}/templates/service.yaml"] = HELM.replace("Deployment", "Service")
        out[f"{d}/templates/_helpers.tpl"] = '{{- define "chart.fullname" -}}{{ .Release.Name }}{{- end }}\n'
    for w in range(10):
        out[f".github/workflows/ci-{w}.yaml"] = WORKFLOW
        out[f"teams/team-{w:02d}/kustomization.yaml"] = "resources:\n- claims\n- jobs\n"
    for k in range(n(50)):
        out[f"docs/page-{k:02d}.md"] = f"# Page {k}\n\nHow to request a GPU.\n"
    for k in range(n(30)):
        out[f"scripts/task-{k:02d}.sh"] = "#!/bin/sh\nkubectl apply -f .\n"
    for k in range(n(20)):
        out[f"config/settings-{k:02d}.json"] = '{"retries": 3, "endpoints": ["a", "b"]}\n'
    for k in range(files - len(out)):  # top up with Services to the exact count
        out[f"platform/extra/svc-{k:04d}.yaml"] = _plain("Service", f"extra-{k:04d}", "platform")
    for rel, text in out.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    groups: dict[str, int] = {}
    for rel in out:
        top = rel.split("/")[0]
        groups[top] = groups.get(top, 0) + 1
    return groups


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@e"}
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def run(cmd: list[str], cwd: Path, pycache: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """One cold run: a new interpreter. Bytecode is cached (outside the checkout) as an installed package
    has it; the first run of all compiles it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": str(pycache)}
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t0, p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000, help="files in the repository (default 2000)")
    ap.add_argument("--runs", type=int, default=5, help="runs of each command (default 5)")
    ap.add_argument("--full", action="store_true", help="also time validating every file of the repository")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="draguard-precommit-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        t0 = time.perf_counter()
        groups = generate(repo, args.files)
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "repository")
        changed = "drivers/gpu/nodes/node-0007/counters.yaml"  # a pool split over two files: rename a set
        path = repo / changed
        path.write_text(path.read_text().replace("name: gpu-3\n", "name: gpu-three\n"))
        git(repo, "add", changed)
        size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
        print(
            f"repository: {sum(groups.values())} files ({size / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s: "
            + ", ".join(f"{k} {v}" for k, v in sorted(groups.items()))
        )
        print(f"changed: {changed} (counter set gpu-3 renamed; its devices are in devices.yaml)")
        base = [sys.executable, "-m", "webhook.cli.main", "validate", "--summary", "--no-progress"]
        commands = {"hook": [*base, "--context", ".", changed], "alone": [*base, changed]}
        if args.full:
            commands["full"] = [*base, "."]
        for name, cmd in commands.items():
            times = []
            for _ in range(args.runs):
                seconds, p = run(cmd, repo, Path(tmp) / "pycache")
                times.append(seconds)
            summary = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
            shown = ", ".join(f"{t:.2f}" for t in times)
            print(
                f"{name:6s} exit {p.returncode}: {shown} s (median {statistics.median(times):.2f}); {summary}"
            )
            if p.returncode not in (0, 1):
                sys.stderr.write(p.stderr)
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
