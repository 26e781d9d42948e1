"""`draguard serve` in a subprocess, for the benchmarks that load the real server (webhook_bench,
abuse_bench, watch_bench; policy_bench and scale_bench through them): its start, the port it listens on,
its worker processes, their memory, its stop. The benchmarks import it as they import each other (bench/
on sys.path): each still runs as `python3 bench/X.py`. The tests' own is tests/server/server_proc.py."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LISTENING = re.compile(r"Listening at: https://127\.0\.0\.1:(\d+)")


class ServeProcess:
    """`draguard serve ARGS` of the checkout `repo` (default this one), its output in `log_path`;
    `popen`: more subprocess.Popen arguments."""

    def __init__(self, args: Sequence[str], log_path: Path, repo: Path = ROOT, **popen: Any) -> None:
        self.log_path = log_path
        self.log = open(log_path, "w")  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "webhook.cli.main", "serve", *args],
            cwd=repo,
            env={**os.environ, "PYTHONPATH": str(repo)},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            **popen,
        )

    def text(self) -> str:
        return self.log_path.read_text()

    def listening(self) -> int | None:
        """The port the server says it listens on, None until it says so."""
        m = LISTENING.search(self.text())
        return int(m.group(1)) if m else None

    def worker_pids(self) -> list[int]:
        pids: list[int] = []
        for task in Path(f"/proc/{self.proc.pid}/task").glob("*"):
            with contextlib.suppress(OSError):
                pids += [int(p) for p in (task / "children").read_text().split()]
        return sorted(pids)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(120)
        self.log.close()
        return code


def rss(pid: int) -> float:
    """The resident memory of a process in MiB (0 when it is gone)."""
    return proc_mib(pid, "status", "VmRSS:")


def proc_mib(pid: int, file: str, field: str) -> float:
    """A figure in kB of /proc/PID/FILE (its line starting with `field`) in MiB; 0 when it is gone."""
    with contextlib.suppress(OSError):  # the process is gone
        for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return 0.0
