"""A selector's CEL runtime error in the operator's words: which device, which key (qualified with the
domain the expression looked it up in: `dra.net/rdma`), which selector (the expression on one line)."""

from __future__ import annotations

import re

from webhook.cel.compiler import Compiled, compile_selector
from webhook.cel.uses import Uses
from webhook.model.text import snippet

_NO_SUCH_KEY = re.compile(r"no such key: (.*?)(?:\. consider using CEL optional chaining.*)?$", re.S)


def _uses(expression: str) -> Uses | None:
    compiled = compile_selector(expression, list_attributes=True, consumable_capacity=True, check_cost=False)
    return compiled.uses if isinstance(compiled, Compiled) else None


def qualified_key(expression: str, key: str) -> str:
    """`domain/key` when the expression reads `key` from exactly one attribute or capacity domain with
    literal keys, else `key` itself."""
    uses = _uses(expression)
    if uses is None:
        return key
    domains = sorted({u.domain for u in uses.lookups if u.id == key})
    return f"{domains[0]}/{key}" if len(domains) == 1 else key


def runtime_error(who: str, index: int, device: str, detail: str, expression: str, phase: str) -> str:
    """`claim ns/c: CEL runtime error on device d: no such key `dra.net/rdma` (selector #0: `...`); ...`"""
    m = _NO_SUCH_KEY.match(detail)
    hint = ""
    if m is not None and phase == "runtime":
        key = m.group(1)
        uses = _uses(expression)
        field = next((u for u in uses.lookups if u.accessor == key), None) if uses is not None else None
        if field is not None and not any(u.id == key for u in uses.lookups):  # type: ignore[union-attr]
            ref = f'device.{field.map}["{field.domain}"].{field.id}'
            detail = f"no such key `{key}`"
            hint = f"; `{ref}` is the value itself, not a map: `.{key}` selects nothing, compare `{ref}` directly"
        else:
            detail = f"no such key `{qualified_key(expression, key)}`"
            hint = (
                "; the device does not publish it: guard the lookup with has(...) or optional chaining "
                f"(.?{key}.orValue(...)), or check the name"
            )
    return f"{who}: CEL {phase} error on device {device}: {detail} (selector #{index}: `{snippet(expression)}`){hint}"
