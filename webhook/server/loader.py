"""The cluster state from a directory of manifests, re-read when it changes (one loader thread per worker).

`ManifestDirectory.scan()` walks the directory (as `draguard simulate` does: `.yaml`/`.yml`/`.json`,
recursively, hidden directories left out), compares every file's (mtime, size, inode) with the last scan
and reads only the files that changed. Each document is taken the way `simulate` loads manifests
(validated, defaulted, version-skew stripped; a document with errors contributes nothing and is logged;
an object in a beta or alpha version the API server has — `v1beta1`, `v1beta2`, `v1alpha3` — is converted
to v1, as the API server stores it),
without `simulate`'s cross-object pass: the state holds what exists, and the admission core's
cross-object checks compare requests with it. A document whose content did not change since the file's
last read (same fingerprint) is not validated again and hands on the same dict. A file that no longer
parses keeps its last good objects (an editor or a writer caught half-way: the next change is read
again); a file that disappears takes its objects with it; when several files define the same object,
the last in path order wins. A DraguardPolicy is not state: it is left out with a logged note (policies
come from `--policy FILE` in this mode). Writers should replace files (write a temporary file and rename it, as
Kubernetes ConfigMap/Secret mounts and most tools do): an in-place rewrite to the same size within one
tick of the file system's clock (a few ms) is indistinguishable from no change.

`StateLoader` is the single writer of one process's `StateStore`: the first load is a `replace_all`,
every later change `apply`/`delete` of exactly the objects it touched (work ∝ the change, not the
cluster), then `publish`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from webhook.config.context import Context
from webhook.config.policy import Policy
from webhook.config.policyobject import is_policy_object
from webhook.io.documents import Document, DocumentError, InputFileError, parse, read_text
from webhook.io.files import MANIFEST_SUFFIXES, MAX_FILE_BYTES, UnreadableInput
from webhook.model.keys import object_key
from webhook.model.plain import json_dumps
from webhook.model.report import ObjectResult
from webhook.model.text import one_line
from webhook.validate.clusterinput import stored_context

if TYPE_CHECKING:
    from webhook.state.store import Snapshot, StateStore

log = logging.getLogger("draguard.state")

FileSig = tuple[int, int, int, int]
Key = tuple[str, str, str]  # (kind, namespace or "", name), as the StateStore names objects
MAX_LOGGED = 20  # invalid objects logged per scan (the rest are counted)


@dataclass
class DocResult:
    """What one document contributes, cached by the document's fingerprint."""

    objects: list[dict[str, Any]]
    problem: str | None  # why it was left out (without file and line)
    dropped: list[str] = field(default_factory=list)  # fields it was kept without (stored state: Warn)


@dataclass
class FileEntry:
    signature: FileSig
    objects: dict[Key, dict[str, Any]]  # the last definition in the file wins
    invalid: int = 0
    docs: dict[bytes, DocResult] = field(default_factory=dict)


@dataclass
class ScanResult:
    changed: list[str] = field(default_factory=list)  # files (re)read
    removed: list[str] = field(default_factory=list)
    invalid: int = 0  # documents left out of the changed files
    invalid_total: int = 0  # documents left out of all files
    unparsable: list[str] = field(default_factory=list)  # files that kept their previous objects
    upserts: list[dict[str, Any]] = field(default_factory=list)  # objects new or changed in the state
    deletes: list[Key] = field(default_factory=list)  # objects gone from the state
    validated: int = 0  # documents validated (the others were unchanged)


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


def _fingerprint(doc: Document) -> bytes:
    issues = [(i.rule, i.path, i.message) for i in doc.issues]
    text = json_dumps([doc.obj, issues], sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _dropped(result: ObjectResult | None) -> list[str]:
    """The fields the object is kept without: a writer (a driver's client-go) sent fields this version
    does not know, which the API server drops (field validation Warn)."""
    if result is None:
        return []
    what = f"{result.kind} {result.name}"
    return [
        one_line(f"{what} kept without a field: {v.rule}: {v.field}: {v.message}")
        for v in result.violations
        if v.rule == "schema.unknown-field-dropped"
    ]


def _problem(result: ObjectResult | None) -> str | None:
    errors = [v for v in (result.violations if result else []) if v.severity.value == "error"]
    if result is None or not errors:
        return None
    first = errors[0]
    what = f"{result.kind} {result.name}" if result.kind else "document"
    where = f"{first.field}: " if first.field else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return one_line(f"{what} left out of the state: {first.rule}: {where}{first.message}{more}")


class ManifestDirectory:
    """The objects of a directory (or one file) of manifests, cached per file and per document."""

    def __init__(self, root: str, ctx: Context, policy: Policy | None = None) -> None:
        self.root = root
        # objects as a cluster stores them: a beta or alpha version it has is converted to v1 (as the API
        # server converts it), never refused for not being served by default
        self.ctx = stored_context(ctx)
        self.policy = policy
        self.files: dict[str, FileEntry] = {}
        self._definers: dict[Key, set[str]] = {}  # files defining each object
        self._effective: dict[Key, dict[str, Any]] = {}  # the object the state holds for each key

    def scan(self) -> ScanResult:
        """Read what changed since the last scan. Raises UnreadableInput if the root is gone."""
        found = manifest_files(self.root)
        out = ScanResult()
        touched: set[Key] = set()
        for path in [p for p in self.files if p not in found]:
            touched.update(self._forget(path))
            out.removed.append(path)
        messages: list[str] = []
        for path, sig in found.items():
            entry = self.files.get(path)
            if entry is not None and entry.signature == sig:
                continue
            new, problems, unparsable = self._read(path, sig, entry, out)
            if unparsable and entry is not None:
                out.unparsable.append(path)
                entry.signature = sig  # keep the last good objects; read again on the next change
                log.warning("%s; its previous objects stay in the state", problems[0])
                continue
            if entry is not None:
                touched.update(self._forget(path))
            self.files[path] = new
            for key in new.objects:
                self._definers.setdefault(key, set()).add(path)
            touched.update(new.objects)
            out.changed.append(path)
            out.invalid += new.invalid
            messages += problems
        for m in messages[:MAX_LOGGED]:
            log.warning("%s", m)
        if len(messages) > MAX_LOGGED:
            log.warning("... and %d more documents left out of the state", len(messages) - MAX_LOGGED)
        for key in sorted(touched):
            self._settle(key, out)
        out.invalid_total = sum(e.invalid for e in self.files.values())
        return out

    def objects(self) -> list[dict[str, Any]]:
        """Every object of the state (one per key)."""
        return list(self._effective.values())

    def _forget(self, path: str) -> list[Key]:
        entry = self.files.pop(path)
        for key in entry.objects:
            owners = self._definers.get(key)
            if owners is not None:
                owners.discard(path)
                if not owners:
                    del self._definers[key]
        return list(entry.objects)

    def _settle(self, key: Key, out: ScanResult) -> None:
        owners = self._definers.get(key)
        before = self._effective.get(key)
        if not owners:
            if before is not None:
                del self._effective[key]
                out.deletes.append(key)
            return
        obj = self.files[max(owners)].objects[key]
        if obj is not before:
            self._effective[key] = obj
            out.upserts.append(obj)

    def _read(
        self, path: str, sig: FileSig, previous: FileEntry | None, out: ScanResult
    ) -> tuple[FileEntry, list[str], bool]:
        """The file's new entry, its problems (file:line: ...; then the fields objects are kept without),
        whether it could not be parsed."""
        try:
            text = read_text(path, MAX_FILE_BYTES)
        except InputFileError as e:
            return FileEntry(sig, {}), [one_line(f"{path}:1: {e.rule}: {e}")], True
        entry = FileEntry(sig, {})
        problems: list[str] = []
        unparsable = False
        notes: list[str] = []  # logged after the problems (the first problem names an unparsable file's)
        cache = previous.docs if previous is not None else {}
        for doc in parse(text, path):
            if isinstance(doc, DocumentError):
                unparsable = True
                entry.invalid += 1
                problems.append(
                    one_line(f"{path}:{doc.line}: document left out of the state: {doc.rule}: {doc.message}")
                )
                continue
            if is_policy_object(doc.obj):  # the cluster's policies, not its state
                notes.append(
                    f"{path}:{doc.line}: a DraguardPolicy is not applied from the state directory; "
                    "pass its file with --policy"
                )
                continue
            fp = _fingerprint(doc)
            done = entry.docs.get(fp) or cache.get(fp)
            if done is None:
                from webhook.simulate.load import document_objects

                objs, result = document_objects(doc, self.ctx, self.policy)
                done = DocResult(objs, _problem(result), _dropped(result))
                out.validated += 1
            entry.docs[fp] = done
            if done.problem is not None:
                entry.invalid += 1
                problems.append(f"{path}:{doc.line}: {done.problem}")
            notes.extend(f"{path}:{doc.line}: {note}" for note in done.dropped)
            for obj in done.objects:
                entry.objects[object_key(obj)] = obj
        return entry, problems + notes, unparsable


class StateLoader:
    """The one writer of a StateStore: loads the directory, then polls it in a daemon thread."""

    def __init__(
        self,
        source: ManifestDirectory,
        store: StateStore,
        interval: float,
        on_publish: Callable[[Snapshot, float, ScanResult], None] | None = None,
        on_tick: Callable[[Snapshot], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        on_first: Callable[[Snapshot], None] | None = None,
    ) -> None:
        self.source = source
        self.store = store
        self.interval = interval
        self.on_publish = on_publish
        self.on_tick = on_tick
        self.on_error = on_error
        self.on_first = on_first  # runs once, after the first publish, before `ready` is set
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reloads = 0
        self.errors = 0  # scans that failed (the previous state stayed published)
        # the failure of the latest scan, (message, monotonic time), None once a scan succeeds again:
        # replaced whole, read by request threads (/readyz)
        self.failing: tuple[str, float] | None = None

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
        if self.ready.is_set():
            if not (result.upserts or result.deletes or result.changed or result.removed):
                return False
            for obj in result.upserts:
                self.store.apply(obj)
            for kind, namespace, name in result.deletes:
                self.store.delete(kind, namespace or None, name)
        else:
            self.store.replace_all(self.source.objects())
        snapshot = self.store.publish()
        self.reloads += 1
        if self.on_publish is not None:
            self.on_publish(snapshot, time.monotonic() - t0, result)
        if not self.ready.is_set() and self.on_first is not None:
            try:
                self.on_first(snapshot)
            except Exception:  # a failed warm-up only makes the first requests slower
                log.exception("warm-up after the first state load failed")
        self.ready.set()
        return True

    def _failed(self, message: str, e: BaseException) -> None:
        self.errors += 1
        self.failing = (message[:1024], time.monotonic())
        if self.on_error is not None:
            self.on_error(e)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.load_once()
                self.failing = None
            except UnreadableInput as e:
                log.error("state: %s; the previous state stays in use", one_line(str(e)))
                self._failed(one_line(str(e)), e)
            except Exception as e:  # a bug must not end the loader: the old state stays published
                log.exception("state reload failed; the previous state stays in use")
                self._failed(f"internal error ({type(e).__name__}): see the log", e)
            if self.on_tick is not None and self.ready.is_set():
                try:
                    self.on_tick(self.store.snapshot())
                except Exception:
                    log.exception("state metrics update failed")
            self._stop.wait(self.interval)
