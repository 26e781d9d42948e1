"""The suite's fork server (tests/forkrun.py) gives the same result as starting `python -m` afresh: same exit
code, same bytes on stdout and stderr, for commands across the CLI's paths (findings, usage errors, stdin,
worker processes, help text that depends on the environment, arguments that are not UTF-8)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests import forkrun

ROOT = Path(__file__).resolve().parents[1]
BAD_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: node-1
  allNodes: true
  pool: {name: p, generation: 1, resourceSliceCount: 1}
"""


def _exec(
    args: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", forkrun.MODULE, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("forkrun")
    (d / "bad.yaml").write_text(BAD_SLICE)
    (d / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    many = d / "many"
    many.mkdir()
    for i in range(40):
        (many / f"s{i}.yaml").write_text(BAD_SLICE.replace("name: s", f"name: s{i}"))
    return d


needs_server = pytest.mark.skipif(
    forkrun._exec_only(), reason="DRAGUARD_TEST_EXEC=1: every command is an exec"
)

CASES = [
    (["validate", "bad.yaml"], None),
    (["validate", "ok.yaml", "-o", "json"], None),
    (["validate", "-"], BAD_SLICE.encode()),
    (["validate", "--no-such-flag"], None),
    (["validate", "missing.yaml"], None),
    (["validate", "-j", "2", "--no-progress", "many"], None),
    (["simulate", "bad.yaml", "-o", "json"], None),
    (["--help"], None),
    (["rules"], None),
    (["validate", "caf\udce9.yaml"], None),  # a file name that is not UTF-8
    (
        ["convert", "--to", "v1", "-"],
        b"apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata: {name: c}\n",
    ),
]


@pytest.mark.parametrize(("args", "stdin"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_a_forked_command_is_the_command(inputs: Path, args: list[str], stdin: bytes | None) -> None:
    env = {**os.environ, "COLUMNS": "67"}
    forked = forkrun.run(args, cwd=inputs, env=env, input=stdin, text=False)
    plain = _exec(args, inputs, env, stdin)
    assert (forked.returncode, forked.stdout, forked.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def _open_files(pid: int) -> dict[int, str]:
    """The descriptors a running process holds and what they point to; one it closes between the listing
    and the read (a file the command opens while it starts) is not among them."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
    return out


@needs_server
def test_the_child_has_its_own_session_limits_and_descriptors(tmp_path: Path) -> None:
    limit = 3 << 30
    stdin_r, stdin_w = os.pipe()  # the command reads `-` until the test closes it
    with (tmp_path / "out").open("wb") as out, (tmp_path / "err").open("wb") as err:
        child = forkrun.start(
            ["validate", "-"],
            stdin=stdin_r,
            stdout=out.fileno(),
            stderr=err.fileno(),
            cwd=tmp_path,
            new_session=True,
            rlimits=[(resource.RLIMIT_AS, limit)],
        )
        os.close(stdin_r)
        assert child is not None
        assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
        limits = Path(f"/proc/{child.pid}/limits").read_text().splitlines()
        assert [ln.split()[3:5] for ln in limits if ln.startswith("Max address space")] == [[str(limit)] * 2]
        fds = _open_files(child.pid)
        assert {0, 1, 2} <= set(fds) and not [
            t for t in fds.values() if t.startswith("socket:")
        ]  # not the server's
        assert os.readlink(f"/proc/{child.pid}/cwd") == str(tmp_path)
        os.write(stdin_w, BAD_SLICE.encode())
        os.close(stdin_w)
        ended = child.wait(300)
    assert ended is not None and ended.returncode == 1
    assert "<stdin>:4: error slice.node-selection" in (tmp_path / "out").read_text()
    assert ended.maxrss_kib > 0


@needs_server
def test_a_hung_child_is_killed_and_the_server_serves_on(tmp_path: Path) -> None:
    stdin_r, stdin_w = os.pipe()  # never closed while the command waits: it hangs
    child = forkrun.start(
        ["validate", "-"], stdin=stdin_r, stdout=1, stderr=2, cwd=tmp_path, new_session=True
    )
    os.close(stdin_r)
    assert child is not None
    assert child.wait(0.5) is None
    os.killpg(child.pid, 9)
    ended = child.wait(60)
    os.close(stdin_w)
    assert ended is not None and ended.returncode == -9
    assert forkrun.run(["--version"], cwd=tmp_path).returncode == 0


@needs_server
def test_a_working_directory_that_does_not_exist_fails_to_start(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="FileNotFoundError"):
        forkrun.start(["rules"], stdin=0, stdout=1, stderr=2, cwd=tmp_path / "gone")
    assert forkrun.run(["--version"], cwd=tmp_path).returncode == 0


def test_what_a_fork_cannot_reproduce_runs_as_exec(tmp_path: Path) -> None:
    assert (
        forkrun.start(["rules"], stdin=0, stdout=1, stderr=2, cwd=tmp_path, executable="/bin/false") is None
    )
    assert forkrun.start(["x" * (forkrun.ARG_LIMIT + 1)], stdin=0, stdout=1, stderr=2, cwd=tmp_path) is None
    seeded = forkrun.run(["rules"], cwd=tmp_path, env={**os.environ, "PYTHONHASHSEED": "7"})
    assert seeded.returncode == 0 and "claim." in seeded.stdout
