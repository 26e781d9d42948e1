"""Run the hostile corpus: build every input, run plain `validate` cases many files per process
(reading each file's findings from JSON output), everything else one process per run, and rerun on
its own any run whose batch or first attempt failed, so that each failure is one input's own."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from tests.hostile import harness
from tests.hostile.corpus import VALIDATE_BOUND, Case, Run
from tests.hostile.harness import OK, TIMEOUT, WRONG, GiB, Outcome
from tests.hostile.k8s import pod, uid, write

BATCH_CASES = 24  # cases per batched `validate`
BATCH_BYTES = 2 << 20  # input bytes per batched `validate`
BIG_INPUT = 256 << 10  # inputs larger than this get a `validate` process of their own
ALWAYS_ABSENT = ("internal.rule-crash", "please report it")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Result:
    case: Case
    run: Run
    status: str
    detail: str
    wall: float
    rss: int
    exit: int | None
    input_bytes: int
    batched: bool
    excerpt: str = ""

    @property
    def key(self) -> str:
        return f"{self.case.id} [{self.run.label()}]"


def _size(paths: Iterable[str]) -> int:
    """Bytes of regular files under the paths (iterative: some inputs are deeper than the stack)."""
    total = 0
    stack = [p for p in paths if p != "-"]
    while stack:
        p = stack.pop()
        try:
            if os.path.islink(p):
                continue
            if os.path.isdir(p):
                stack.extend(e.path for e in os.scandir(p))
            elif os.path.isfile(p):
                total += os.path.getsize(p)
        except OSError:
            continue
    return total


def load_factor() -> float:
    """How much to stretch a hang bound for load that is not the corpus's own: the 1-minute load
    average over twice the cores (the corpus itself runs 2 commands with their workers). 1 on a machine
    that runs only this suite, as CI's does; several when other jobs share the cores, so that their
    load is not read as a hang."""
    try:
        return max(1.0, os.getloadavg()[0] / (2 * (os.cpu_count() or 1)))
    except OSError:
        return 1.0


def _claim_names(path: str) -> list[str]:
    """Unallocated ResourceClaims (names) in a manifest file written by a builder (YAML or a JSON List)."""
    try:
        with open(path, encoding="utf-8") as f:
            docs = list(yaml.load_all(f, Loader=_Loader))
    except (OSError, ValueError, yaml.YAMLError):
        return []
    out = []
    for doc in docs:
        items = doc.get("items", [doc]) if isinstance(doc, dict) else []
        for o in items:
            if (
                isinstance(o, dict)
                and o.get("kind") == "ResourceClaim"
                and not (o.get("status") or {}).get("allocation")
            ):
                out.append(str((o.get("metadata") or {}).get("name")))
    return out


def remove_tree(path: Path) -> None:
    """Remove a work directory, however deep or locked its inputs are (shutil.rmtree recurses)."""
    if path.exists():
        subprocess.run(["chmod", "-R", "u+rwX", str(path)], capture_output=True)
        subprocess.run(["rm", "-rf", str(path)], capture_output=True)


def judge(run: Run, o: Outcome, stdout: str | None = None, exit: int | None = None) -> tuple[str, str]:
    """The run's class: the process-level one, else `wrong` when an expectation is not met."""
    if o.status != OK:
        return o.status, o.detail
    out = o.stdout if stdout is None else stdout
    code = o.exit if exit is None else exit
    problems = []
    if code not in run.exit:
        problems.append(f"exit {code}, expected {'/'.join(map(str, sorted(run.exit)))}")
    problems += [f"no {r} finding" for r in run.rules if r not in out]
    problems += [f"{t!r} not in output" for t in run.contains if t not in out and t not in o.stderr]
    absent = run.absent + (() if run.allow_internal else ALWAYS_ABSENT)
    problems += [f"{t!r} in output" for t in absent if t in out]
    if run.check is not None and not problems:
        p = run.check(o)
        if p:
            problems.append(p)
    return (WRONG, "; ".join(problems)) if problems else (OK, "")


class CorpusRun:
    """Builds the cases under `workdir` and runs them; `results` holds one Result per (case, run)."""

    def __init__(
        self,
        cases: list[Case],
        workdir: Path,
        jobs: int = 2,
        log: Callable[[str], None] | None = None,
        batch: bool = True,
    ) -> None:
        self.cases = cases
        self.workdir = workdir
        self.jobs = jobs
        self.log = log or (lambda s: None)
        self.batch = batch
        self.inputs: dict[str, list[str]] = {}
        self.sizes: dict[str, int] = {}
        self.results: list[Result] = []
        self.drop_dac_ok: bool | None = None
        self.broken: dict[str, str] = {}

    def build(self) -> None:
        for c in self.cases:
            d = self.workdir / c.id
            remove_tree(d)
            d.mkdir(parents=True)
            try:
                paths = [str(p) for p in c.build(d)]
            except Exception as e:  # noqa: BLE001 - a broken builder is reported as that case's failure
                self.broken[c.id] = f"input builder failed: {type(e).__name__}: {str(e)[:200]}"
                paths = []
            self.inputs[c.id] = paths
            self.sizes[c.id] = _size(paths)

    def _single(self, c: Case, r: Run) -> Result:
        if r.drop_dac and self.drop_dac_ok is None:
            self.drop_dac_ok = harness.can_drop_dac()
        stdin = None
        if r.stdin is not None:
            stdin = r.stdin if os.path.isabs(r.stdin) else str(self.workdir / c.id / r.stdin)
        try:
            o = harness.run(
                r.argv(self.inputs[c.id]),
                timeout=r.wall_bound * load_factor(),
                mem_bound=r.mem,
                cwd=self.workdir / c.id,
                stdin=stdin,
                drop_dac=r.drop_dac,
            )
        except OSError as e:  # the command line itself is impossible (E2BIG, say): the case is broken
            return Result(c, r, WRONG, f"could not start: {e}", 0.0, 0, None, self.sizes[c.id], False)
        status, detail = judge(r, o)
        res = Result(c, r, status, detail, o.wall, o.rss, o.exit, self.sizes[c.id], False, o.excerpt())
        self.log(f"{status:9} {o.wall:6.2f}s {o.rss >> 20:5d}MiB {res.key} {detail[:150]}")
        return res

    def _batch(self, group: list[tuple[Case, Run]]) -> list[tuple[Case, Run]]:
        """One `validate -o json` over the group's files; returns the members to rerun on their own."""
        paths = [p for c, _ in group for p in self.inputs[c.id]]
        o = harness.run(
            ["validate", "-o", "json", "--no-progress", *paths],
            timeout=VALIDATE_BOUND * load_factor(),
            mem_bound=GiB,
            cwd=self.workdir,
        )
        self.log(f"batch     {o.wall:6.2f}s {o.rss >> 20:5d}MiB {len(group)} cases {o.status} {o.detail}")
        if o.status != OK or o.exit not in (0, 1):
            return group
        try:
            objects = json.loads(o.stdout)["objects"]
        except (ValueError, KeyError, TypeError):
            return group
        by_case: dict[str, list[dict[str, object]]] = {c.id: [] for c, _ in group}
        for obj in objects:
            src = str(obj.get("source", ""))
            for c, _ in group:
                if any(src == p or src.startswith(p.rstrip("/") + "/") for p in self.inputs[c.id]):
                    by_case[c.id].append(obj)
                    break
        rerun = []
        for c, r in group:
            objs = by_case[c.id]
            code = 1 if any(v["severity"] == "error" for ob in objs for v in ob["violations"]) else 0  # type: ignore[attr-defined]
            status, detail = judge(r, o, stdout=json.dumps(objs), exit=code)
            if status != OK:
                rerun.append((c, r))
                continue
            self.results.append(Result(c, r, OK, "", o.wall, o.rss, code, self.sizes[c.id], True, ""))
        return rerun

    def _shared(self, group: list[tuple[Case, Run]]) -> list[tuple[Case, Run]]:
        """One process over the group's inputs, judged as a whole; returns the members to rerun alone."""
        r0 = group[0][1]
        paths = [p for c, _ in group for p in self.inputs[c.id]]
        try:
            o = harness.run(
                r0.argv(paths), timeout=r0.wall_bound * load_factor(), mem_bound=r0.mem, cwd=self.workdir
            )
        except OSError:
            return group
        status, detail = judge(r0, o)
        self.log(
            f"shared    {o.wall:6.2f}s {o.rss >> 20:5d}MiB {len(group)} cases [{r0.label()}] {status} {detail[:100]}"
        )
        if status != OK:
            return group
        self.results.extend(
            Result(c, r, OK, "", o.wall, o.rss, o.exit, self.sizes[c.id], True) for c, r in group
        )
        return []

    def _pod_batch(self, group: list[tuple[Case, Run]], n: int) -> list[tuple[Case, Run]]:
        """One `simulate -o json` over the group's inputs plus one Pod per case (naming the case's
        claims); each case's exit code is read from its Pod (feasible 0, infeasible 1, undecided 3).
        Returns the members to rerun on their own."""
        d = self.workdir / f"_pods{n}"
        d.mkdir(exist_ok=True)
        pods, owner = [], {}
        for c, _ in group:
            claims = [name for p in self.inputs[c.id] for name in _claim_names(p)]
            name = f"{uid(self.workdir / c.id)}-pod"
            owner[name] = c.id
            pods.append(pod(name, claims))
        pods_file = write(d, "pods.yaml", pods, flow=True)
        r0 = group[0][1]
        paths = [p for c, _ in group for p in self.inputs[c.id]] + [pods_file]
        # the inputs of many cases: a deadline (and hang bound) that grows with them
        shared = replace(r0, deadline=(r0.deadline or r0.budget or 0.0) + 0.1 * len(group))
        try:
            o = harness.run(
                ["simulate", "-o", "json", *shared.argv(paths)[1:]],
                timeout=shared.wall_bound * load_factor(),
                mem_bound=GiB,
                cwd=d,
            )
        except OSError:
            return group
        self.log(f"pods      {o.wall:6.2f}s {o.rss >> 20:5d}MiB {len(group)} cases {o.status} {o.detail}")
        if o.status != OK:
            return group
        try:
            doc = json.loads(o.stdout)
            verdicts = {str(p["pod"]).split("/", 1)[-1]: p for p in doc["pods"]}
            invalid = doc.get("invalid", [])
        except (ValueError, KeyError, TypeError, AttributeError):
            return group
        rerun = []
        for c, r in group:
            sim = next((v for k, v in verdicts.items() if owner.get(k) == c.id), None)
            if sim is None:
                rerun.append((c, r))
                continue
            code = {True: 0, False: 1, None: 3}[sim.get("feasible")]
            mine = [
                i for i in invalid if any(str(i.get("source", "")).startswith(p) for p in self.inputs[c.id])
            ]
            status, _ = judge(r, o, stdout=json.dumps([sim, mine]), exit=code)
            if status != OK:
                rerun.append((c, r))
                continue
            self.results.append(Result(c, r, OK, "", o.wall, o.rss, code, self.sizes[c.id], True))
        return rerun

    def execute(self) -> list[Result]:
        self.build()
        batched: list[tuple[Case, Run]] = []
        solo: list[tuple[Case, Run]] = []
        shared: dict[tuple[object, ...], list[tuple[Case, Run]]] = {}
        pod_batched: list[tuple[Case, Run]] = []
        for c in self.cases:
            for r in c.runs:
                if c.id in self.broken:
                    self.results.append(Result(c, r, WRONG, self.broken[c.id], 0.0, 0, None, 0, False))
                elif self.batch and r.batchable:
                    batched.append((c, r))
                elif self.batch and r.pod_batch and r.stdin is None and r.paths is None:
                    pod_batched.append((c, r))
                elif self.batch and r.share_key is not None:
                    shared.setdefault(r.share_key, []).append((c, r))
                else:
                    solo.append((c, r))
        groups: list[list[tuple[Case, Run]]] = []
        cur: list[tuple[Case, Run]] = []
        size = 0
        for c, r in sorted(batched, key=lambda cr: self.sizes[cr[0].id] > BIG_INPUT):
            big = self.sizes[c.id] > BIG_INPUT  # a large input runs on its own: a slow one never drags others
            if cur and (big or len(cur) >= BATCH_CASES or size + self.sizes[c.id] > BATCH_BYTES):
                groups.append(cur)
                cur, size = [], 0
            cur.append((c, r))
            size += self.sizes[c.id]
        if cur:
            groups.append(cur)
        shared_groups = [
            members[i : i + BATCH_CASES * 2]
            for members in shared.values()
            for i in range(0, len(members), BATCH_CASES * 2)
        ]
        with ThreadPoolExecutor(self.jobs) as pool:
            reruns = [m for g in pool.map(self._batch, groups) for m in g]
            reruns += [m for g in pool.map(self._shared, shared_groups) for m in g]
            pod_groups = [pod_batched[i : i + BATCH_CASES] for i in range(0, len(pod_batched), BATCH_CASES)]
            reruns += [m for g in pool.map(self._pod_batch, pod_groups, range(len(pod_groups))) for m in g]
            first = list(pool.map(lambda cr: self._single(*cr), solo + reruns))
        # a timeout seen while other runs shared the cores is confirmed alone before it counts
        final = []
        for res in first:
            if res.status == TIMEOUT:
                again = self._single(res.case, res.run)
                final.append(again if again.status != TIMEOUT else res)
            else:
                final.append(res)
        self.results.extend(final)
        order = {c.id: i for i, c in enumerate(self.cases)}
        self.results.sort(key=lambda x: (order[x.case.id], x.case.runs.index(x.run)))
        return self.results
