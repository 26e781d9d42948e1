"""Hostile inputs (tests/hostile/inputs_io.py) through the real CLI: `validate`, `simulate` and `strip` each
read the whole corpus in one run and give every file its finding: no traceback, no hang, no internal error.

The subprocess timeouts are hang guards (a FIFO opened for reading blocks forever), not speed checks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import forkrun
from tests.hostile.inputs_io import INPUTS, fifo, write_all

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 300


def draguard(
    *args: str, stdin: bytes | None = None, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not prefix:  # forked from a warm interpreter (tests/forkrun.py); output decoded as strictly
        p = forkrun.run(
            args,
            input=stdin.decode("latin-1") if stdin is not None else "",
            cwd=ROOT,
            env=env,
            timeout=HANG_GUARD,
        )
        assert "Traceback" not in p.stderr + p.stdout, p.stderr[-3000:]
        return p
    p = subprocess.run(
        [*prefix, sys.executable, "-m", "webhook.cli.main", *args],
        input=stdin.decode("latin-1") if stdin is not None else "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="strict",  # the output itself must be UTF-8
        cwd=ROOT,
        env=env,
        timeout=HANG_GUARD,
    )
    assert "Traceback" not in p.stderr + p.stdout, p.stderr[-3000:]
    return p


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    d = tmp_path_factory.mktemp("hostile")
    return d, write_all(d)


def _findings(objects: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for o in objects:
        out.setdefault(o["source"], []).extend(o["violations"])
    return out


def _check_corpus(findings: dict[str, list[dict]], paths: dict[str, Path], errors_only: bool = False) -> None:
    for name, path in paths.items():
        h = INPUTS[name]
        got = findings.get(str(path), [])
        assert not [v for v in got if v["rule"].startswith("internal.")], (name, got)
        if errors_only and h.expect != "input-error":
            continue
        if h.expect in ("input-error", "warning", "skipped"):
            want = "error" if h.expect == "input-error" else "warning"
            hits = [v for v in got if v["rule"] == h.rule and v["severity"] == want]
            assert hits, (name, got)
            assert any(h.message in v["field"] + v["message"] for v in hits), (name, hits)
        else:
            assert not [v for v in got if v["rule"].startswith("input.")], (name, got)


def test_validate_reads_every_hostile_file(corpus: tuple[Path, dict[str, Path]]) -> None:
    d, paths = corpus
    p = draguard("validate", "-o", "json", "-j", "2", "--max-input-bytes", "1Mi", str(d))
    assert p.returncode == 1, p.stderr
    _check_corpus(_findings(json.loads(p.stdout)["objects"]), paths)
    # both ends of the symlink loop are reported; the directory loop (`up` -> ..) was not followed
    sources = {o["source"] for o in json.loads(p.stdout)["objects"]}
    assert str(d / "loop-b.yaml") in sources
    assert not any("/up/" in s for s in sources)


def test_simulate_reads_every_hostile_file(corpus: tuple[Path, dict[str, Path]]) -> None:
    d, paths = corpus
    p = draguard("simulate", "-o", "json", "--max-input-bytes", "1Mi", str(d))
    assert p.returncode in (0, 1, 3), p.stderr
    _check_corpus(_findings(json.loads(p.stdout)["invalid"]), paths, errors_only=True)


def test_strip_reads_every_hostile_file(corpus: tuple[Path, dict[str, Path]]) -> None:
    d, paths = corpus
    p = draguard("strip", "--max-input-bytes", "1Mi", str(d))
    assert p.returncode == 1
    for name, path in paths.items():
        h = INPUTS[name]
        if h.expect in ("input-error", "skipped", "warning"):
            assert any(line.startswith(f"{path}:") and h.rule in line for line in p.stderr.splitlines()), name


@pytest.mark.parametrize("command", ["validate", "simulate", "strip"])
def test_named_special_files_are_usage_errors(command: str, tmp_path: Path) -> None:
    pipe = fifo(tmp_path)
    for target, what in ((str(pipe), "FIFO"), ("/dev/zero", "character device")):
        p = draguard(command, target)
        assert p.returncode == 2, (target, p.stdout, p.stderr)
        assert what in p.stderr and "- (stdin)" in p.stderr


def test_stdin_is_read_up_to_the_limit() -> None:
    big = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: " + b"y" * 3_000_000 + b"\n"
    p = draguard("validate", "--max-input-bytes", "2Mi", "-", stdin=big)
    assert p.returncode == 1 and "<stdin>:1: error input.too-large: larger than 2 MiB" in p.stdout
    p = draguard("validate", "--max-input-bytes", "4Mi", "-", stdin=big)
    assert p.returncode == 0, p.stdout + p.stderr
    p = draguard("validate", "--max-input-bytes", "0", "-", stdin=big)
    assert p.returncode == 2 and "is not a size" in p.stderr


def _unreadable_runner(tmp_path: Path) -> tuple[str, ...]:
    """How to run draguard so that a mode-000 directory cannot be listed: as root, without the
    capabilities that bypass permissions (setpriv); as anyone else, directly."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: root reads a mode-000 directory")
    return (setpriv, "--bounding-set=-dac_override,-dac_read_search", "--")


def test_unreadable_subdirectory_is_exit_2_not_zero_objects(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
    locked.chmod(0)
    try:
        prefix = _unreadable_runner(tmp_path)
        for command in ("validate", "simulate", "strip"):
            p = draguard(command, str(tmp_path), prefix=prefix)
            assert p.returncode == 2, (command, p.stdout, p.stderr)
            assert f"{locked}: cannot list this directory: Permission denied" in p.stderr
    finally:
        locked.chmod(0o755)


POLICIES = {
    "not-utf8": (b"rules:\n  meta.name: \xff\xfe off\n", "not UTF-8 text"),
    "not-yaml": (b"rules: [meta.name\n", "not valid YAML"),
    "laughs": (
        b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + b"".join(
            f"a{i}: &a{i} [{', '.join([f'*a{i - 1}' if i > 1 else '*a'] * 10)}]\n".encode()
            for i in range(1, 9)
        )
        + b"rules: {}\n",
        "excessive aliasing",
    ),
    "wrong-shape": (b"- meta.name\n", "expected a mapping `rules:"),
    "two-documents": (b"rules: {}\n---\nrules: {}\n", "one YAML document expected"),
    "unknown-rule": (b"rules:\n  no.such.rule: off\n", "unknown rule id"),
    "too-large": (b"rules: {}\n#" + b"x" * (1 << 20) + b"\n", "larger than 1 MiB"),
}


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_bad_policy_files_are_usage_errors(name: str, tmp_path: Path) -> None:
    content, message = POLICIES[name]
    policy = tmp_path / "policy.yaml"
    policy.write_bytes(content)
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    p = draguard("validate", "--policy", str(policy), str(tmp_path / "ok.yaml"))
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr and str(policy) in p.stderr


def test_policy_that_is_a_fifo_is_a_usage_error(tmp_path: Path) -> None:
    p = draguard("validate", "--policy", str(fifo(tmp_path)), "examples")
    assert p.returncode == 2 and "FIFO" in p.stderr


def _nest(top: str, levels: int) -> str:
    """`levels` directories `a` nested under `top`, made relative to an open directory (a path to the
    bottom may be longer than PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir("a", dir_fd=fd)
            nfd = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
    finally:
        os.close(fd)
    return os.path.join(top, *["a"] * levels)


def test_deep_directory_tree_is_walked_without_recursion(tmp_path: Path) -> None:
    """1,200 nested directories (Python 3.11's os.walk recursed: a RecursionError traceback): every
    command finds the manifest at the bottom; a tree too deep for a path is a clear exit 2."""
    root = tmp_path / "dir"
    root.mkdir()
    try:
        deep = _nest(str(root), 1200)
        bad = os.path.join(deep, "bad.yaml")
        Path(bad).write_text(
            "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: Bad_Name}\nspec: {}\n"
        )
        p = draguard("validate", str(root))
        assert p.returncode == 1 and f"{bad}:3: error meta.name:" in p.stdout, p.stdout + p.stderr
        p = draguard("strip", str(root))
        assert p.returncode == 0 and "name: Bad_Name" in p.stdout, p.stdout + p.stderr
        p = draguard("simulate", str(root))
        assert p.returncode == 1 and "meta.name" in p.stdout, p.stdout + p.stderr
        # 1,000 more levels: past PATH_MAX (4,096 bytes), the bottom cannot be listed by its path
        _nest(deep, 1000)
        p = draguard("validate", str(root))
        assert p.returncode == 2 and "cannot list this directory: File name too long" in p.stderr, p.stderr
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=True)  # shutil.rmtree recurses
