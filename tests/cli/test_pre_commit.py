"""The `draguard-validate` pre-commit hook, run by real pre-commit on a temporary git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BAD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  allNodes: true
  pool: {name: p, generation: 1, resourceSliceCount: 1}
"""


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A snapshot of this working tree as a git repo (pre-commit installs hooks from a git revision)."""
    repo = tmp_path_factory.mktemp("draguard-hook")
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    for name in files:
        src = ROOT / name
        if src.is_file():
            dst = repo / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "snapshot")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def test_hook_rejects_bad_manifest_and_accepts_good(tmp_path: Path, hook_repo: tuple[Path, str]) -> None:
    repo, rev = hook_repo
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    (work / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n  - id: draguard-validate\n"
    )
    (work / "slice.yaml").write_text(BAD)
    (work / "README.md").write_text("not checked\n")
    git(work, "add", "-A")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path.parent / "pre-commit-home"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # the hook's environment still gets draguard installed from the repository's revision, as a
        # user's does; its dependencies come from this interpreter instead of a download (60 s → 15 s)
        "VIRTUALENV_SYSTEM_SITE_PACKAGES": "1",
    }
    p = subprocess.run(
        ["pre-commit", "run", "--all-files"], cwd=work, capture_output=True, text=True, env=env
    )
    assert p.returncode == 1, p.stdout + p.stderr
    assert "slice.yaml:4: error" in p.stdout and "spec:" in p.stdout  # the line of `spec`
    (work / "slice.yaml").write_text(BAD.replace("  allNodes: true\n", ""))
    git(work, "add", "-A")
    p = subprocess.run(
        ["pre-commit", "run", "--all-files"], cwd=work, capture_output=True, text=True, env=env
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Passed" in p.stdout
