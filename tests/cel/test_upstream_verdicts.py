"""compile_selector agrees with upstream's DRA CEL compiler on every recorded expression: the same verdict
(valid, Invalid / Forbidden / TooLong) and the same message, byte for byte. The table was recorded from
upstream's compiler (see its first line) with bench/cel_parity.py --record."""

import json
from pathlib import Path

import pytest

from webhook.cel.compiler import CompileError, compile_selector
from webhook.model import names

TABLE = Path(__file__).with_name("upstream_verdicts.jsonl")
GATES = {"all": (True, True), "none": (False, False), "all,-ListTypeAttributes": (False, True)}


def _rows() -> list[dict[str, str]]:
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    meta = json.loads(lines[0])["_meta"]
    rows = [json.loads(line) for line in lines[1:]]
    assert len(rows) == meta["count"]
    return rows


def _ours(expr: str, features: str) -> tuple[str, str]:
    lists, consumable = GATES[features]
    r = compile_selector(expr, list_attributes=lists, consumable_capacity=consumable)
    if not isinstance(r, CompileError):
        return "", ""
    if r.kind == "TooLong":
        return "FieldValueTooLong", f"Too long: {r.message}"
    if r.kind == "Forbidden":
        return "FieldValueForbidden", f"Forbidden: {r.message}"
    return "FieldValueInvalid", f"Invalid value: {names.go_quote(expr)}: {r.message}"


def test_table_covers_both_verdicts_and_every_gate_combination() -> None:
    rows = _rows()
    assert len(rows) >= 2000
    assert {r["features"] for r in rows} == set(GATES)
    kinds = {r["type"] for r in rows}
    assert {"", "FieldValueInvalid", "FieldValueForbidden", "FieldValueTooLong"} <= kinds


@pytest.mark.parametrize("chunk", range(8))
def test_same_verdict_and_message_as_upstream(chunk: int) -> None:
    rows = _rows()[chunk::8]
    diffs = []
    for r in rows:
        got = _ours(r["expression"], r["features"])
        if got != (r["type"], r["detail"]):
            diffs.append((r["expression"], r["features"], (r["type"], r["detail"]), got))
    assert not diffs, diffs[:5]
