"""The C allocator of the server processes (glibc's malloc; a no-op under any other libc).

A worker's state is a large number of small Python objects (pymalloc) plus the larger blocks malloc hands
out directly: list pages as read, their decoded dicts, the lists of a relist held beside the state they
replace. Two things keep freed malloc memory resident, measured with `bench/scale_bench.py --parts sync`
(1,000 nodes, 72,000 devices, one worker, 2026-12-07): glibc gives every thread that allocates its own
arena (up to 8 per core; a worker runs the watch, applier and request threads), and it returns free pages
to the system only from the top of the main heap. Limiting the arenas to `ARENAS` and trimming after a
whole list is published, A/B with `--parts sync,events,relists` (two runs each): the worker after sync
247.1 / 247.1 MiB RSS before, 232.8 / 232.5 after; the replica after three relists 346.2 / 340.0 MiB
before, 335.0 / 331.8 after (docs/benchmarks.md).

Process setup of `draguard serve`, like the collector tuning in run.py: `limit_arenas` is called once by
`serve()` before any thread exists (the test process never calls it: tests/server/test_server_memory.py
runs it in a child); `release_free` by the server's live-state observer after a list (it only gives
back memory nobody holds).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

M_ARENA_MAX = -8  # glibc's <malloc.h>
ARENAS = 2


def _libc_function(name: str) -> Callable[..., int] | None:
    """`name` of the C library this process runs on (the process's own symbols), None when absent."""
    try:
        function: Callable[..., int] = getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None
    return function


def limit_arenas(arenas: int = ARENAS) -> bool:
    """At most `arenas` malloc arenas in this process and the processes it forks; False where the C
    library has no `mallopt` (not glibc)."""
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False
    return bool(mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(arenas)))


def release_free() -> bool:
    """Return malloc's free pages to the system (glibc `malloc_trim(0)`: every arena, not only the top of
    the heap); False where the C library has no `malloc_trim`."""
    trim = _libc_function("malloc_trim")
    if trim is None:
        return False
    trim(ctypes.c_size_t(0))
    return True
