"""ByteLRU / bounded_cache: memory bounded by bytes, LRU order, thread safety."""

from __future__ import annotations

import threading

from webhook.model.cache import ByteLRU, approx_size, bounded_cache


def test_evicts_least_recently_used_beyond_the_byte_bound() -> None:
    c: ByteLRU[str, str] = ByteLRU(max_bytes=4000)
    for i in range(10):
        c.put(f"k{i}", "v", 300)
    assert c.nbytes <= 4000
    assert c.get("k0") is None and c.get("k9") == "v"
    c.get("k5")  # touched: survives the next insertions
    for i in range(10, 13):
        c.put(f"k{i}", "v", 300)
    assert c.get("k5") == "v"


def test_an_entry_over_a_quarter_of_the_cache_is_not_stored() -> None:
    c: ByteLRU[str, str] = ByteLRU(max_bytes=4000)
    c.put("big", "x", 1000)
    assert c.get("big") is None and len(c) == 0


def test_bounded_cache_memoises_and_stays_within_its_bound() -> None:
    calls: list[str] = []

    @bounded_cache(max_bytes=64 << 10)
    def upper(s: str) -> str:
        calls.append(s)
        return s.upper()

    assert upper("a") == "A" and upper("a") == "A" and calls == ["a"]
    for i in range(5000):
        upper("x" * 200 + str(i))
    assert upper.cache.nbytes <= 64 << 10  # type: ignore[attr-defined]
    huge = "y" * (1 << 20)
    assert upper(huge) == huge.upper() and upper(huge) == huge.upper()
    assert calls.count(huge) == 2  # too big to keep


def test_none_results_are_cached_too() -> None:
    calls: list[int] = []

    @bounded_cache(max_bytes=1 << 16)
    def nothing(i: int) -> None:
        calls.append(i)

    nothing(1)
    nothing(1)
    assert calls == [1]


def test_concurrent_puts_keep_the_accounting_exact() -> None:
    c: ByteLRU[int, int] = ByteLRU(max_bytes=50_000)

    def work(base: int) -> None:
        for i in range(2000):
            c.put(base + i % 300, i, 100)
            c.get(base + (i * 7) % 300)

    threads = [threading.Thread(target=work, args=(t * 1000,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.nbytes == sum(n for _, n in c._data.values())
    assert c.nbytes <= 50_000


def test_approx_size_counts_nested_strings() -> None:
    assert approx_size({"a": ["x" * 1000]}) > 1000


def test_short_input_cache_caches_only_short_inputs() -> None:
    from webhook.model.cache import short_input_cache

    calls: list[str] = []

    @short_input_cache(maxsize=8, max_len=16)
    def upper(s: str, flag: bool = False) -> str:
        calls.append(s)
        return s.upper() + ("!" if flag else "")

    assert upper("abc") == "ABC" and upper("abc") == "ABC" and calls == ["abc"]
    assert upper("abc", True) == "ABC!" and len(calls) == 2  # flags are part of the key
    long = "x" * 1000
    assert upper(long) == long.upper() and upper(long) == long.upper()
    assert calls.count(long) == 2  # never cached: a long key would pin its memory
    assert upper.cache_info().currsize == 2  # type: ignore[attr-defined]
    for i in range(100):
        upper(f"k{i}")
    assert upper.cache_info().currsize == 8  # type: ignore[attr-defined]


def test_clearing_cache_stays_within_its_bound() -> None:
    from webhook.model.cache import ClearingCache

    c: ClearingCache[str, str] = ClearingCache(max_bytes=4000)
    c.put("a", "x", 100)
    assert c.get("a") == "x" and c.get("b") is None
    for i in range(100):
        c.put(f"k{i}", "v", 300)
        assert c.nbytes <= 4000
    assert c.clears > 0 and len(c) < 100
    c.put("huge", "x", 2000)  # over a quarter of the cache: never stored
    assert c.get("huge") is None
