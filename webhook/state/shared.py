"""Caches one cluster state shares across all its versions and all request threads.

Each is a pure function of immutable keys, so an entry filled while one version was current is right for
every version that has the same key:

- `match`: selector results per (selector signature, slice serial). A serial names one parsed version of
  one slice; a changed slice gets a new serial, so its old entries are never hit again: the writer drops
  them when it publishes the change (`MatchCache.forget`). Filled with single dictionary operations of
  values built before the put.
- `compiled`: the expressions the evaluator has compiled (the engine charges a compilation once).
- `counts`: per request shape, per node: how many devices could serve it (allocate's pruning; with the
  limit it was counted up to, a count below it is exact), the node's part of a failed request's
  explanation (the funnel of webhook.engine.explain) and its counter check, each stored with the node's
  pools stamp (a number the writer gives every new tuple of a node's pools, i.e. every change of its
  slices, its Node object or the allocation of one of its pools) and the DeviceTaintRules version.
  A reader whose version has other stamps recomputes that node's entry and replaces it (one dictionary
  assignment of a finished tuple); nothing else ever invalidates it. Also per node list, the sums of
  those explanation parts with the stamps they were summed at (`webhook.engine.explain.summed`): a
  finished tuple, replaced whole by a reader whose stamps differ (it re-adds only the changed nodes).
- `evaluator`: the CEL selector evaluator, used by one thread at a time (`SharedEvaluator`).

All are bounded by bytes; `ClearingCache.put`/`ByteLRU` take a lock around their bookkeeping.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from webhook.config.profile import Profile
from webhook.model.cache import ByteLRU, ClearingCache

COMPILED_BYTES = 4 << 20  # expression text remembered as compiled
MATCH_BYTES = 256 << 20  # selector results per (selectors, slice)
COUNT_BYTES = 32 << 20  # candidate counts per (request shape, node)


class SharedEvaluator:
    """A CEL selector evaluator shared by request threads. The evaluator's caches and cost counters are
    not made for concurrent use, so one evaluation runs at a time (CPU-bound under the GIL anyway):
    `matches` takes `lock` itself, and `last_cost` is the calling thread's own latest cost. The engine
    holds `lock` around a whole slice and calls `inner` directly (no per-device locking)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._local = threading.local()

    def matches(self, expression: str, device_key: Hashable, driver: str, device: dict[str, Any]) -> bool:
        with self._lock:
            try:
                return bool(self._inner.matches(expression, device_key, driver, device))
            finally:
                self._local.cost = self._inner.last_cost

    @property
    def last_cost(self) -> int:
        return getattr(self._local, "cost", 0)

    def check(self, expression: str) -> None:
        with self._lock:
            self._inner.check(expression)

    def forget(self, device_keys: Iterable[Hashable]) -> None:
        with self._lock:
            self._inner.forget(device_keys)

    @property
    def inner(self) -> Any:
        return self._inner

    @property
    def lock(self) -> threading.Lock:
        return self._lock

    def __getattr__(self, name: str) -> Any:  # counters for tests and benchmarks (evaluations, cost_used)
        return getattr(self._inner, name)


class MatchCache:
    """Selector results per slice version: serial -> {signature: result}. Readers look up with plain
    dictionary reads and fill under a lock (bookkeeping only); the writer drops the serials of replaced
    slices at publish (`forget`), so memory follows the live slices, not the history. Bounded by bytes
    as a whole (a reader of an old version may still fill a dropped serial: the bound takes it)."""

    __slots__ = ("max_bytes", "_data", "_sizes", "_bytes", "_lock", "clears")

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._data: dict[int, dict[Hashable, Any]] = {}
        self._sizes: dict[int, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.clears = 0

    def get(self, key: tuple[Hashable, int]) -> Any:
        per = self._data.get(key[1])
        return per.get(key[0]) if per is not None else None

    def put(self, key: tuple[Hashable, int], value: Any, nbytes: int) -> None:
        signature, serial = key
        nbytes += 100
        with self._lock:
            if self._bytes + nbytes > self.max_bytes:
                self._data = {}
                self._sizes = {}
                self._bytes = 0
                self.clears += 1
            self._data.setdefault(serial, {})[signature] = value
            self._sizes[serial] = self._sizes.get(serial, 0) + nbytes
            self._bytes += nbytes

    def forget(self, serials: Iterable[int]) -> None:
        with self._lock:
            for serial in serials:
                self._data.pop(serial, None)
                self._bytes -= self._sizes.pop(serial, 0)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return sum(len(per) for per in list(self._data.values()))


class SharedCaches:
    """The caches of one store (see the module docstring)."""

    __slots__ = ("profile", "match", "compiled", "counts", "_evaluator", "_lock")

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.match = MatchCache(MATCH_BYTES)
        self.compiled: ByteLRU[str, bool] = ByteLRU(COMPILED_BYTES)
        self.counts: ClearingCache[Hashable, Any] = ClearingCache(COUNT_BYTES)
        self._evaluator: SharedEvaluator | None = None
        self._lock = threading.Lock()

    @property
    def evaluator(self) -> SharedEvaluator:
        ev = self._evaluator
        if ev is None:
            with self._lock:
                if self._evaluator is None:
                    from webhook.cel.runtime import SelectorEvaluator

                    self._evaluator = SharedEvaluator(
                        SelectorEvaluator(
                            list_attributes=self.profile.enabled("DRAListTypeAttributes"),
                            consumable_capacity=self.profile.enabled("DRAConsumableCapacity"),
                        )
                    )
                ev = self._evaluator
        return ev

    def forget(self, serials: Sequence[int], device_keys: Sequence[Hashable]) -> None:
        """Drop what is kept for removed or replaced slice versions: selector results, and the
        evaluator's inputs of their devices (if it was ever used)."""
        if serials:
            self.match.forget(serials)
        if self._evaluator is not None and device_keys:
            self._evaluator.forget(device_keys)
