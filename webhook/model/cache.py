"""Caches bounded by bytes, not entries: a long-lived server must stay flat in memory whatever its input.

    cache = ByteLRU(max_bytes=8 << 20)
    cache.put(key, value, nbytes)   # evicts least-recently-used entries beyond max_bytes
    cache.get(key)                  # -> value | None

    @bounded_cache(max_bytes=1 << 20)   # for pure functions of strings/ints/tuples of them
    def parse(text: str) -> Thing: ...

Both are safe under concurrent use (one lock per cache, held only around dictionary operations).
`nbytes` is the caller's estimate of what the entry retains (key included); `approx_size` gives one for
plain data. An entry larger than a quarter of the cache is never stored.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import wraps
from typing import Any, Generic, ParamSpec, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
P = ParamSpec("P")
R = TypeVar("R")

_ENTRY_OVERHEAD = 120  # dict slot + OrderedDict link + the (value, nbytes) tuple, roughly


class ByteLRU(Generic[K, V]):
    """Least-recently-used cache holding at most `max_bytes` by the callers' size estimates."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        self.max_bytes = max_bytes
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return None
            self._data.move_to_end(key)
            return entry[0]

    def put(self, key: K, value: V, nbytes: int) -> None:
        nbytes += _ENTRY_OVERHEAD
        if nbytes > self.max_bytes // 4:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._data[key] = (value, nbytes)
            self._bytes += nbytes
            while self._bytes > self.max_bytes:
                _, (_, size) = self._data.popitem(last=False)
                self._bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0

    def discard(self, key: K) -> None:
        """Remove `key`'s entry if there is one."""
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]

    @property
    def nbytes(self) -> int:
        """The estimated bytes held now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)


def approx_size(x: Any, _depth: int = 0) -> int:
    """A cheap estimate of the bytes `x` retains: exact for str/bytes/int, recursive over plain
    containers (up to a depth of 8; deeper parts count as one pointer each)."""
    size = sys.getsizeof(x)
    if _depth >= 8:
        return size
    if isinstance(x, dict):
        for k, v in x.items():
            size += approx_size(k, _depth + 1) + approx_size(v, _depth + 1)
    elif isinstance(x, list | tuple | set | frozenset):
        for v in x:
            size += approx_size(v, _depth + 1)
    return size


def bounded_cache(
    max_bytes: int, size: Callable[[Any], int] = approx_size
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Memoise a pure function of hashable arguments in a ByteLRU. The entry's size is the size of the
    arguments plus `size(result)`; calls whose arguments alone exceed a quarter of the cache are not
    cached. Keyword arguments are part of the key. `fn.cache` is the ByteLRU (for tests and clearing)."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        cache: ByteLRU[Hashable, Any] = ByteLRU(max_bytes)

        @wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            key: Hashable = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            hit = cache.get(key)
            if hit is not None:
                return hit[0]  # type: ignore[no-any-return]
            result = fn(*args, **kwargs)
            cache.put(key, (result,), approx_size(key) + size(result))
            return result

        wrapper.cache = cache  # type: ignore[attr-defined]
        return wrapper

    return decorate


_SMALL_ATOMS = (bool, int, float, type(None))


def short_input_cache(maxsize: int = 4096, max_len: int = 256) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """`functools.lru_cache(maxsize)` for a pure function of strings (and flags), caching only calls
    whose positional arguments are strings of at most `max_len` characters in all, or small atoms
    (bool/int below 2**64/float/None). The cache then holds at most `maxsize` entries derived from
    short inputs — bounded in bytes — and keeps lru_cache's speed (~0.2 µs a hit, where a ByteLRU
    hit costs ~1 µs) for hot validation paths; other calls are computed every time.
    `fn.cache_info()`/`fn.cache_clear()` are lru_cache's."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            if len(args) == 1 and not kwargs:  # the common case, kept fast
                a = args[0]
                if type(a) is str and len(a) <= max_len:  # type: ignore[arg-type]
                    return cached(a)  # type: ignore[call-arg]
                return fn(*args)  # type: ignore[call-arg]
            if not kwargs:
                total = 0
                for a in args:
                    t = type(a)
                    if t is str:
                        total += len(a)  # type: ignore[arg-type]
                    elif t not in _SMALL_ATOMS or (t is int and not -(2**64) < a < 2**64):  # type: ignore[operator]
                        break
                else:
                    if total <= max_len:
                        return cached(*args)  # type: ignore[arg-type]
            return fn(*args, **kwargs)

        wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
        wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return wrapper

    return decorate


class ClearingCache(Generic[K, V]):
    """A dictionary bounded by the callers' byte estimates that empties itself when full: lookups are
    plain `dict.get` (no lock, no reordering: for hot paths that look up thousands of entries per
    request), insertion clears everything once `max_bytes` would be exceeded. Suited to caches whose
    working set normally fits (then nothing is ever evicted) but whose keys an attacker controls.
    Safe under concurrent use: `put` and `clear` hold a lock around their bookkeeping; a `get` racing a
    clearing `put` sees either the old or the new dictionary."""

    __slots__ = ("max_bytes", "_data", "_bytes", "clears", "_lock")

    def __init__(self, max_bytes: int) -> None:
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        self.max_bytes = max_bytes
        self._data: dict[K, V] = {}
        self._bytes = 0
        self.clears = 0  # how often it emptied itself (for tests and benchmarks)
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def put(self, key: K, value: V, nbytes: int) -> None:
        nbytes += _ENTRY_OVERHEAD
        if nbytes > self.max_bytes // 4:
            return
        with self._lock:
            if self._bytes + nbytes > self.max_bytes:
                self._data = {}
                self._bytes = 0
                self.clears += 1
            self._data[key] = value
            self._bytes += nbytes

    def clear(self) -> None:
        with self._lock:
            self._data = {}
            self._bytes = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)
