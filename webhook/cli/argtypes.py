"""argparse types shared by every command: each turns bad text into a usage error naming the value."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Sequence

_UNITS = {"": 1, "k": 1000, "ki": 1 << 10, "m": 1000**2, "mi": 1 << 20, "g": 1000**3, "gi": 1 << 30}


def whole_number(text: str) -> int:
    """A whole number >= 0 (steps, days; serve's workers and threads, where 0 is their default)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 0") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 0")
    return n


def workers(text: str) -> int:
    """A number of parallel workers >= 1; leaving the flag out means all usable cores (0 is no count of
    workers: refused rather than read as "all")."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1") from None
    if n < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of workers >= 1 (leave -j out to use every usable core)"
        )
    return n


def kinds(known: Callable[[], Sequence[str]]) -> Callable[[str], frozenset[str]]:
    """`Kind,Kind,...` where every kind is one of `known()` (spelled as Kubernetes spells it): an unknown
    one is a usage error that names the closest known kind, if any, rather than a flag that silently
    skips nothing."""

    def parse(text: str) -> frozenset[str]:
        names = [k.strip() for k in text.split(",") if k.strip()]  # "" (an unset variable): none
        choices = known() if names else ()
        for name in names:
            if name not in choices:
                raise argparse.ArgumentTypeError(_unknown_kind(name, choices))
        return frozenset(names)

    return parse


def _unknown_kind(name: str, choices: Sequence[str]) -> str:
    lower = {c.lower(): c for c in choices}
    match = lower.get(name.lower())
    if match is None:
        near = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.6)
        match = lower[near[0]] if near else None
    hint = f"did you mean {match}? " if match else ""
    return f"unknown kind {name!r}: {hint}--skip takes kinds draguard checks: {', '.join(choices)}"


def seconds(text: str) -> float:
    """A finite number of seconds >= 0 (NaN, inf and negatives are usage errors)."""
    from webhook.model.budget import check_seconds

    try:
        return check_seconds(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds >= 0") from None


def positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    """A finite number > 0 read by `kind` (float, int)."""

    def parse(text: str) -> float:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not v > 0 or v != v or v == float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r} must be a finite number > 0")
        return v

    return parse


def port(text: str) -> int:
    """A TCP port, 0 = any free port."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= n < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535, 0 = any free port)")
    return n


def byte_size(text: str) -> int:
    """`1048576`, `512Ki`, `256Mi`, `1Gi` (also `256MiB`, `256M`): a positive number of bytes."""
    t = text.strip().lower().removesuffix("b")
    digits = t.rstrip("kmgi")
    unit = _UNITS.get(t[len(digits) :])
    if not digits.isdigit() or unit is None or int(digits) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 256Mi, 1Gi, 1048576)")
    return int(digits) * unit
