"""JSON decoded with its small repeated objects shared: the live state's lists and watch events (issue 18).

    parts = SharedParts()
    obj = loads(text, max_depth, parts.hook)      # webhook.io.deepjson: json.loads(object_pairs_hook=...)

A device of a ResourceSlice is mostly small objects that thousands of devices repeat: attribute values
(`{"string": "A100"}`), capacities (`{"value": "80Gi"}`), the maps of them, counter consumptions. Decoded
plainly each is its own dict (≈ 3.7 KB per device of a partitioned GPU cluster); decoded with `hook`, equal
ones are one dict. Shared are:

- small objects: at most LEAF_KEYS entries, each value a string, a number, a boolean, null (the value's
  type is part of the key: `{"v": 1}`, `{"v": 1.0}` and `{"v": true}` stay apart) or an object;
- maps of objects (attributes, capacities, counters): up to MAP_KEYS entries, every value an object.

An object value must itself be shared (made by this hook and held by the memo), and is keyed by its
identity: the memo holds it, so an identity in a key always names a live object, and a shared object
holds nothing the memo's byte count leaves out (a whole object never hides behind a small shared one).
Anything else is a plain new dict: objects holding lists, larger ones, and whole objects or named items
(first key `metadata` or `name`: a device, a counter set). The memo is byte-bounded (emptied when full;
sharing starts anew).

The result's parts may be shared with other results: callers must never change them (the StateStore's
contract for the objects it is given already says so). Safe from several threads at once.
"""

from __future__ import annotations

import threading
from typing import Any

SHARED_BYTES = 8 << 20  # the memo's bound
LEAF_KEYS = 4  # entries of a shared object with a value that is not an object
MAP_KEYS = 64  # entries of a shared object whose values are all objects
# first keys of objects that are (nearly) never repeated: whole objects, devices, counter sets
_NAMED = ("metadata", "name")
_REF = object()  # in a key, before the identity of an object value (never a JSON value, never a type)
_LEAF_TYPES = frozenset((str, int, float, bool, type(None)))


class SharedParts:
    """The `object_pairs_hook` that shares equal small objects (see the module docstring)."""

    __slots__ = ("max_bytes", "clears", "_memo", "_shared", "_bytes", "_lock")

    def __init__(self, max_bytes: int = SHARED_BYTES) -> None:
        self.max_bytes = max_bytes
        self.clears = 0  # how often the memo emptied itself (for tests and benchmarks)
        self._memo: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._shared: set[int] = set()  # identities of the memo's objects (alive while it holds them)
        self._bytes = 0
        self._lock = threading.Lock()

    def hook(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if not pairs or len(pairs) > MAP_KEYS or pairs[0][0] in _NAMED:
            return dict(pairs)
        shared = self._shared
        typed: list[Any] = []
        small = len(pairs) <= LEAF_KEYS
        for k, v in pairs:
            t = type(v)
            if t is dict:
                if id(v) not in shared:  # only shared objects inside a shared one: what it holds is counted
                    return dict(pairs)
                typed += (k, _REF, id(v))
                continue
            if not small or t not in _LEAF_TYPES:
                return dict(pairs)
            if t is str:
                typed += (k, v)
            else:
                typed += (k, v, t)
        key = tuple(typed)
        hit = self._memo.get(key)
        if hit is None:
            hit = dict(pairs)
            self._put(key, hit, 200 + 150 * len(pairs) + sum(len(k) for k, _ in pairs))
        return hit

    def _put(self, key: tuple[Any, ...], value: dict[str, Any], nbytes: int) -> None:
        with self._lock:
            if self._bytes + nbytes > self.max_bytes:  # new containers: a reader sees the old or the new
                self._memo, self._shared, self._bytes = {}, set(), 0
                self.clears += 1
            self._memo[key] = value
            self._shared.add(id(value))
            self._bytes += nbytes
