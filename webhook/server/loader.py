"""The cluster state from a directory of manifests, re-read when it changes (one loader thread per worker).

`ManifestDirectory.scan()` walks the directory (as `draguard simulate` does: `.yaml`/`.yml`/`.json`,
recursively, hidden directories left out), compares every file's (mtime, size, inode) with the last scan
and loads only the files that changed, each the way `simulate` loads manifests (validated, defaulted,
version-skew stripped; objects with errors are left out and logged). A file that no longer parses keeps
its last good objects (an editor or a writer caught half-way: the next change is read again); a file that
disappears takes its objects with it. Objects of unchanged files are handed on as the same dicts, so the
store's `replace_all` can skip them by identity. Writers should replace files (write a temporary file and
rename it, as Kubernetes ConfigMap/Secret mounts and most tools do): an in-place rewrite to the same size
within one tick of the file system's clock (a few ms) is indistinguishable from no change.

`StateLoader` is the single writer of one process's `StateStore`: the first load, then a poll every
`interval` seconds → `replace_all` + `publish` when anything changed.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webhook.context import Context
from webhook.io.files import MANIFEST_SUFFIXES, UnreadableInput
from webhook.model.text import one_line
from webhook.policy import Policy

log = logging.getLogger("draguard.state")

FileSig = tuple[int, int, int, int]
MAX_LOGGED = 20  # invalid objects logged per scan (the rest are counted)


@dataclass
class FileEntry:
    signature: FileSig
    objects: list[dict[str, Any]]
    invalid: int = 0


@dataclass
class ScanResult:
    changed: list[str] = field(default_factory=list)  # files (re)loaded
    removed: list[str] = field(default_factory=list)
    invalid: int = 0  # objects left out of the changed files
    invalid_total: int = 0  # objects left out of all files
    unparsable: list[str] = field(default_factory=list)  # files that kept their previous objects


def _sig(st: os.stat_result) -> FileSig:
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def manifest_files(root: str) -> dict[str, FileSig]:
    """The manifest files `discover_all` would find under `root`, each with its stat signature, in one
    stat per file (a poll of 2,000 files costs a few milliseconds). Raises UnreadableInput when `root`
    is gone or a directory cannot be listed; a file that vanishes or cannot be stat'ed is left out."""
    try:
        st = os.stat(root)
    except OSError as e:
        raise UnreadableInput(f"{root}: {e.strerror or e}") from None
    if stat.S_ISREG(st.st_mode):
        return {root: _sig(st)}
    if not stat.S_ISDIR(st.st_mode):
        raise UnreadableInput(f"{root}: not a regular file or directory")
    found: dict[str, FileSig] = {}
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    name = entry.name
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if not name.startswith("."):
                                stack.append(entry.path)
                        elif name.endswith(MANIFEST_SUFFIXES):
                            fst = entry.stat()  # follows a symlink to a file (ConfigMap and Secret mounts)
                            if stat.S_ISREG(fst.st_mode):
                                found[entry.path] = _sig(fst)
                    except OSError:
                        continue
        except OSError as e:
            raise UnreadableInput(f"{directory}: cannot list this directory: {e.strerror or e}") from None
    return dict(sorted(found.items()))


class ManifestDirectory:
    """The objects of a directory (or one file) of manifests, cached per file."""

    def __init__(self, root: str, ctx: Context, policy: Policy | None = None) -> None:
        self.root = root
        self.ctx = ctx
        self.policy = policy
        self.files: dict[str, FileEntry] = {}

    def scan(self) -> ScanResult:
        """Reload what changed since the last scan. Raises UnreadableInput if the root is gone."""
        found = manifest_files(self.root)
        out = ScanResult()
        for path in [p for p in self.files if p not in found]:
            del self.files[path]
            out.removed.append(path)
        logged = 0
        for path, sig in found.items():
            entry = self.files.get(path)
            if entry is not None and entry.signature == sig:
                continue
            objects, invalid, unparsable, messages = self._load(path)
            if unparsable and entry is not None:
                out.unparsable.append(path)
                entry.signature = sig  # keep the last good objects; read again on the next change
                log.warning("%s; its previous objects stay in the state", messages[0])
                continue
            self.files[path] = FileEntry(sig, objects, invalid)
            out.changed.append(path)
            out.invalid += invalid
            for m in messages:
                if logged < MAX_LOGGED:
                    log.warning("%s", m)
                logged += 1
        if logged > MAX_LOGGED:
            log.warning("... and %d more objects left out of the state", logged - MAX_LOGGED)
        out.invalid_total = sum(e.invalid for e in self.files.values())
        return out

    def objects(self) -> list[dict[str, Any]]:
        """Every loaded object, files in path order."""
        return [o for path in sorted(self.files) for o in self.files[path].objects]

    def _load(self, path: str) -> tuple[list[dict[str, Any]], int, bool, list[str]]:
        """(objects, number left out, whether the file could not be parsed, messages to log)."""
        from webhook.simulate.load import load

        inputs = load([path], self.ctx, jobs=1, policy=self.policy)
        objects = list(inputs.state)
        objects += [item.obj for item in inputs.pending]
        objects += [item.obj for item in inputs.templates.values()]
        objects += [item.obj for item in inputs.pods]
        unparsable = False
        messages = []
        invalid = 0
        for result in inputs.report.objects:
            errors = [v for v in result.violations if v.severity.value == "error"]
            if not errors:
                continue
            invalid += 1
            first = errors[0]
            if result.kind is None and first.rule in ("input.parse", "input.too-large"):
                unparsable = True
            what = f"{result.kind} {result.name}" if result.kind else "document"
            where = f"{first.field}: " if first.field else ""
            messages.append(
                one_line(
                    f"{result.source}:{result.line}: {what} left out of the state: "
                    f"{first.rule}: {where}{first.message}"
                )
            )
        return objects, invalid, unparsable, messages


class StateLoader:
    """The one writer of a StateStore: loads the directory, then polls it in a daemon thread."""

    def __init__(
        self,
        source: ManifestDirectory,
        store: Any,
        interval: float,
        on_publish: Callable[[Any, float, ScanResult], None] | None = None,
        on_tick: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.source = source
        self.store = store
        self.interval = interval
        self.on_publish = on_publish
        self.on_tick = on_tick
        self.on_error = on_error
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reloads = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="draguard-state-loader", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def load_once(self) -> bool:
        """One scan; replace and publish when anything changed (or nothing was published yet)."""
        t0 = time.monotonic()
        result = self.source.scan()
        if not (result.changed or result.removed) and self.ready.is_set():
            return False
        self.store.replace_all(self.source.objects())
        snapshot = self.store.publish()
        self.reloads += 1
        if self.on_publish is not None:
            self.on_publish(snapshot, time.monotonic() - t0, result)
        self.ready.set()
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.load_once()
            except UnreadableInput as e:
                log.error("state: %s; the previous state stays in use", one_line(str(e)))
                if self.on_error is not None:
                    self.on_error(e)
            except Exception as e:  # a bug must not end the loader: the old state stays published
                log.exception("state reload failed; the previous state stays in use")
                if self.on_error is not None:
                    self.on_error(e)
            if self.on_tick is not None and self.ready.is_set():
                try:
                    self.on_tick(self.store.snapshot())
                except Exception:
                    log.exception("state metrics update failed")
            self._stop.wait(self.interval)
