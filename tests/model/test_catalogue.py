"""One catalogue declares every rule id: complete without importing the modules that emit them, each id
used by the code, rule functions attached only to declared ids of their scope."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from webhook.model.catalogue import RULES
from webhook.rules import registry

ROOT = Path(__file__).resolve().parents[2]


def test_every_id_is_known_in_a_process_that_loads_nothing_else() -> None:
    code = (
        "import sys; from webhook.model.catalogue import RULES; "
        "print(len(RULES), sorted(m for m in sys.modules if m.startswith('webhook.')))"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    count, modules = p.stdout.split(" ", 1)
    assert int(count) == len(RULES) >= 116
    assert "simulate" not in modules and "rules" not in modules and "validate" not in modules


def test_every_id_is_used_by_the_code() -> None:
    catalogue = ROOT / "webhook" / "model" / "catalogue.py"
    code = "\n".join(p.read_text() for p in (ROOT / "webhook").rglob("*.py") if p != catalogue)
    unused = [i for i in RULES if not re.search(rf"[\"']{re.escape(i)}[\"']", code)]
    assert not unused


def test_rule_functions_attach_to_declared_ids_of_their_scope() -> None:
    def fn(obj: object, ctx: object) -> list[object]:
        return []

    with pytest.raises(ValueError, match="not in webhook/model/catalogue.py"):
        registry.object_rule("claim.no-such-rule")(fn)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="declared as an inventory rule"):
        registry.object_rule("pool.completeness")(fn)  # type: ignore[arg-type]
    registry.object_rules("ResourceClaim")  # loads every rule module
    with pytest.raises(ValueError, match="has two functions"):
        registry.object_rule("claim.requests")(fn)  # type: ignore[arg-type]


def test_the_registry_loads_every_rule_module_itself() -> None:
    code = (
        "from webhook.rules.registry import object_rules, inventory_rules; "
        "print(len(object_rules('ResourceSlice')), len(inventory_rules()))"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    slice_rules, inventory = map(int, p.stdout.split())
    kinds = [r for r in RULES.values() if r.scope == "object" and "ResourceSlice" in r.kinds]
    assert 0 < slice_rules <= len(kinds)
    assert inventory == len([r for r in RULES.values() if r.scope == "inventory"])
