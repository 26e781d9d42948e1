"""Run `python -m webhook.cli.main ARGS` as a real process without paying for a new interpreter each time.

The suite starts well over a thousand `draguard` processes; on a slow 2-core machine each spends about
0.5 s starting Python and importing the package before it reads its first byte, most of the suite's
time. A *fork server* (this file run as a script) starts once per key (interpreter and `PYTHON*`
environment), imports the package, and forks one child per command. The child is an ordinary process
of its own: it gets the caller's own file descriptors as its standard input, output and error (passed
over a Unix socket, so a pipe stays a pipe and a file a file), its own working directory, environment,
argument vector, session and resource limits, runs the module as `python -m` does (`runpy`), and ends the
way the interpreter ends (non-daemon threads joined, `atexit` handlers, streams flushed, the exit code
of `SystemExit`, a traceback and 1 for an uncaught exception, 120 when flushing stdout fails). Its
parent reports its pid at once and its wait status and peak RSS (`wait4`) when it ends.

What a fork cannot reproduce runs as a plain `exec` instead (`start()` returns None): a different
interpreter or `PYTHON*` variable the server was not started with (hash seed, encodings), a command line
too long for `exec` (the kernel would refuse it), and dropping capabilities (only an `exec` applies a
reduced bounding set). `DRAGUARD_TEST_EXEC=1` makes every run an `exec`, for a full-fidelity pass.

The server preloads the modules the commands import; none starts a thread (the server checks: a fork
would copy a held lock)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, overload

ROOT = Path(__file__).resolve().parents[1]
MODULE = "webhook.cli.main"
ARG_LIMIT = 100_000  # bytes of argv + env; above it a plain exec (with its own limits) runs the command
MAX_SERVERS = 4  # per test process; beyond it (or for one-off keys) commands run as a plain exec
PRELOAD = (  # what the commands import (imports have no effect a command could see: rule ids and rule
    # functions are loaded by their registries whoever asks first)
    "webhook.cli.main",
    "webhook.offline.run",
    "webhook.simulate",
    "webhook.rules.catalog",
    "webhook.validate.versioned",
    "webhook.config.policyfile",
)
_HEADER = struct.Struct("!I")


def _exec_only() -> bool:
    return os.environ.get("DRAGUARD_TEST_EXEC") == "1"


def _key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """What an interpreter fixes when it starts: only children with the same can share a server."""
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith("PYTHON")))


# ---- the caller's side ---------------------------------------------------------------------------


@dataclass
class Ended:
    wstatus: int
    maxrss_kib: int

    @property
    def returncode(self) -> int:
        """As subprocess reports it: the exit code, or minus the signal that ended the process."""
        if os.WIFSIGNALED(self.wstatus):
            return -os.WTERMSIG(self.wstatus)
        return os.WEXITSTATUS(self.wstatus)


class _Server:
    def __init__(self, env: Mapping[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), str(theirs.fileno())],
            env=dict(env),
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
        )
        theirs.close()
        self.buf = b""
        ready = self._line(120.0)
        if ready.get("ready") is not True:
            raise RuntimeError(f"fork server did not start: {ready}")

    def _line(self, timeout: float | None) -> dict[str, object]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except (TimeoutError, BlockingIOError):
                return {}
            if not chunk:
                raise RuntimeError("fork server ended")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        out: dict[str, object] = json.loads(line)
        return out

    def close(self) -> None:
        self.sock.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_lock = threading.Lock()
_idle: dict[tuple[tuple[str, str], ...], list[_Server]] = {}
_count = 0


def server_pids() -> set[int]:
    """The fork servers of this process (they live for the session; the leak check leaves them be)."""
    with _lock:
        return {s.proc.pid for servers in _idle.values() for s in servers} | set(_busy)


_busy: set[int] = set()


def _acquire(env: Mapping[str, str]) -> _Server | None:
    global _count
    key = _key(env)
    with _lock:
        if _idle.get(key):
            s = _idle[key].pop()
            _busy.add(s.proc.pid)
            return s
        if _count >= MAX_SERVERS:
            return None
        _count += 1
    try:
        s = _Server(env)
    except Exception:
        with _lock:
            _count -= 1
        raise
    with _lock:
        _busy.add(s.proc.pid)
    return s


def _release(s: _Server, env: Mapping[str, str], ok: bool) -> None:
    global _count
    with _lock:
        _busy.discard(s.proc.pid)
        if ok:
            _idle.setdefault(_key(env), []).append(s)
            return
        _count -= 1
    s.close()


def close_all() -> None:
    global _count
    with _lock:
        servers = [s for group in _idle.values() for s in group]
        _idle.clear()
        _count -= len(servers)
    for s in servers:
        s.close()


class Child:
    """A command forked by a server: its pid now, its end by `wait()`."""

    def __init__(self, server: _Server, env: Mapping[str, str], pid: int) -> None:
        self.server, self.env, self.pid = server, env, pid
        self.ended: Ended | None = None

    def wait(self, timeout: float | None = None) -> Ended | None:
        """The child's end, or None when `timeout` passes first (it keeps running)."""
        if self.ended is None:
            msg = self.server._line(timeout)
            if not msg:
                return None
            self.ended = Ended(int(msg["wstatus"]), int(msg["maxrss"]))  # type: ignore[call-overload]
            _release(self.server, self.env, ok=True)
        return self.ended


def start(
    args: Sequence[str],
    *,
    stdin: int,
    stdout: int,
    stderr: int,
    cwd: str | Path,
    env: Mapping[str, str] | None = None,
    new_session: bool = False,
    rlimits: Sequence[tuple[int, int]] = (),
    executable: str = sys.executable,
) -> Child | None:
    """`python -m webhook.cli.main ARGS` forked with these descriptors; None when only an `exec` can
    run it faithfully (the caller then runs it as before)."""
    env = dict(os.environ if env is None else env)
    size = sum(len(a.encode("utf-8", "surrogateescape")) + 1 for a in args)
    size += sum(len(k) + len(v) + 2 for k, v in env.items())
    if _exec_only() or executable != sys.executable or size > ARG_LIMIT:
        return None
    server = _acquire(env)
    if server is None:
        return None
    request = {
        "args": list(args),
        "cwd": str(cwd),
        "env": env,
        "new_session": new_session,
        "rlimits": [list(r) for r in rlimits],
    }
    payload = json.dumps(request).encode("ascii")  # lone surrogates (undecodable bytes) stay escaped
    try:
        socket.send_fds(server.sock, [_HEADER.pack(len(payload)) + payload], [stdin, stdout, stderr])
    except OSError:
        _release(server, env, ok=False)
        raise
    try:
        msg = server._line(60.0)
        if "error" in msg:
            _release(server, env, ok=True)
            raise OSError(str(msg["error"]))
        pid = int(msg["pid"])  # type: ignore[call-overload]
    except (RuntimeError, KeyError, ValueError):
        _release(server, env, ok=False)
        raise
    return Child(server, env, pid)


def _drain(fd: int, into: list[bytes]) -> None:
    with open(fd, "rb", closefd=True) as f:
        into.append(f.read())


def _feed(fd: int, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError), open(fd, "wb", closefd=True) as f:  # it stopped reading
        f.write(data)


def _text(data: bytes) -> str:
    """As subprocess's text mode: decoded, universal newlines."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


@overload
def run(
    args: Sequence[str],
    *,
    cwd: str | Path = ...,
    env: Mapping[str, str] | None = ...,
    input: str | bytes | None = ...,  # noqa: A002
    timeout: float = ...,
    text: Literal[True] = ...,
) -> subprocess.CompletedProcess[str]: ...


@overload
def run(
    args: Sequence[str],
    *,
    cwd: str | Path = ...,
    env: Mapping[str, str] | None = ...,
    input: str | bytes | None = ...,  # noqa: A002
    timeout: float = ...,
    text: Literal[False],
) -> subprocess.CompletedProcess[bytes]: ...


def run(
    args: Sequence[str],
    *,
    cwd: str | Path = ROOT,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,  # noqa: A002 - subprocess.run's name
    timeout: float = 300.0,
    text: bool = True,
) -> subprocess.CompletedProcess[str] | subprocess.CompletedProcess[bytes]:
    """`subprocess.run([python, -m, webhook.cli.main, *args], capture_output=True, text=text, ...)`,
    forked from a server when it can be (pipes for all three streams, as subprocess would give)."""
    argv = [sys.executable, "-m", MODULE, *args]
    data = input.encode("utf-8") if isinstance(input, str) else input
    in_r, in_w = os.pipe() if data is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        child = start(args, stdin=in_r, stdout=out_w, stderr=err_w, cwd=cwd, env=env)
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    if child is None:
        for fd in (in_w, out_r, err_r):
            if fd >= 0:
                os.close(fd)
        done = subprocess.run(argv, cwd=cwd, env=env, input=data, capture_output=True, timeout=timeout)
        if not text:
            return done
        return subprocess.CompletedProcess(argv, done.returncode, _text(done.stdout), _text(done.stderr))
    out: list[bytes] = []
    err: list[bytes] = []
    threads = [
        threading.Thread(target=_drain, args=(out_r, out), daemon=True),
        threading.Thread(target=_drain, args=(err_r, err), daemon=True),
    ]
    if data is not None:
        threads.append(threading.Thread(target=_feed, args=(in_w, data), daemon=True))
    for t in threads:
        t.start()
    ended = child.wait(timeout)
    if ended is None:
        os.kill(child.pid, 9)
        child.wait()
        for t in threads:
            t.join()
        raise subprocess.TimeoutExpired(argv, timeout, b"".join(out), b"".join(err))
    for t in threads:
        t.join()
    if not text:
        return subprocess.CompletedProcess(argv, ended.returncode, b"".join(out), b"".join(err))
    return subprocess.CompletedProcess(argv, ended.returncode, _text(b"".join(out)), _text(b"".join(err)))


# ---- the server's side (this file run as a script) -----------------------------------------------


def _exit_code(e: SystemExit) -> int:
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(code: int) -> int:
    """What the interpreter does on the way out, in its order."""
    with contextlib.suppress(BaseException):  # as the interpreter: nothing more to do
        threading._shutdown()  # type: ignore[attr-defined]  # joins non-daemon threads
    import atexit

    atexit._run_exitfuncs()
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - the interpreter reports it and exits 120
            if name == "stdout":
                with contextlib.suppress(Exception):  # stderr itself may be gone
                    print(f"Exception ignored in: {stream!r}", file=sys.stderr)
                    sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
                    sys.stderr.flush()
                code = 120
    return code


def _setup(req: dict[str, object], fds: list[int], ready: int) -> None:
    """What Popen does between fork and exec; `ready` is closed (with the others) once it is done."""
    import resource

    if req["new_session"]:
        os.setsid()
    for res, lim in req["rlimits"]:  # type: ignore[attr-defined]
        resource.setrlimit(res, (lim, lim))
    os.chdir(str(req["cwd"]))
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
    for name in os.listdir("/proc/self/fd"):  # as close_fds: only the three streams stay open
        if int(name) > 2 and int(name) != ready:
            with contextlib.suppress(OSError):
                os.close(int(name))
    os.environ.clear()
    os.environ.update(req["env"])  # type: ignore[call-overload]
    os.close(ready)


def _child(req: dict[str, object], fds: list[int], ready: int) -> None:
    import runpy

    code = 1
    try:
        try:
            _setup(req, fds, ready)
        except OSError as e:  # as Popen raises it in the parent: the command never starts
            os.write(ready, f"{type(e).__name__}: {e}".encode("utf-8", "backslashreplace"))
            code = 255
            return
        sys.argv = ["-m", *req["args"]]  # type: ignore[misc]
        sys.path.insert(0, os.getcwd())  # as `python -m` puts it
        try:
            runpy._run_module_as_main(MODULE, alter_argv=True)  # type: ignore[attr-defined]
            code = 0
        except SystemExit as e:
            code = _exit_code(e)
        except BaseException:  # noqa: BLE001 - the interpreter prints it and exits 1
            sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
            code = 1
        code = _finish(code)
    finally:
        os._exit(code)


def _serve(fd: int) -> None:
    sock = socket.socket(fileno=fd)
    # this file's directory is not on a command's path; the package is this checkout's (as `python -m`
    # from the repository root finds it), or the one PYTHONPATH names
    if "PYTHONPATH" in os.environ:
        del sys.path[0]
    else:
        sys.path[0] = str(ROOT)
    import importlib

    importlib.import_module(PRELOAD[0])
    # the module itself runs as __main__ in each child (runpy warns if it is already imported); what it
    # imported stays
    del sys.modules[MODULE]
    package, _, leaf = MODULE.rpartition(".")
    delattr(sys.modules[package], leaf)
    for name in PRELOAD[1:]:
        importlib.import_module(name)
    if threading.active_count() != 1:
        raise SystemExit("fork server: a preloaded module started a thread; forking would copy a lock")
    sys.stdout.flush()
    sock.sendall(b'{"ready": true}\n')
    while True:
        try:
            head, fds, _, _ = socket.recv_fds(sock, _HEADER.size, 3)
        except OSError:
            return
        if not head:
            return
        (n,) = _HEADER.unpack(head)
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                return
            data += chunk
        req = json.loads(data.decode("ascii"))
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            sock.close()
            os.close(ready_r)
            _child(req, fds, ready_w)
        os.close(ready_w)
        for f in fds:
            os.close(f)
        failed = b""
        while chunk := os.read(ready_r, 4096):  # empty once the child is set up (or has ended)
            failed += chunk
        os.close(ready_r)
        if failed:
            os.waitpid(pid, 0)
            sock.sendall(json.dumps({"error": failed.decode("utf-8", "replace")}).encode() + b"\n")
            continue
        sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _, wstatus, usage = os.wait4(pid, 0)
        sock.sendall(json.dumps({"wstatus": wstatus, "maxrss": usage.ru_maxrss}).encode() + b"\n")


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
