"""webhook/server/memory.py in a process of its own (it changes the C allocator of the process it runs
in: never the test process's): the arena bound takes effect for threads started after it, and trimming
returns freed memory to the system."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")

# Eight threads each allocate and keep 4 MiB in blocks malloc serves from an arena (below its mmap
# threshold), each followed by a small block that stays: freeing the large ones leaves holes that glibc
# does not return by itself (only the top of a heap is). Every arena a thread uses appears in
# malloc_info's XML as a `<heap nr=...>`.
CHILD = r"""
import ctypes, ctypes.util, json, sys, threading
from webhook.server import memory

limited = memory.limit_arenas() if sys.argv[1] == "limit" else None
kept, pins = [], []
lock = threading.Lock()
start = threading.Barrier(8)

def allocate():
    start.wait()
    mine, pinned = [], []
    for _ in range(64):
        mine.append(bytearray(64 << 10))
        pinned.append(bytearray(1024))  # above pymalloc's 512 B: malloc's too
    with lock:
        kept.append(mine)
        pins.append(pinned)

threads = [threading.Thread(target=allocate) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()

libc = ctypes.CDLL(None)
libc.open_memstream.restype = ctypes.c_void_p
buf, size = ctypes.c_char_p(), ctypes.c_size_t()
stream = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
libc.malloc_info(0, ctypes.c_void_p(stream))
libc.fclose(ctypes.c_void_p(stream))
arenas = buf.value.decode().count("<heap nr=")

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

kept.clear()
before = rss()
trimmed = memory.release_free()
print(json.dumps({"limited": limited, "arenas": arenas, "trimmed": trimmed, "before": before, "after": rss()}))
"""


def run(mode: str) -> dict[str, int | bool | None]:
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, int | bool | None] = json.loads(done.stdout)
    return result


def test_the_arena_bound_holds_for_the_threads_started_after_it() -> None:
    limited, default = run("limit"), run("default")
    assert limited["limited"] is True
    assert limited["arenas"] <= 2, limited  # the main arena and at most one more
    assert default["arenas"] > 2, default  # without the bound the threads get arenas of their own


def test_trimming_returns_freed_arena_memory_to_the_system() -> None:
    result = run("default")
    assert result["trimmed"] is True
    before, after = result["before"], result["after"]
    assert isinstance(before, int) and isinstance(after, int)
    assert before - after >= 16 << 20, result  # most of the 32 MiB the threads freed
