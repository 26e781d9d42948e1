"""Compare draguard's CEL compiler with upstream's (the `draoracle validate` development tool) on random and
hand-written selectors. A development script, not a test: it needs the oracle binary.

    python bench/cel_parity.py [-n 2000] [--seed 1] [--features all|none|...] [--record tests/cel/upstream_verdicts.jsonl]
                               [--file exprs.txt] [--show 40]

Prints how many expressions agree on the verdict (valid / error type) and on the exact message, and lists every
disagreement with both messages. --record writes the upstream verdicts as JSON lines for the CI test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cel.exprgen import ExprGen  # noqa: E402
from webhook.cel.compiler import CompileError, compile_selector  # noqa: E402
from webhook.model import names  # noqa: E402

ORACLE = Path("/work/shared/tools/upstream-allocator/draoracle")
GATES = {"all": (True, True), "none": (False, False), "all,-ListTypeAttributes": (False, True)}


def _run_batch(batch: list[str], features: str) -> list[tuple[str, str]]:
    docs = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": f"c{i}"},
            "spec": {"selectors": [{"cel": {"expression": e}}]},
        }
        for i, e in enumerate(batch)
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump_all(docs, f, width=1 << 30, default_style='"')
    res = subprocess.run(
        [str(ORACLE), "validate", f"--features={features}", f.name],
        capture_output=True,
        text=True,
        check=False,
    )
    Path(f.name).unlink()
    try:
        data = json.loads(res.stdout)
    except json.JSONDecodeError:
        if len(batch) == 1:  # upstream's compiler crashed on this expression
            return [("CRASH", res.stderr.strip().splitlines()[0] if res.stderr.strip() else "no output")]
        mid = len(batch) // 2
        return _run_batch(batch[:mid], features) + _run_batch(batch[mid:], features)
    by = {o["name"]: o["errors"] for o in data["objects"]}
    out: list[tuple[str, str]] = []
    for i in range(len(batch)):
        errs = [e for e in by.get(f"c{i}", []) if e["field"].startswith("spec.selectors")]
        out.append((errs[0]["type"], errs[0]["detail"]) if errs else ("", ""))
    return out


def oracle(exprs: list[str], features: str) -> list[tuple[str, str]]:
    """(error type or "", detail) per expression, one oracle process per batch of 500."""
    out: list[tuple[str, str]] = []
    for start in range(0, len(exprs), 500):
        out += _run_batch(exprs[start : start + 500], features)
    return out


def ours(expr: str, features: str) -> tuple[str, str]:
    lists, consumable = GATES.get(features, (False, True))
    r = compile_selector(expr, list_attributes=lists, consumable_capacity=consumable)
    if not isinstance(r, CompileError):
        return "", ""
    if r.kind == "TooLong":
        return "FieldValueTooLong", f"Too long: {r.message}"
    if r.kind == "Forbidden":
        return "FieldValueForbidden", f"Forbidden: {r.message}"
    return "FieldValueInvalid", f"Invalid value: {names.go_quote(expr)}: {r.message}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--features", default="all,-ListTypeAttributes")
    ap.add_argument("--file", help="expressions, one JSON string per line")
    ap.add_argument("--record", help="write upstream verdicts (JSON lines) here")
    ap.add_argument("--show", type=int, default=40)
    a = ap.parse_args()
    if a.file:
        exprs = [json.loads(line) for line in Path(a.file).read_text().splitlines() if line.strip()]
    else:
        gen = ExprGen(a.seed)
        exprs = list(dict.fromkeys(gen.expression() for _ in range(a.n)))
    up = oracle(exprs, a.features)
    verdict_diff, message_diff = [], []
    for e, (ut, ud) in zip(exprs, up, strict=True):
        ot, od = ours(e, a.features)
        if ut != ot:
            verdict_diff.append((e, ut, ud, ot, od))
        elif ud != od:
            message_diff.append((e, ut, ud, ot, od))
    n = len(exprs)
    valid = sum(1 for t, _ in up if not t)
    print(f"expressions: {n} (upstream valid: {valid}, invalid: {n - valid}), features={a.features}")
    print(
        f"verdict agreement: {n - len(verdict_diff)}/{n}; exact message agreement: {n - len(verdict_diff) - len(message_diff)}/{n}"
    )
    for title, rows in (("VERDICT DIFFERENCES", verdict_diff), ("MESSAGE DIFFERENCES", message_diff)):
        if rows:
            print(f"\n== {title} ({len(rows)})")
        for e, ut, ud, ot, od in rows[: a.show]:
            print(
                f"- {json.dumps(e)}\n    upstream: {ut or 'valid'} {ud!r}\n    ours:     {ot or 'valid'} {od!r}"
            )
    if a.record:
        with open(a.record, "w") as f:
            for e, (ut, ud) in zip(exprs, up, strict=True):
                f.write(
                    json.dumps({"expression": e, "features": a.features, "type": ut, "detail": ud}) + "\n"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
