"""What git knows about a work tree, for `--context` (webhook.offline.repocontext): the files it tracks and the
content of a file at a revision. Every function answers None (or nothing) where git cannot answer —
not a work tree, git not installed, a revision that does not exist — and never raises: the caller then
reads the directory itself, or goes without the earlier version."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable

GIT_SECONDS = 30.0  # `git ls-files` of a very large repository answers well within this


def _git(top: str, *args: str, stdin: bytes | None = None) -> bytes | None:
    """`git -C top ARGS` stdout, None when git fails or cannot be run."""
    try:
        p = subprocess.run(
            ["git", "-C", top, *args],
            input=stdin,
            capture_output=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout if p.returncode == 0 else None


def toplevel(top: str) -> str | None:
    """The root of the work tree `top` is in (None: not in a work tree)."""
    out = _git(top, "rev-parse", "--show-toplevel")
    if not out:
        return None
    return os.fsdecode(out.rstrip(b"\n"))


def tracked_files(top: str, suffixes: tuple[str, ...]) -> list[str] | None:
    """The files under directory `top` that git tracks (the index: what a commit holds; ignored and
    untracked files are not), ending in one of `suffixes`, as paths under `top`, sorted; None when `top`
    is not in a work tree."""
    out = _git(top, "ls-files", "-z", "--cached", "--", ".")
    if out is None:
        return None
    names = (os.fsdecode(n) for n in out.split(b"\0") if n)
    return [os.path.normpath(os.path.join(top, n)) for n in names if n.endswith(suffixes)]


def at_revision(root: str, rev: str, paths: Iterable[str], max_bytes: int) -> dict[str, bytes]:
    """The content at revision `rev` of the files `paths` (relative to the work tree's root `root`), read
    with one `git cat-file --batch`; a file absent at `rev` (new, renamed), larger than `max_bytes`, or
    whose name git's batch input cannot carry (a newline) is left out."""
    wanted = [p for p in dict.fromkeys(paths) if "\n" not in p and "\r" not in p]
    if not wanted:
        return {}
    requests = b"".join(os.fsencode(f"{rev}:{p}") + b"\n" for p in wanted)
    out = _git(root, "cat-file", "--batch", stdin=requests)
    if out is None:
        return {}
    found: dict[str, bytes] = {}
    pos = 0
    # one answer per request, in order: "<oid> <type> <size>\n<content>\n", or "<request> missing\n"
    for path in wanted:
        end = out.find(b"\n", pos)
        if end < 0:
            break
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():
            continue  # missing, ambiguous
        size = int(header[2])
        if header[1] == b"blob" and size <= max_bytes:
            found[path] = out[pos : pos + size]
        pos += size + 1
    return found
