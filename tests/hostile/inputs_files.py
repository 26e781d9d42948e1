"""Hostile files (issue §6): FIFOs, sockets and device files in a directory are reported and skipped,
never read; /dev/zero on stdin is capped; symlink loops, unreadable subdirectories and very deep trees
are input errors (exit 2), never a hang, a traceback or a silent "0 objects checked"; a policy file
that is not UTF-8 (or is a FIFO, a bomb, binary) is a usage error."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from tests.hostile.corpus import CLI, INPUT_IO, Run, case, feasibility, simulate, strip, validate
from tests.hostile.k8s import device_class, uid, write

ANY_ERROR = (1, 2)


def _valid(d: Path, name: str = "ok.yaml") -> str:
    return write(d, name, [device_class(f"{uid(d)}-g")])


def _bad(d: Path, name: str) -> str:
    return write(d, name, [device_class("Bad_Name")])


def _dir_cmds(name: str, exit: tuple[int, ...] = (0, 1, 2)) -> tuple[Run, ...]:
    """The three commands over the directory: no hang; validate and strip name the special file
    (simulate reports errors only: it must just not hang or read it)."""
    return (
        validate(exit=exit, contains=(name,)),
        simulate(exit=exit + ((3,) if 0 in exit else ())),
        strip(exit=exit, contains=(name,)),
    )


@case("files", *_dir_cmds("fifo.yaml"), area=INPUT_IO)
def fifo_in_directory(d: Path) -> list[str]:
    """a FIFO named like a manifest next to a valid one (`validate DIR` hangs forever today)"""
    root = d / "dir"
    _valid(root)
    os.mkfifo(root / "fifo.yaml")
    return [str(root)]


@case("files", validate(exit=ANY_ERROR), simulate(exit=ANY_ERROR), strip(exit=ANY_ERROR), area=INPUT_IO)
def fifo_as_path(d: Path) -> list[str]:
    """a FIFO given as the path"""
    os.mkfifo(d / "fifo.yaml")
    return [str(d / "fifo.yaml")]


@case("files", *_dir_cmds("sock.yaml"), area=INPUT_IO)
def socket_in_directory(d: Path) -> list[str]:
    """a Unix socket named like a manifest"""
    root = d / "dir"
    _valid(root)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        s = socket.socket(socket.AF_UNIX)
        s.bind("sock.yaml")
        s.close()
    finally:
        os.chdir(cwd)
    return [str(root)]


@case("files", *_dir_cmds("zero.yaml"), area=INPUT_IO)
def devzero_symlink_in_directory(d: Path) -> list[str]:
    """a symlink to /dev/zero named like a manifest"""
    root = d / "dir"
    _valid(root)
    os.symlink("/dev/zero", root / "zero.yaml")
    return [str(root)]


@case("files", *_dir_cmds("urandom.yaml"), area=INPUT_IO)
def urandom_symlink_in_directory(d: Path) -> list[str]:
    """a symlink to /dev/urandom named like a manifest"""
    root = d / "dir"
    _valid(root)
    os.symlink("/dev/urandom", root / "urandom.yaml")
    return [str(root)]


@case("files", validate(exit=ANY_ERROR), simulate(exit=ANY_ERROR), strip(exit=ANY_ERROR), area=INPUT_IO)
def devzero_as_path(d: Path) -> list[str]:
    """/dev/zero given as the path"""
    return ["/dev/zero"]


STDIN_ZERO = dict(stdin="/dev/zero", paths=("-",))


@case(
    "files",
    validate(exit=ANY_ERROR, **STDIN_ZERO),  # type: ignore[arg-type]
    simulate(exit=ANY_ERROR, **STDIN_ZERO),  # type: ignore[arg-type]
    strip(exit=ANY_ERROR, **STDIN_ZERO),  # type: ignore[arg-type]
    feasibility(exit=ANY_ERROR, **STDIN_ZERO),  # type: ignore[arg-type]
    area=INPUT_IO,
)
def devzero_on_stdin(d: Path) -> list[str]:
    """/dev/zero on stdin (a MemoryError today): the input size cap"""
    return []


@case("files", validate(exit=ANY_ERROR, stdin="/dev/urandom", paths=("-",)), area=INPUT_IO)
def urandom_on_stdin(d: Path) -> list[str]:
    """/dev/urandom on stdin"""
    return []


@case(
    "files",
    validate(exit=0, stdin="/dev/null", paths=("-",)),
    simulate(exit=0, stdin="/dev/null", paths=("-",)),
    area=INPUT_IO,
)
def empty_stdin(d: Path) -> list[str]:
    """control: nothing on stdin"""
    return []


@case("files", validate(exit=(0, 1, 2), stdin="in.yaml", paths=("-", "-")), area=INPUT_IO)
def stdin_twice(d: Path) -> list[str]:
    """`-` given twice"""
    _valid(d, "in.yaml")
    return []


@case("files", *_dir_cmds("a.yaml"), area=INPUT_IO)
def symlink_loop_file(d: Path) -> list[str]:
    """a.yaml → b.yaml → a.yaml in a directory: reported (skipped or an input error), never followed"""
    root = d / "dir"
    _valid(root)
    os.symlink("b.yaml", root / "a.yaml")
    os.symlink("a.yaml", root / "b.yaml")
    return [str(root)]


@case("files", validate(exit=1, rules=("meta.name",)), area=INPUT_IO)
def symlink_loop_directory(d: Path) -> list[str]:
    """a directory symlink pointing at its own parent (not followed, not looped)"""
    root = d / "dir"
    _bad(root / "sub", "bad.yaml")
    os.symlink("..", root / "sub" / "loop")
    os.symlink(".", root / "self")
    return [str(root)]


@case(
    "files",
    validate(exit=2, drop_dac=True),
    simulate(exit=2, drop_dac=True),
    strip(exit=2, drop_dac=True),
    area=INPUT_IO,
)
def unreadable_subdirectory(d: Path) -> list[str]:
    """a subdirectory without read permission: an input error, never "0 objects checked\""""
    root = d / "dir"
    _valid(root)
    _valid(root / "locked", "hidden.yaml")
    os.chmod(root / "locked", 0)
    return [str(root)]


@case("files", validate(exit=2, drop_dac=True), area=INPUT_IO)
def unreadable_subdirectory_only(d: Path) -> list[str]:
    """a directory whose only content is an unreadable subdirectory"""
    root = d / "dir"
    _valid(root / "locked", "hidden.yaml")
    os.chmod(root / "locked", 0)
    return [str(root)]


@case("files", validate(exit=2, drop_dac=True), area=INPUT_IO)
def unreadable_file(d: Path) -> list[str]:
    """a manifest without read permission next to a valid one"""
    root = d / "dir"
    _valid(root)
    p = _valid(root, "locked.yaml")
    os.chmod(p, 0)
    return [str(root)]


@case("files", validate(exit=1, rules=("meta.name",)), area=INPUT_IO)
def deep_directory_1200(d: Path) -> list[str]:
    """a manifest at the bottom of 1,200 nested directories"""
    root = d / "dir"
    deep = str(root)
    os.mkdir(deep)
    for _ in range(1200):
        deep = os.path.join(deep, "a")
        os.mkdir(deep)
    _bad(Path(deep), "bad.yaml")
    return [str(root)]


@case("files", validate(exit=0), area=INPUT_IO)
def many_files_3000(d: Path) -> list[str]:
    """3,000 small manifests in one directory"""
    root = d / "dir"
    u = uid(d)
    for i in range(3000):
        write(root, f"f{i:04d}.yaml", [device_class(f"{u}-{i}")], flow=True)
    return [str(root)]


@case("files", validate(exit=(0, 1)), area=INPUT_IO)
def many_paths_2000(d: Path) -> list[str]:
    """2,000 file paths on the command line, each given twice"""
    u = uid(d)
    paths = [write(d, f"f{i:04d}.yaml", [device_class(f"{u}-{i}")], flow=True) for i in range(2000)]
    return paths + paths


@case("files", validate(exit=1), area=INPUT_IO)
def non_utf8_in_directory(d: Path) -> list[str]:
    """a Latin-1 file among valid ones: an error on that file, the others still checked"""
    root = d / "dir"
    _valid(root)
    write(root, "latin1.yaml", b"apiVersion: v1\nkind: Pod\nmetadata: {name: caf\xe9}\n")
    return [str(root)]


# ---- policy files ---------------------------------------------------------------------------------


def _policy_run(policy: str) -> Run:
    return validate("--policy", policy, exit=2)


@case("files", _policy_run("policy.yaml"), area=CLI)
def policy_not_utf8(d: Path) -> list[str]:
    """a policy file in Latin-1"""
    write(d, "policy.yaml", b"rules:\n  meta.name: off # caf\xe9\n")
    return [_valid(d)]


@case("files", _policy_run("policy.yaml"), area=CLI)
def policy_fifo(d: Path) -> list[str]:
    """a FIFO as the policy file"""
    os.mkfifo(d / "policy.yaml")
    return [_valid(d)]


@case("files", _policy_run("/dev/zero"), area=CLI)
def policy_devzero(d: Path) -> list[str]:
    """/dev/zero as the policy file"""
    return [_valid(d)]


@case("files", _policy_run("policy.yaml"), area=CLI)
def policy_billion_laughs(d: Path) -> list[str]:
    """an alias bomb as the policy file"""
    lines = ['a0: &a0 "lol"'] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)
    ]
    write(d, "policy.yaml", "\n".join(lines) + "\nrules: *a9\n")
    return [_valid(d)]


@case("files", _policy_run("policy.yaml"), area=CLI)
def policy_list_key(d: Path) -> list[str]:
    """a policy whose rule id is a list (unhashable)"""
    write(d, "policy.yaml", "rules:\n  ? [a, b]\n  : off\n")
    return [_valid(d)]


@case("files", _policy_run("policy.yaml"), area=CLI)
def policy_deep(d: Path) -> list[str]:
    """a policy nested 100,000 levels deep"""
    write(d, "policy.yaml", "rules: " + "[" * 100_000 + "]" * 100_000 + "\n")
    return [_valid(d)]


@case("files", _policy_run("policy.yaml"), area=CLI)
def policy_binary(d: Path) -> list[str]:
    """random bytes as the policy file"""
    write(d, "policy.yaml", bytes(range(256)) * 64)
    return [_valid(d)]


@case("files", _policy_run("dir"), area=CLI)
def policy_directory(d: Path) -> list[str]:
    """a directory as the policy file"""
    (d / "dir").mkdir()
    return [_valid(d)]
