"""Signal over noise on realistic demo folders (issue 8 §6): for each run of a fixture set's PROBLEMS.yaml
(`tests/fixtures/demos/`, or `tests/fixtures/realistic/` with `--fixtures realistic`), the lines
`draguard validate` prints, by severity, and how many are actionable (on an object or file with a listed
problem) — for this checkout and, with `--before DIR`, another one (e.g. /work/main).

    python3 bench/noise_bench.py [--fixtures demos|realistic] [--before DIR] [--markdown]

Text output is what a user reads; an info line sums up one rule (`... (and N more like it)`).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEMOS = ROOT / "tests" / "fixtures" / "demos"  # the fixture set measured (main() may switch it)
LINE = re.compile(
    r"^(?P<file>[^:]+):(?P<line>\d+): (?P<sev>error|warning|info|note) (?P<rule>\S+): .*?(?:\[(?P<label>[^\]]*)\])?(?: \(and \d+ more like it.*\))?$"
)


def problems() -> list[dict[str, object]]:
    return yaml.safe_load((DEMOS / "PROBLEMS.yaml").read_text())["problems"]  # type: ignore[no-any-return]


def runs() -> list[dict[str, list[str]]]:
    return yaml.safe_load((DEMOS / "PROBLEMS.yaml").read_text())["runs"]  # type: ignore[no-any-return]


def _file(path: str) -> str:
    return path.removeprefix("./")


def run(code: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    return subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", "validate", *args],
        cwd=DEMOS,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _object(label: str | None) -> str:
    """`ResourceClaimTemplate ns/name` -> `ResourceClaimTemplate name`."""
    if not label:
        return ""
    kind, _, name = label.partition(" ")
    return f"{kind} {name.rsplit('/', 1)[-1]}"


def classify(out: str, expect: list[str]) -> dict[str, int]:
    """Counts of the printed findings: lines by severity; of the errors and warnings, how many are
    actionable (on a planted problem, by a rule that points at it); planted problems found."""
    found = {"lines": 0, "error": 0, "warning": 0, "info": 0, "actionable": 0, "noise": 0}
    planted = problems()
    hits: set[str] = set()
    for text in out.splitlines():
        m = LINE.match(text)
        if m is None:
            continue
        found["lines"] += 1
        sev = "info" if m["sev"] in ("info", "note") else m["sev"]
        found[sev] += 1
        obj = _object(m["label"])
        mine = [
            str(p["id"])
            for p in planted
            if p["file"] == _file(m["file"])
            and (not p.get("object") or p["object"] == obj)
            and m["rule"] in p["rules"]
        ]
        hits.update(mine)
        if sev != "info":
            found["actionable" if mine else "noise"] += 1
    found["found"] = len([i for i in expect if i in hits])
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="another checkout to compare with (e.g. /work/main)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument(
        "--fixtures", default="demos", help="the fixture set under tests/fixtures (default: demos)"
    )
    args = ap.parse_args()
    global DEMOS
    DEMOS = ROOT / "tests" / "fixtures" / args.fixtures
    heads = [
        "run",
        "checkout",
        "lines",
        "errors",
        "warnings",
        "info lines",
        "actionable errors+warnings",
        "other errors+warnings",
        "planted problems found",
    ]
    rows = []
    for spec in runs():
        r, expect = spec["args"], spec["expect"]
        for name, code in (("before", args.before), ("after", ROOT)):
            if code is None:
                continue
            p = run(code, r)
            if p.returncode == 2:  # a flag the other checkout does not know
                rows.append([" ".join(r), name, "n/a (usage error)", "", "", "", "", "", ""])
                continue
            c = classify(p.stdout, expect)
            due = len(expect)
            rows.append(
                [
                    " ".join(r),
                    name,
                    c["lines"],
                    c["error"],
                    c["warning"],
                    c["info"],
                    c["actionable"],
                    c["noise"],
                    f"{c['found']}/{due}",
                ]
            )
    if args.markdown:
        print("| " + " | ".join(heads) + " |")
        print("|" + "---|" * len(heads))
        for row in rows:
            print("| " + " | ".join(str(x) for x in row) + " |")
    else:
        for row in [heads, *rows]:
            print("  ".join(str(x).ljust(12) for x in row))


if __name__ == "__main__":
    main()
