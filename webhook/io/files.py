"""Finding and reading input files without hanging or reading without bound.

- Directories are walked with an explicit stack (any depth), without following symlinked directories (no
  loops); hidden directories are left out. Entries are classified with `stat` before anything is opened:
  a FIFO, socket or device file (or a broken or looping symlink) inside a directory is reported as
  skipped and never opened.
- A named path that is not a regular file or directory (`/dev/zero`, a FIFO) is a usage error; `-` reads
  stdin.
- Every read stops at `max_bytes` (a file, stdin or a request body): more is an error on that input.
- Files are opened with O_NONBLOCK and checked again with `fstat` after opening, so a file swapped for a
  FIFO between the check and the open cannot block the run.
- A directory that cannot be listed is an error (never a silent "0 objects checked").
- `--exclude GLOB` (`excluded`): a file or directory whose path, or a part of it made of whole
  components, matches GLOB is left out, never listed or read, and counted.
- A Helm chart (a directory holding a `Chart.yaml` file) found in a walk: its `templates/` are not
  manifests until rendered, so they are not read; the chart is reported once (`Discovery.charts`).
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from webhook.model.errors import DraguardError

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
MAX_FILE_BYTES = 256 << 20  # one file or stdin in the CLI
MAX_REQUEST_BYTES = 3 << 20  # one request body (the API server's own limit)
_READ_BLOCK = 1 << 20


class UnreadableInput(DraguardError):
    """A path that does not exist or cannot be read: a usage error (exit 2)."""


class InputFileError(UnreadableInput):
    """A file that was found but cannot be used (too large, not UTF-8 text): an error on that file; the
    other files are still checked."""

    def __init__(self, path: str, message: str, rule: str = "input.parse") -> None:
        super().__init__(message)
        self.path = path
        self.rule = rule


@dataclass
class Skipped:
    """A directory entry that was not read (a FIFO, socket, device file, broken or looping symlink)."""

    path: str
    reason: str


@dataclass(frozen=True)
class HelmChart:
    """A Helm chart met in a directory walk: its `templates/` hold `templates` manifest files, not read."""

    directory: str  # the chart's directory, as walked (what `helm template` takes)
    chart_file: str  # its Chart.yaml
    templates: int  # .yaml/.yml/.json files under templates/, left unread


@dataclass(frozen=True)
class Kustomization:
    """A kustomization met in a directory walk, with the patch files it names that the walk found: a patch
    is part of an object, not one, until `kubectl kustomize` has built it into its target."""

    directory: str  # as walked (what `kubectl kustomize` takes)
    file: str  # its kustomization.yaml
    patches: tuple[str, ...]  # the files found in the walk that it names as patches


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)  # files to read, in order (`-` for stdin)
    skipped: list[Skipped] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)  # paths left out by --exclude (a directory once)
    charts: list[HelmChart] = field(default_factory=list)  # Helm charts whose templates were not read
    walked: set[str] = field(default_factory=set)  # the files found in a directory (the rest were named)
    kustomizations: list[Kustomization] = field(default_factory=list)  # with patch files found in the walk

    def patch_files(self) -> frozenset[str]:
        """The files found in a walk that a kustomization names as patches (named ones are not: a file
        named on the command line is checked whatever it is)."""
        return frozenset(p for k in self.kustomizations for p in k.patches if p in self.walked)


HELM_CHART_FILE = "Chart.yaml"  # the name Helm requires (`helm create`, `helm lint`)
HELM_TEMPLATES = "templates"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")  # kustomize's names
_KUSTOMIZATION_BYTES = 1 << 20


def kustomization_patches(path: str) -> list[str]:
    """The patch files a kustomization names (`patches` and `patchesJson6902` items' `path`, the paths of
    `patchesStrategicMerge`; an inline patch is no file), relative to its directory as written; none when
    it cannot be read as YAML."""
    import yaml

    try:
        with open(path, "rb") as f:
            data = yaml.load(
                f.read(_KUSTOMIZATION_BYTES + 1), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            )
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    out = [p for p in _list_of(data.get("patchesStrategicMerge")) if isinstance(p, str) and "\n" not in p]
    for key in ("patches", "patchesJson6902"):
        out.extend(
            p["path"]
            for p in _list_of(data.get(key))
            if isinstance(p, dict) and isinstance(p.get("path"), str)
        )
    return out


def _list_of(v: object) -> list[object]:
    return v if isinstance(v, list) else []


def excluded(path: str, patterns: Sequence[str]) -> bool:
    """Whether `path` matches one of the `--exclude` globs: the whole path or any part of it made of
    whole components (`a/b/c.yaml`: `a`, `a/b`, `b`, `b/c.yaml`, `c.yaml`, ...), compared with `fnmatch`
    (case-sensitive; `*` also matches `/`). So `vendor`, `*.json`, `templates/*.yaml` and
    `charts/*/templates` mean what they say, and a file is excluded alike whether it is named on the command
    line (pre-commit names every file) or found in a walk (where its directories are matched as they are
    entered). A leading `./` and a trailing `/` are ignored, on the path and on the pattern."""
    if not patterns:
        return False
    match = _matcher(tuple(patterns))
    parts = _normal(path).split("/")
    return any(match("/".join(parts[i:j])) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1))


def _tail_excluded(path: str, patterns: Sequence[str]) -> bool:
    """`excluded` for an entry met in a walk: its directories were matched as they were entered, so only
    the parts that end with its own name are left to match."""
    if not patterns:
        return False
    match = _matcher(tuple(patterns))
    parts = _normal(path).split("/")
    return any(match("/".join(parts[i:])) for i in range(len(parts)))


@functools.lru_cache(maxsize=16)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """One compiled regular expression for all the globs (a walk asks it for every entry)."""
    regex = re.compile("|".join(f"(?:{fnmatch.translate(_normal(p))})" for p in patterns))
    return lambda text: regex.match(text) is not None


def _normal(path: str) -> str:
    if os.sep != "/":
        path = path.replace(os.sep, "/")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") or path


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _raise_walk_error(e: OSError) -> NoReturn:
    raise UnreadableInput(f"{e.filename}: cannot list this directory: {e.strerror or e}") from e


def discover_all(paths: Iterable[str], exclude: Sequence[str] = ()) -> Discovery:
    """Expand directories recursively into manifest files (sorted); keep files and `-` as given. Paths
    matching an `exclude` glob (`excluded`), named or found, are left out and listed in `excluded`; the
    `templates/` of a Helm chart found in a directory are left out and the chart listed in `charts` (a
    template named on the command line is read: it gets its own finding).

    Raises `UnreadableInput` for a named path that does not exist or is not a file or directory, and for
    a directory that cannot be listed."""
    out = Discovery()
    named: set[str] = set()
    for p in paths:
        if p == STDIN:
            out.files.append(p)
            continue
        try:
            st = os.stat(p)
        except OSError as e:
            if isinstance(e, FileNotFoundError) and not os.path.lexists(p):
                raise UnreadableInput(f"{p}: no such file or directory") from e
            if e.errno == errno.ELOOP:
                raise UnreadableInput(f"{p}: a symlink loop ({e.strerror}): nothing to read") from e
            raise UnreadableInput(f"{p}: {e.strerror or e}") from e
        if excluded(p, exclude):  # after the check that it exists: a mistyped path is still an error
            out.excluded.append(p)
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk(p, out, exclude)
        elif stat.S_ISREG(st.st_mode):
            out.files.append(p)
            named.add(p)
        else:
            raise UnreadableInput(
                f"{p}: {_kind(st.st_mode)}, not a regular file: draguard reads files, directories "
                "and - (stdin)"
            )
    # a file named and also found in a directory, or named twice, is read once (where it first came);
    # named is what it is, however it was found
    named_at = {os.path.normpath(n) for n in named}
    seen: set[str] = set()
    files: list[str] = []
    for f in out.files:
        key = f if f == STDIN else os.path.normpath(f)
        if key in seen and f != STDIN:
            continue
        seen.add(key)
        files.append(f)
    out.files = files
    out.walked = {w for w in out.walked if os.path.normpath(w) not in named_at}
    return out


def _walk(top: str, out: Discovery, exclude: Sequence[str] = ()) -> None:
    """The manifests under `top`: an explicit stack of `os.scandir` (no recursion, whatever the depth),
    directories in sorted order, symlinked and hidden directories not entered, excluded paths and Helm
    chart templates left out."""
    found: list[str] = []
    wanted: dict[str, tuple[str, str]] = {}  # a patch file's normalized path -> (directory, kustomization)
    stack = [top]
    while stack:
        root = stack.pop()
        entries = _list(root)
        chart = any(e.name == HELM_CHART_FILE and _is_file(e) for e in entries)
        kustomization = next((e.path for e in entries if e.name in KUSTOMIZATION_FILES and _is_file(e)), None)
        if kustomization is not None:
            for patch in kustomization_patches(kustomization):
                wanted.setdefault(os.path.normpath(os.path.join(root, patch)), (root, kustomization))
        subdirs: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # follows a symlink, as os.walk does
            except OSError:
                is_dir = False
            if is_dir:
                if not entry.name.startswith("."):
                    try:
                        linked = entry.is_symlink()
                    except OSError:
                        linked = True
                    if linked:  # a symlinked directory is not entered (no loops)
                        continue
                    if _tail_excluded(entry.path, exclude):
                        out.excluded.append(entry.path)
                    elif chart and entry.name == HELM_TEMPLATES:
                        templates = _count_manifests(entry.path)
                        if templates:  # nothing to say of an empty templates/
                            chart_file = os.path.join(root, HELM_CHART_FILE)
                            out.charts.append(HelmChart(root, chart_file, templates))
                    else:
                        subdirs.append(entry.path)
                continue
            if not entry.name.endswith(MANIFEST_SUFFIXES):
                continue
            path = entry.path
            if _tail_excluded(path, exclude):
                out.excluded.append(path)
                continue
            try:
                st = os.stat(path)  # follows a symlink to a file
            except OSError as e:
                out.skipped.append(
                    Skipped(path, f"skipped: {e.strerror or e} (a broken or looping symlink?)")
                )
                continue
            if stat.S_ISREG(st.st_mode):
                found.append(path)
            else:
                out.skipped.append(Skipped(path, f"skipped: {_kind(st.st_mode)}, not a regular file"))
        stack.extend(sorted(subdirs, reverse=True))  # the first in sorted order is listed next
    out.files.extend(sorted(found))
    out.walked.update(found)
    patches: dict[tuple[str, str], list[str]] = {}
    for path in sorted(found):
        owner = wanted.get(os.path.normpath(path))
        if owner is not None:
            patches.setdefault(owner, []).append(path)
    out.kustomizations.extend(Kustomization(d, k, tuple(ps)) for (d, k), ps in patches.items())
    out.kustomizations.sort(key=lambda k: k.directory)
    out.skipped.sort(key=lambda s: s.path)
    out.excluded.sort()
    out.charts.sort(key=lambda c: c.directory)


def _list(directory: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            return list(it)
    except OSError as e:
        _raise_walk_error(e)


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _count_manifests(top: str) -> int:
    """How many manifest-named files a chart's templates/ holds (listed, never opened); a directory that
    cannot be listed counts as empty: nothing in it would be read anyway."""
    count = 0
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.name.endswith(MANIFEST_SUFFIXES):
                        count += 1
        except OSError:
            continue
    return count


def discover(paths: Iterable[str]) -> list[str]:
    """The files `discover_all` finds (skipped entries left out)."""
    return discover_all(paths).files


def read_bytes(path: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes (stdin for `-`), at most `max_bytes`.

    Raises `InputFileError` when there is more, `UnreadableInput` when it cannot be opened or is not a
    regular file."""
    if path == STDIN:
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None:
            raise UnreadableInput("-: there is no standard input to read")
        return _read_limited(stdin.read, "<stdin>", max_bytes)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise UnreadableInput(f"{path}: {e.strerror or e}") from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableInput(f"{path}: {_kind(st.st_mode)}, not a regular file")
        if st.st_size > max_bytes:
            raise _too_large(path, max_bytes)
        return _read_limited(lambda n: os.read(fd, n), path, max_bytes, first=st.st_size + 1)
    finally:
        os.close(fd)


def _read_limited(read: Callable[[int], bytes], name: str, max_bytes: int, first: int = _READ_BLOCK) -> bytes:
    """At most max_bytes + 1 bytes in blocks (the first of `first` bytes: a regular file's whole size,
    so that it is read in one piece and not copied again)."""
    chunks: list[bytes] = []
    total = 0
    size = first
    while True:
        try:
            block = read(min(size, max_bytes + 1 - total))
            size = _READ_BLOCK
        except OSError as e:
            raise UnreadableInput(f"{name}: {e.strerror or e}") from e
        if not block:
            break
        chunks.append(block)
        total += len(block)
        if total > max_bytes:
            raise _too_large(name, max_bytes)
    return b"".join(chunks)


def _too_large(name: str, max_bytes: int) -> InputFileError:
    return InputFileError(
        name,
        f"larger than {_size(max_bytes)}: draguard does not read it (split the file, or raise the limit "
        "with --max-input-bytes)",
        "input.too-large",
    )


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text (a leading BOM dropped); anything else is an `InputFileError` on that input."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputFileError(
            name, f"not UTF-8 text ({e.reason} at byte {e.start}): save the file as UTF-8"
        ) from e


_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


def decode_file_text(data: bytes, name: str) -> str:
    """A file's text as kubectl reads a file or stdin (cli-runtime's FileVisitor, `unicode.BOMOverride`):
    UTF-16 when it starts with a UTF-16 byte-order mark (what Windows PowerShell's `>` writes), else
    UTF-8 (`decode_text`). A request body is UTF-8 only (`decode_text`)."""
    encoding = _UTF16_BOMS.get(data[:2])
    if encoding is None:
        return decode_text(data, name)
    try:
        return data[2:].decode(encoding)
    except UnicodeDecodeError as e:
        raise InputFileError(
            name,
            f"not UTF-16 text after its byte-order mark ({e.reason} at byte {e.start + 2}): save the file as UTF-8",
        ) from e


def read_text(path: str, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The file's text (stdin for `-`), bounded and decoded (`decode_file_text`)."""
    return decode_file_text(read_bytes(path, max_bytes), "<stdin>" if path == STDIN else path)
