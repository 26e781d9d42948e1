"""`validate --context DIR` (webhook.offline.repocontext) and the pre-commit hook's command, on real git
repositories: the changed files are the input, the repository's other manifests the context."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests import forkrun

ROOT = Path(__file__).resolve().parents[1]

COUNTERS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-counters}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu-0
    counters:
      memory: {value: 8Gi}
"""

DEVICES = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-devices}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 2}
  devices:
  - name: part-0
    consumesCounters:
    - counterSet: gpu-0
      counters:
        memory: {value: 4Gi}
"""

# Already broken, and in files no test changes: a slice the API server rejects, and a pool of one slice
# whose device names a counter set nobody publishes, and a Pod naming a template nobody defines.
UNRELATED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: bad}
spec:
  driver: gpu.example.com
  nodeName: n2
  allNodes: true
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n3}
spec:
  driver: gpu.example.com
  nodeName: n3
  pool: {name: n3, generation: 1, resourceSliceCount: 1}
  devices:
  - name: part-0
    consumesCounters:
    - counterSet: gpu-9
      counters:
        memory: {value: 4Gi}
---
apiVersion: v1
kind: Pod
metadata: {name: old-job, namespace: ml}
spec:
  containers: [{name: c, image: busybox}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: never-defined}]
"""

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  containers:
  - name: c
    image: busybox
    resources:
      claims: [{name: gpu}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
"""

# Files a repository holds besides manifests, and manifests draguard cannot read: none is a finding.
JUNK = {
    "chart/templates/slice.yaml": "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
    "metadata:\n  name: {{ .Release.Name }}\nspec:\n  driver: {{ .Values.driver }}\n",
    "broken.yaml": "apiVersion: resource.k8s.io/v1\nkind: [unclosed\n",
    "latin1.yaml": "# r\xe9sum\xe9 resource.k8s.io\n",
    "binary.json": "\x00\x01resource.k8s.io\x02",
    "ci.yaml": "on: [push]\njobs: {test: {runs-on: ubuntu-latest}}\n",
    "list.json": '[1, 2, "resource.k8s.io"]\n',
    "empty.yaml": "",
    "README.md": "resource.k8s.io docs\n",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("latin-1") if name == "latin1.yaml" else text.encode())


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A git repository holding `files`, committed."""
    root = tmp_path / "repo"
    root.mkdir()
    write(root, files)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def hook_command() -> list[str]:
    """The command pre-commit runs (before the file names), from this repository's .pre-commit-hooks.yaml,
    with `draguard` as this checkout's module."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    entry = hook["entry"].split()
    assert entry[0] == "draguard"
    return [sys.executable, "-m", "webhook.cli.main", *entry[1:], *hook.get("args", [])]


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real `draguard` process in `cwd` (pre-commit runs hooks in the repository's root)."""
    full_env = {k: v for k, v in os.environ.items() if k != "PRE_COMMIT_FROM_REF"}
    full_env |= {"PYTHONPATH": str(ROOT), **(env or {})}
    if list(args[:3]) == [sys.executable, "-m", forkrun.MODULE]:  # forked from a warm interpreter
        return forkrun.run(args[3:], cwd=cwd, env=full_env, timeout=120)
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=full_env, timeout=120)


def hook(cwd: Path, *files: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run(cwd, *hook_command(), *files, env=env)


def test_hook_sees_a_pool_split_over_two_files(tmp_path: Path) -> None:
    root = repo(tmp_path, {"counters.yaml": COUNTERS, "devices.yaml": DEVICES, "unrelated.yaml": UNRELATED})
    p = hook(root, "counters.yaml")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "pool.completeness" not in p.stdout  # devices.yaml is the pool's other slice
    assert "unrelated.yaml" not in p.stdout  # its errors are not this change's
    assert "context objects (--context: not shown)" in p.stdout

    (root / "counters.yaml").write_text(COUNTERS.replace("name: gpu-0", "name: gpu-zero"))
    git(root, "add", "counters.yaml")
    p = hook(root, "counters.yaml")
    assert p.returncode == 1, p.stdout + p.stderr
    errors = [line for line in p.stdout.splitlines() if ": error " in line]
    assert len(errors) == 1 and errors[0].startswith("devices.yaml:11: error pool.counter-set-ref: ")
    assert '"gpu-0"' in errors[0] and "the input's change causes this" in errors[0]
    assert "unrelated.yaml" not in p.stdout

    # the hook as it was (only the staged file) passes the broken pool: the reason for --context
    alone = run(root, sys.executable, "-m", "webhook.cli.main", "validate", "--summary", "counters.yaml")
    assert alone.returncode == 0 and "pool.completeness" in alone.stdout


def test_renamed_template_leaves_a_pod_of_another_file_dangling(tmp_path: Path) -> None:
    root = repo(tmp_path, {"template.yaml": TEMPLATE, "pod.yaml": POD, "unrelated.yaml": UNRELATED})
    (root / "template.yaml").write_text(TEMPLATE.replace("name: one-gpu", "name: one-gpus"))
    p = hook(root, "template.yaml")
    assert p.returncode == 0, p.stdout + p.stderr  # a warning: the hook passes, the output names it
    found = [line for line in p.stdout.splitlines() if "pod.unknown-claim" in line]
    assert len(found) == 1 and found[0].startswith("pod.yaml:10: warning pod.unknown-claim: "), p.stdout
    assert 'did you mean ResourceClaimTemplate "one-gpus"' in found[0]
    assert "old-job" not in p.stdout  # dangling before the change too

    out = json.loads(run(root, *hook_command(), "-o", "json", "template.yaml").stdout)
    assert out["summary"]["context"] == 3  # the slices and the Pod of unrelated.yaml
    assert [(o["source"], o["name"]) for o in out["objects"]] == [
        ("template.yaml", "one-gpus"),
        ("pod.yaml", "train"),
    ]


def test_earlier_version_of_a_range_is_pre_commit_from_ref(tmp_path: Path) -> None:
    """`pre-commit run --from-ref A --to-ref B` runs with B checked out: the change is B against A."""
    root = repo(tmp_path, {"counters.yaml": COUNTERS, "devices.yaml": DEVICES})
    start = git(root, "rev-parse", "HEAD").strip()
    (root / "counters.yaml").write_text(COUNTERS.replace("name: gpu-0", "name: gpu-zero"))
    git(root, "commit", "-qam", "rename")
    p = hook(root, "counters.yaml", env={"PRE_COMMIT_FROM_REF": start})
    assert p.returncode == 1 and "devices.yaml:11: error pool.counter-set-ref" in p.stdout, p.stdout
    p = hook(root, "counters.yaml")  # against HEAD, which has the rename already: nothing changes
    assert p.returncode == 0 and "devices.yaml" not in p.stdout, p.stdout


def test_context_reads_only_what_git_tracks_and_tolerates_anything(tmp_path: Path) -> None:
    root = repo(tmp_path, {"counters.yaml": COUNTERS, **JUNK})
    (root / "link.yaml").symlink_to("/dev/zero")  # tracked below: a symlink to a device is never read
    (root / ".gitignore").write_text("ignored.yaml\n")
    git(root, "add", "link.yaml", ".gitignore")
    git(root, "commit", "-qm", "more")
    write(root, {"devices.yaml": DEVICES, "ignored.yaml": DEVICES.replace("n1-devices", "n1-other")})
    p = hook(root, "counters.yaml")  # devices.yaml is untracked: not in the commit, not context
    assert p.returncode == 0, p.stdout + p.stderr
    assert "counters.yaml:7: warning pool.completeness" in p.stdout and "1 of 2 slices" in p.stdout
    assert p.stdout.count("\n") == 2 and p.stderr == "", p.stdout + p.stderr  # nothing of the junk

    git(root, "add", "devices.yaml")
    p = hook(root, "counters.yaml")
    assert p.returncode == 0 and "pool.completeness" not in p.stdout, p.stdout

    # outside git the directory is walked: every manifest file is context (FIFOs are never opened)
    plain = tmp_path / "plain"
    shutil.copytree(root, plain, symlinks=True, ignore=shutil.ignore_patterns(".git", "ignored.yaml"))
    os.mkfifo(plain / "fifo.yaml")
    p = hook(plain, "counters.yaml")
    assert p.returncode == 0 and "pool.completeness" not in p.stdout and p.stderr == "", p.stdout + p.stderr


def test_context_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(COUNTERS)
    base = [sys.executable, "-m", "webhook.cli.main", "validate"]
    p = run(tmp_path, *base, "--context", "a.yaml", "a.yaml")
    assert p.returncode == 2 and "--context takes directories" in p.stderr
    p = run(tmp_path, *base, "--context", ".", "--feasibility", "a.yaml")
    assert p.returncode == 2 and "--context is not used with --feasibility" in p.stderr


@pytest.mark.parametrize("inputs", [["counters.yaml", "devices.yaml"], ["."]])
def test_input_that_is_the_whole_context_is_plain_validate(tmp_path: Path, inputs: list[str]) -> None:
    """`pre-commit run --all-files`: every file is input, nothing is left as context."""
    root = repo(tmp_path, {"counters.yaml": COUNTERS.replace("gpu-0", "gpu-zero"), "devices.yaml": DEVICES})
    with_context = hook(root, *inputs)
    plain = run(root, sys.executable, "-m", "webhook.cli.main", "validate", "--summary", *inputs)
    assert with_context.returncode == plain.returncode == 1
    assert with_context.stdout == plain.stdout
    assert "devices.yaml:11: error pool.counter-set-ref" in plain.stdout
