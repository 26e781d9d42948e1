"""webhook.io.gitfiles on real git repositories: tracked files, content at a revision, and no answer
(never an exception) where git has none."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from webhook.io import gitfiles


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def test_tracked_files_and_content_at_a_revision(tmp_path: Path) -> None:
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "sub dir" / "a b.yaml").write_text("first\n")
    (tmp_path / "big.yaml").write_text("x" * 100)
    (tmp_path / "notes.txt").write_text("not a manifest\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    (tmp_path / "sub dir" / "a b.yaml").write_text("second\n")
    (tmp_path / "new.yaml").write_text("untracked\n")

    assert gitfiles.tracked_files(str(tmp_path), (".yaml",)) == [
        str(tmp_path / "big.yaml"),
        str(tmp_path / "sub dir" / "a b.yaml"),
    ]
    assert gitfiles.tracked_files(str(tmp_path / "sub dir"), (".yaml",)) == [
        str(tmp_path / "sub dir" / "a b.yaml")
    ]
    assert gitfiles.toplevel(str(tmp_path / "sub dir")) == str(tmp_path.resolve())

    wanted = ["sub dir", "new.yaml", "big.yaml", "line\nbreak.yaml", "sub dir/a b.yaml"]
    assert gitfiles.at_revision(str(tmp_path), "HEAD", wanted, max_bytes=50) == {
        "sub dir/a b.yaml": b"first\n"
    }
    assert gitfiles.at_revision(str(tmp_path), "HEAD", ["big.yaml"], max_bytes=100) == {
        "big.yaml": b"x" * 100
    }
    assert gitfiles.at_revision(str(tmp_path), "no-such-rev", ["big.yaml"], max_bytes=100) == {}


def test_no_answer_outside_a_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text("a\n")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # tmp_path may be inside a repository
    assert gitfiles.tracked_files(str(tmp_path), (".yaml",)) is None
    assert gitfiles.toplevel(str(tmp_path)) is None
    assert gitfiles.at_revision(str(tmp_path), "HEAD", ["a.yaml"], 100) == {}
