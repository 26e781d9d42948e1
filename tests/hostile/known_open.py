"""Hostile-corpus runs known to fail, with the class of failure they show (see FINDINGS.md): each must fail
exactly that way (a timeout may also pass) until fixed, and must then be removed from here. Regenerate
with `python3 bench/hostile_bench.py --known-open`."""

from __future__ import annotations

# none open on main; details in FINDINGS.md
KNOWN_OPEN: dict[tuple[str, str], str] = {}
