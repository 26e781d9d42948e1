"""A selector's CEL runtime error in the operator's words: which device, which key (qualified with the
domain the expression looked it up in: `dra.net/rdma`), which selector (the expression on one line)."""

from __future__ import annotations

import re

from webhook.cel.compiler import Compiled, compile_selector
from webhook.cel.reads import analyse
from webhook.model.text import snippet

_NO_SUCH_KEY = re.compile(r"no such key: (.*?)(?:\. consider using CEL optional chaining.*)?$", re.S)


def qualified_key(expression: str, key: str) -> str:
    """`domain/key` when the expression reads `key` from exactly one attribute or capacity domain with
    literal keys, else `key` itself."""
    compiled = compile_selector(expression, list_attributes=True, consumable_capacity=True, check_cost=False)
    if not isinstance(compiled, Compiled):
        return key
    domains = sorted({r[1] for r in analyse(compiled.ast.expr).reads if len(r) == 3 and r[2] == key})
    return f"{domains[0]}/{key}" if len(domains) == 1 else key


def runtime_error(who: str, index: int, device: str, detail: str, expression: str, phase: str) -> str:
    """`claim ns/c: CEL runtime error on device d: no such key `dra.net/rdma` (selector #0: `...`); ...`"""
    m = _NO_SUCH_KEY.match(detail)
    hint = ""
    if m is not None and phase == "runtime":
        key = m.group(1)
        detail = f"no such key `{qualified_key(expression, key)}`"
        hint = (
            "; the device does not publish it: guard the lookup with has(...) or optional chaining "
            f"(.?{key}.orValue(...)), or check the name"
        )
    return f"{who}: CEL {phase} error on device {device}: {detail} (selector #{index}: `{snippet(expression)}`){hint}"
