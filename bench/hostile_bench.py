"""Run the hostile corpus (tests/hostile, with its large variants) and print, per class, the worst wall
time and peak RSS with the input behind each, then the count of runs by result and every failure.

    python3 bench/hostile_bench.py                  # everything, large variants included
    python3 bench/hostile_bench.py --no-large -k cel # the CI corpus, cases whose id contains "cel"
    HOSTILE_TARGET=/path/to/other/checkout python3 bench/hostile_bench.py   # run another tree's draguard

Every run is a real `draguard` subprocess under an address-space guard; times are wall clock on this
machine (indicative only when other work shares the cores)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hostile import corpus  # noqa: E402
from tests.hostile.harness import RESULTS, MiB, target_root  # noqa: E402
from tests.hostile.runner import CorpusRun, Result, remove_tree  # noqa: E402


def _fmt_size(n: int) -> str:
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{n / 1024:.0f} KiB"


def report(results: list[Result], out: object = sys.stdout) -> None:
    w = out.write  # type: ignore[attr-defined]
    by_cls: dict[str, list[Result]] = {}
    for r in results:
        by_cls.setdefault(r.case.cls, []).append(r)
    w(f"{'class':10} {'cases':>5} {'runs':>5}  {'worst wall':>10}  input (command)\n")
    w(f"{'':10} {'':>5} {'':>5}  {'peak RSS':>10}  input (command)\n")
    for cls, rs in sorted(by_cls.items()):
        t = max(rs, key=lambda r: r.wall)
        m = max(rs, key=lambda r: r.rss)
        ncases = len({r.case.id for r in rs})
        w(
            f"{cls:10} {ncases:5d} {len(rs):5d}  {t.wall:9.2f}s  {t.case.id} [{t.run.label()}]"
            f"{' (batched)' if t.batched else ''} ({_fmt_size(t.input_bytes)})\n"
        )
        w(
            f"{'':10} {'':5} {'':5}  {m.rss / MiB:7.0f}MiB  {m.case.id} [{m.run.label()}]"
            f"{' (batched)' if m.batched else ''} ({_fmt_size(m.input_bytes)})\n"
        )
    counts = Counter(r.status for r in results)
    w(
        "\nresults: " + ", ".join(f"{k} {counts.get(k, 0)}" for k in RESULTS) + f" (of {len(results)} runs, "
        f"{len({r.case.id for r in results})} inputs)\n"
    )
    bad = [r for r in results if r.status != "ok"]
    if bad:
        w("\nfailures:\n")
        for r in bad:
            w(
                f"  {r.status:9} {r.wall:6.2f}s {r.rss / MiB:6.0f}MiB  {r.case.id} [{r.run.label()}] area={r.case.area}\n"
            )
            w(f"            {r.detail}\n")
            if r.status in ("traceback", "wrong") and r.excerpt:
                ex = r.excerpt.replace("\n", "\n              ")
                w(f"              {ex[:600]}\n")


def records(results: list[Result]) -> list[dict[str, Any]]:
    return [
        {
            "case": r.case.id,
            "class": r.case.cls,
            "area": r.case.area,
            "run": r.run.label(),
            "status": r.status,
            "detail": r.detail,
            "wall": round(r.wall, 3),
            "rss": r.rss,
            "exit": r.exit,
            "input_bytes": r.input_bytes,
            "batched": r.batched,
            "excerpt": r.excerpt,
        }
        for r in results
    ]


def markdown(recs: list[dict[str, Any]], title: str) -> str:
    """The failures as a FINDINGS.md section: one row per failing run, grouped by area."""
    bad = [r for r in recs if r["status"] != "ok"]
    counts = Counter(r["status"] for r in recs)
    out = [
        f"### {title}",
        "",
        ", ".join(f"{k} {counts.get(k, 0)}" for k in RESULTS) + f" (of {len(recs)} runs)",
        "",
    ]
    for area in sorted({r["area"] for r in bad}):
        rows = [r for r in bad if r["area"] == area]
        out += [
            f"#### {area} ({len(rows)})",
            "",
            "| input | command | result | what happened |",
            "|---|---|---|---|",
        ]
        for r in rows:
            what = r["detail"]
            lines = r["excerpt"].strip().splitlines()
            if lines and (r["status"] == "traceback" or "Error" in lines[-1]):
                what += " — " + lines[-1].strip()[:160]
            what = what.replace("|", "\\|").replace("\n", " ")[:300]
            out.append(
                f"| `{r['case']}` | `{r['run']}` | {r['status']} ({r['wall']:.1f} s, {r['rss'] >> 20} MiB) | {what} |"
            )
        out.append("")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-large", action="store_true", help="only the CI corpus")
    ap.add_argument("--only-large", action="store_true", help="only the large variants")
    ap.add_argument("-k", default="", help="only cases whose id contains this text (comma: any of)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("--no-batch", action="store_true", help="one process per run, no batching")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each run as it ends")
    ap.add_argument("--json", metavar="FILE", help="also write every result as JSON")
    ap.add_argument("--markdown", metavar="FILE", help="also write the failures as a FINDINGS.md section")
    ap.add_argument(
        "--from-json", metavar="FILE", help="print --markdown of an earlier --json run, run nothing"
    )
    ap.add_argument(
        "--known-open", action="store_true", help="with --from-json: its failures as known_open.py"
    )
    args = ap.parse_args(argv)
    if args.from_json:
        recs = json.loads(Path(args.from_json).read_text())
        if args.known_open:
            sys.stdout.write("KNOWN_OPEN: dict[tuple[str, str], str] = {\n")
            for r in recs:
                if r["status"] != "ok":
                    sys.stdout.write(f"    ({r['case']!r}, {r['run']!r}): {r['status']!r},\n")
            sys.stdout.write("}\n")
        else:
            sys.stdout.write(markdown(recs, args.from_json))
        return 0
    cases = corpus.load(large=not args.no_large)
    if args.only_large:
        cases = [c for c in cases if c.large]
    if args.k:
        keys = args.k.split(",")
        cases = [c for c in cases if any(k in c.id for k in keys)]
    print(
        f"hostile corpus: {len(cases)} inputs, {sum(len(c.runs) for c in cases)} runs, target {target_root()}"
    )
    start = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="hostile-bench-"))
    try:
        run = CorpusRun(
            cases,
            tmp,
            jobs=args.jobs,
            log=(lambda s: print(s, flush=True)) if args.verbose else None,
            batch=not args.no_batch,
        )
        results = run.execute()
    finally:
        remove_tree(tmp)
    print(f"ran in {time.monotonic() - start:.1f} s wall ({args.jobs} at once)\n")
    report(results)
    if args.markdown:
        Path(args.markdown).write_text(markdown(records(results), f"{target_root()} ({len(results)} runs)"))
    if args.json:
        Path(args.json).write_text(json.dumps(records(results), indent=1))
    return 0 if all(r.status == "ok" for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
