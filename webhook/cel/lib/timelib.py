"""CEL timestamps and durations (cel-go semantics): nanosecond precision, years 0001..9999, Go's
duration syntax and RFC 3339 text, the `get*` accessors with an optional time zone."""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache
from typing import Any

from webhook.cel.common.values import INT64_MAX, INT64_MIN, TYPE_NAMES, CelError, register_ordered

NS = 1_000_000_000
MIN_UNIX = -62135596800  # 0001-01-01T00:00:00Z
MAX_UNIX = 253402300799  # 9999-12-31T23:59:59Z
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


class Duration:
    """A signed duration in nanoseconds (Go time.Duration: int64)."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        if not INT64_MIN <= ns <= INT64_MAX:
            raise CelError("integer overflow")
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return type(other) is Duration and other.ns == self.ns

    def __lt__(self, other: Duration) -> bool:
        return self.ns < other.ns

    def __gt__(self, other: Duration) -> bool:
        return self.ns > other.ns

    def __hash__(self) -> int:
        return hash(self.ns)

    def is_zero_value(self) -> bool:
        return self.ns == 0

    def __str__(self) -> str:
        return _go_float_f(self.ns / NS) + "s"

    def __repr__(self) -> str:
        return f'duration("{self}")'


class Timestamp:
    """A point in time in nanoseconds since the epoch, with the UTC offset it was written with."""

    __slots__ = ("ns", "offset")

    def __init__(self, ns: int, offset: int = 0) -> None:
        if not MIN_UNIX <= ns // NS <= MAX_UNIX:
            raise CelError("timestamp overflow")
        self.ns = ns
        self.offset = offset  # seconds east of UTC, for string()

    def __eq__(self, other: object) -> bool:
        return type(other) is Timestamp and other.ns == self.ns

    def __lt__(self, other: Timestamp) -> bool:
        return self.ns < other.ns

    def __gt__(self, other: Timestamp) -> bool:
        return self.ns > other.ns

    def __hash__(self) -> int:
        return hash(self.ns)

    def is_zero_value(self) -> bool:
        return self.ns // NS == MIN_UNIX and self.ns % NS == 0

    def __str__(self) -> str:
        return format_timestamp(self)

    def __repr__(self) -> str:
        return f'timestamp("{self}")'


TYPE_NAMES[Duration] = "google.protobuf.Duration"
TYPE_NAMES[Timestamp] = "google.protobuf.Timestamp"
register_ordered(Duration)
register_ordered(Timestamp)


def _go_float_f(x: float) -> str:
    """Go strconv.FormatFloat(x, 'f', -1, 64): shortest digits, never an exponent."""
    s = repr(x)
    if "e" in s or "E" in s:
        from decimal import Decimal

        s = format(Decimal(s), "f")
    if s.endswith(".0"):
        s = s[:-2]
    return s


# ---- durations --------------------------------------------------------------------------------------

_UNITS = {"ns": 1, "us": 1000, "µs": 1000, "μs": 1000, "ms": 1_000_000, "s": NS, "m": 60 * NS, "h": 3600 * NS}
_DUR_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> Duration:
    """Go time.ParseDuration; raises CelError with cel-go's conversion error."""
    err = CelError("type conversion error from 'string' to 'google.protobuf.Duration'")
    s = text
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return Duration(0)
    if not s:
        raise err
    total = 0
    pos = 0
    while pos < len(s):
        m = _DUR_PART.match(s, pos)
        if m is None or m.group(1) in ("", "."):
            raise err
        num = m.group(1)
        whole, _, frac = num.partition(".")
        unit = _UNITS[m.group(2)]
        v = int(whole or "0") * unit
        if frac:
            v += int(frac) * unit // 10 ** len(frac)
        total += v
        if total > 1 << 63:
            raise err
        pos = m.end()
    if total > INT64_MAX and not (neg and total == 1 << 63):
        raise err
    return Duration(-total if neg else total)


def duration_get(d: Duration, what: str) -> int:
    ns = d.ns
    q = {"getHours": 3600 * NS, "getMinutes": 60 * NS, "getSeconds": NS, "getMilliseconds": 1_000_000}[what]
    v = abs(ns) // q
    return -v if ns < 0 else v


# ---- timestamps ------------------------------------------------------------------------------------

_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})")


def parse_timestamp(text: str) -> Timestamp:
    """Go time.Parse(time.RFC3339, text), years 0001..9999."""
    m = _RFC3339.fullmatch(text)
    err = CelError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
    if m is None:
        raise err
    y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
    try:
        day = _dt.datetime(y, mo, d, h, mi, sec, tzinfo=_dt.UTC)
    except ValueError:
        raise err from None
    offset = 0
    zone = m.group(8)
    if zone != "Z":
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 23 or om > 59:
            raise err
        offset = (oh * 3600 + om * 60) * (-1 if zone[0] == "-" else 1)
    frac = m.group(7) or ""
    nanos = int(frac.ljust(9, "0")) if frac else 0
    seconds = (day - _EPOCH) // _dt.timedelta(seconds=1) - offset
    if not MIN_UNIX <= seconds <= MAX_UNIX:
        raise CelError("timestamp overflow")
    return Timestamp(seconds * NS + nanos, offset)


def timestamp_of_seconds(seconds: int) -> Timestamp:
    if not MIN_UNIX <= seconds <= MAX_UNIX:
        raise CelError("timestamp overflow")
    return Timestamp(seconds * NS)


def _civil(ts: Timestamp, offset: int) -> tuple[_dt.datetime, int]:
    seconds, nanos = divmod(ts.ns, NS)
    return _EPOCH + _dt.timedelta(seconds=seconds + offset), nanos


def format_timestamp(ts: Timestamp) -> str:
    """Go t.Format(time.RFC3339Nano) in the timestamp's own offset."""
    day, nanos = _civil(ts, ts.offset)
    s = f"{day.year:04d}-{day.month:02d}-{day.day:02d}T{day.hour:02d}:{day.minute:02d}:{day.second:02d}"
    if nanos:
        s += "." + f"{nanos:09d}".rstrip("0")
    if ts.offset == 0:
        return s + "Z"
    sign = "-" if ts.offset < 0 else "+"
    o = abs(ts.offset)
    return s + f"{sign}{o // 3600:02d}:{o % 3600 // 60:02d}"


@lru_cache(maxsize=64)
def _zone(name: str) -> Any:
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except Exception:
        return None


def _offset_for(ts: Timestamp, tz: str) -> int:
    """Seconds east of UTC of `tz` (an IANA name or `±hh:mm`) at the instant `ts`."""
    if ":" not in tz:
        if tz in ("", "UTC"):
            return 0
        zone = _zone(tz) if len(tz) < 256 else None
        if zone is None:
            raise CelError(f"unknown time zone {tz}")
        seconds = ts.ns // NS
        if not -(10**11) < seconds < 10**11:
            return 0
        utc = _EPOCH + _dt.timedelta(seconds=seconds)
        off = utc.astimezone(zone).utcoffset()
        return int(off.total_seconds()) if off is not None else 0
    hours, _, minutes = tz.partition(":")
    try:
        hr, mn = int(hours), int(minutes)
    except ValueError:
        raise CelError(f'strconv.Atoi: parsing "{hours}": invalid syntax') from None
    offset = hr * 60 - mn if tz.startswith("-") else hr * 60 + mn
    return offset * 60


def timestamp_get(ts: Timestamp, what: str, tz: str | None = None) -> int:
    day, nanos = _civil(ts, 0 if tz is None else _offset_for(ts, tz))
    if what == "getFullYear":
        return day.year
    if what == "getMonth":
        return day.month - 1
    if what == "getDayOfYear":
        return day.timetuple().tm_yday - 1
    if what == "getDate":
        return day.day
    if what == "getDayOfMonth":
        return day.day - 1
    if what == "getDayOfWeek":
        return (day.weekday() + 1) % 7
    if what == "getHours":
        return day.hour
    if what == "getMinutes":
        return day.minute
    if what == "getSeconds":
        return day.second
    return nanos // 1_000_000  # getMilliseconds


def add_ts_dur(ts: Timestamp, d: Duration) -> Timestamp:
    return Timestamp(ts.ns + d.ns, ts.offset)


def sub_ts_ts(a: Timestamp, b: Timestamp) -> Duration:
    return Duration(a.ns - b.ns)
