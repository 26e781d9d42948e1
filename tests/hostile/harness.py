"""Run one `draguard` command as a real subprocess under guards and classify what happened.

Guards (set in the child before exec): an address-space limit (RLIMIT_AS, twice the memory bound so a
blow-up fails fast instead of taking the machine), no core files, a cap on output file size, a new
session so a timeout kills the worker processes too. Measured: wall time, peak RSS (`ru_maxrss` from
`os.wait4`: the largest of the process and its waited-for children, not their sum).

The wall-clock limit is a *hang detector*, not a performance assertion: it is the deadline the command
was given (`--deadline-seconds`: the whole run, reading and validation included) + 1 s (the issue's
"every run within its budget + 1 s"), or a per-class bound for commands without one (10 s, the default
admission timeout, for inputs within the API server's 3 MiB). The runner stretches it by
`runner.load_factor()` when other jobs load the machine (1 when it is ours). The bound is then spent in
CPU time, not only wall time (`_wait`): a run that the machine's other work kept from the CPU waits on,
up to STARVED_CAP times the bound, so that load is not read as a hang, while a run that spins is killed
when its CPU time reaches the bound and one that sleeps (a deadlock) at the cap. A timed-out run is
retried alone before it counts."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from tests import forkrun

ROOT = Path(__file__).resolve().parents[2]
MiB = 1 << 20
GiB = 1 << 30
OUTPUT_CAP = 256 * MiB  # RLIMIT_FSIZE: a run that prints more than this dies of SIGXFSZ (a finding)
READ_CAP = 32 * MiB  # how much of stdout/stderr the harness reads back

# result classes, worst first (the order the bench sorts by)
CRASH, TRACEBACK, TIMEOUT, MEMORY, WRONG, OK = "crash", "traceback", "timeout", "memory", "wrong", "ok"
RESULTS = (CRASH, TRACEBACK, TIMEOUT, MEMORY, WRONG, OK)

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def target_root() -> Path:
    """The checkout whose `webhook` package is run: this one, or `HOSTILE_TARGET` (another worktree)."""
    return Path(os.environ.get("HOSTILE_TARGET") or ROOT).resolve()


@dataclass
class Outcome:
    """What one subprocess did."""

    argv: list[str]
    exit: int | None  # None: killed by the harness (timeout)
    signal: int | None  # the signal that ended it (not the harness's own kill)
    wall: float
    rss: int  # peak resident set size, bytes
    stdout: str
    stderr: str
    timed_out: bool
    timeout: float
    mem_bound: int
    status: str = OK
    detail: str = ""
    problems: list[str] = field(default_factory=list)

    def excerpt(self, limit: int = 400) -> str:
        """The end of stderr (a traceback's last lines say most), else the start of stdout."""
        text = self.stderr.strip() or self.stdout.strip()
        if len(text) > limit:
            text = ("…" + text[-limit:]) if self.stderr.strip() else (text[:limit] + "…")
        return text


def _drop_dac_capabilities() -> None:
    """As root, drop the capabilities that bypass file permissions (so an unreadable directory is
    unreadable to the child, as it would be to a CI user). Best effort: without CAP_SETPCAP it fails."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)


def _rlimits(mem_bound: int) -> list[tuple[int, int]]:
    guard = max(2 * mem_bound, mem_bound + GiB)
    return [(resource.RLIMIT_AS, guard), (resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, OUTPUT_CAP)]


def _limits(mem_bound: int, drop_dac: bool) -> None:
    for res, lim in _rlimits(mem_bound):
        resource.setrlimit(res, (lim, lim))
    if drop_dac:
        _drop_dac_capabilities()


def can_drop_dac() -> bool:
    """Whether a child can be made to respect file permissions (non-root, or root able to drop caps)."""
    if os.geteuid() != 0:
        return True
    probe = tempfile.mkdtemp(prefix="hostile-dac-")
    try:
        os.chmod(probe, 0)
        r = subprocess.run(
            [sys.executable, "-c", f"import os; os.listdir({probe!r})"],
            preexec_fn=lambda: _limits(GiB, True),
            capture_output=True,
        )
        return r.returncode != 0
    finally:
        os.chmod(probe, 0o700)
        os.rmdir(probe)


def _read(path: str) -> str:
    with open(path, "rb") as f:
        data = f.read(READ_CAP)
    return data.decode("utf-8", errors="backslashreplace")


def run(
    args: list[str],
    *,
    timeout: float,
    mem_bound: int,
    cwd: str | Path | None = None,
    stdin: str | None = None,
    drop_dac: bool = False,
) -> Outcome:
    """`python3 -m webhook.cli.main ARGS` from the target checkout, guarded and measured. Not
    classified beyond crash/timeout/traceback/memory: expectations are checked by the caller."""
    return run_argv(
        [sys.executable, "-m", "webhook.cli.main", *args],
        args,
        timeout=timeout,
        mem_bound=mem_bound,
        cwd=cwd,
        stdin=stdin,
        drop_dac=drop_dac,
    )


def run_argv(
    argv: list[str],
    label: list[str],
    *,
    timeout: float,
    mem_bound: int,
    cwd: str | Path | None = None,
    stdin: str | None = None,
    drop_dac: bool = False,
) -> Outcome:
    """Any command under the same guards (`label` is what the outcome reports as its argv)."""
    root = target_root()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("HOSTILE_TARGET", None)
    env["COLUMNS"] = "120"
    with tempfile.TemporaryDirectory(prefix="hostile-out-") as tmp:
        out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            if argv[:3] == [sys.executable, "-m", forkrun.MODULE] and not drop_dac:
                forked = _forked(argv[3:], label, out, err, cwd or root, env, stdin, timeout, mem_bound)
                if forked is not None:
                    return forked
            stdin_f = open(stdin, "rb") if stdin else subprocess.DEVNULL  # noqa: SIM115
            try:
                start = time.monotonic()
                proc = subprocess.Popen(
                    argv,
                    cwd=str(cwd or root),
                    env=env,
                    stdin=stdin_f,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                    preexec_fn=lambda: _limits(mem_bound, drop_dac),
                )
            finally:
                if stdin:
                    stdin_f.close()  # type: ignore[union-attr]
            status: list[tuple[int, int, resource.struct_rusage]] = []
            waiter = threading.Thread(target=lambda: status.append(os.wait4(proc.pid, 0)), daemon=True)
            waiter.start()
            timed_out = not _wait(
                proc.pid, start, timeout, lambda t: (waiter.join(t), not waiter.is_alive())[1]
            )
            if timed_out:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                waiter.join()
            wall = time.monotonic() - start
            proc.returncode = 0  # reaped by wait4 above; keep Popen from waiting again
            _, wstatus, usage = status[0]
            # the process group may hold workers that outlived their parent: end them
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = _read(out_path), _read(err_path)
    return _outcome(label, wstatus, usage.ru_maxrss, timed_out, wall, stdout, stderr, timeout, mem_bound)


def _forked(
    args: list[str],
    label: list[str],
    out: BinaryIO,
    err: BinaryIO,
    cwd: str | Path,
    env: dict[str, str],
    stdin: str | None,
    timeout: float,
    mem_bound: int,
) -> Outcome | None:
    """The same run forked from a warm interpreter (tests/forkrun.py), None where only exec is faithful."""
    stdin_fd = os.open(stdin or os.devnull, os.O_RDONLY)
    try:
        start = time.monotonic()
        child = forkrun.start(
            args,
            stdin=stdin_fd,
            stdout=out.fileno(),
            stderr=err.fileno(),
            cwd=cwd,
            env=env,
            new_session=True,
            rlimits=_rlimits(mem_bound),
        )
    finally:
        os.close(stdin_fd)
    if child is None:
        return None
    done: list[forkrun.Ended] = []

    def wait(t: float) -> bool:
        e = child.wait(t)
        if e is not None:
            done.append(e)
        return e is not None

    timed_out = not _wait(child.pid, start, timeout, wait)
    ended = done[0] if done else None
    if ended is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        ended = child.wait()
        assert ended is not None
    wall = time.monotonic() - start
    with contextlib.suppress(ProcessLookupError, PermissionError):  # workers that outlived their parent
        os.killpg(child.pid, signal.SIGKILL)
    out.flush()
    err.flush()
    stdout, stderr = _read(out.name), _read(err.name)
    return _outcome(
        label, ended.wstatus, ended.maxrss_kib, timed_out, wall, stdout, stderr, timeout, mem_bound
    )


STARVED_CAP = 4.0  # a run kept from the CPU waits at most this many times its bound (wall)


def _session_cpu(sid: int) -> float:
    """CPU seconds of the processes of session `sid` (the command and its workers; the workers it waited
    for count in its own stat), 0.0 where /proc cannot tell."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if int(fields[3]) == sid:  # session id (field 6 of stat)
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return total / tick


def _wait(sid: int, start: float, bound: float, wait: Callable[[float], bool]) -> bool:
    """Wait (`wait(seconds)` → ended?) for the command leading session `sid` until it ends (True) or its
    hang bound is spent (False): `bound` seconds of wall time, stretched while the command got less
    CPU time than that because other work held the cores, up to STARVED_CAP × bound."""
    cap = start + STARVED_CAP * bound
    remaining = bound
    while True:
        if wait(remaining):
            return True
        now = time.monotonic()
        short = bound - _session_cpu(sid)  # CPU time it has not had yet
        if short < 0.25 or now >= cap:
            return False
        remaining = min(short, cap - now)


def _outcome(
    label: list[str],
    wstatus: int,
    maxrss_kib: int,
    timed_out: bool,
    wall: float,
    stdout: str,
    stderr: str,
    timeout: float,
    mem_bound: int,
) -> Outcome:
    sig = os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else None
    code = os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None
    outcome = Outcome(
        argv=label,
        exit=None if timed_out else code,
        signal=None if timed_out else sig,
        wall=wall,
        rss=maxrss_kib * 1024,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        timeout=timeout,
        mem_bound=mem_bound,
    )
    _classify_process(outcome)
    return outcome


_MEMORY_ERROR = re.compile(r"\bMemoryError\b|Cannot allocate memory|std::bad_alloc")


def _classify_process(o: Outcome) -> None:
    """The failures that do not depend on what was expected: crash, timeout, traceback, memory."""
    if o.timed_out:
        o.status, o.detail = TIMEOUT, f"killed after {o.timeout:.1f} s (hang detector)"
    elif o.signal is not None:
        name = signal.Signals(o.signal).name if o.signal in signal.Signals._value2member_map_ else o.signal
        o.status, o.detail = CRASH, f"killed by {name}"
    elif o.rss > o.mem_bound or _MEMORY_ERROR.search(o.stderr) or _MEMORY_ERROR.search(o.stdout[:1_000_000]):
        o.status, o.detail = MEMORY, f"peak RSS {o.rss / MiB:.0f} MiB (bound {o.mem_bound / MiB:.0f} MiB)"
    elif "Traceback (most recent call last)" in o.stderr:
        last = [ln for ln in o.stderr.strip().splitlines() if ln.strip()][-1:]
        o.status, o.detail = TRACEBACK, (last[0] if last else "traceback")
