"""Parsers measured: speed (MB/s), peak RSS and kubectl's YAML semantics, per parser; then the hostile
input classes of tests/hostile/inputs_io.py through `draguard validate` (time and peak RSS each).

    python bench/parse_bench.py                 # parsers (20 MB corpora) + semantics + hostile classes
    python bench/parse_bench.py --mb 5          # smaller corpora
    python bench/parse_bench.py --only parsers|semantics|hostile|validate
    python bench/parse_bench.py --only validate --validate-mb 100   # 25/50/100 MB through validate

Each figure comes from its own subprocess (peak RSS is that process's, read with wait4), so parsers do not
share caches or memory. Optional parsers are measured when importable:
`pip install rapidyaml yaml-rs orjson` (they are not dependencies of draguard; see webhook/io/PARSERS.md).
Figures taken while other work runs on the machine are indicative only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

YAML_PARSERS = [
    "draguard-fast",
    "draguard-libyaml",
    "pyyaml-csafe",
    "yaml-rs",
    "rapidyaml+convert",
    "rapidyaml-tree",
]
JSON_PARSERS = ["draguard-json", "json-stdlib", "orjson"]


# -- corpora ----------------------------------------------------------------------------------------


def corpus_block(mb: float) -> str:
    """ResourceSlices as kubectl/PyYAML write them (the validate bench's generator)."""
    import validate_bench

    tmpl = validate_bench._node_template()
    n = max(1, int(mb * 1e6 / len(tmpl)))
    return "".join(tmpl.replace("NODEIDX", str(i)) for i in range(n))


def corpus_flow(mb: float) -> str:
    """Many small flow-style documents (every one outside the fast path)."""
    doc = "---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: c%d, labels: {app: x, tier: y}}, data: {a: '1'}}\n"
    return "".join(doc % i for i in range(int(mb * 1e6 / len(doc))))


def corpus_json(mb: float) -> str:
    """The block corpus's objects as one JSON List."""
    import yaml

    docs = list(yaml.load_all(corpus_block(mb), Loader=yaml.CSafeLoader))
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2)


# -- one parser on one file (runs in a subprocess) ----------------------------------------------------


def _ryml_convert(tree: Any, node: int) -> Any:
    import ryml

    from webhook.io.scalars import json_key, plain_scalar

    if tree.is_map(node):
        out: dict[str, Any] = {}
        ch = tree.first_child(node)
        while ch != ryml.NONE:
            k = bytes(tree.key(ch)).decode()
            if not tree.is_key_quoted(ch):
                k = plain_scalar(k)
                k = k if isinstance(k, str) else json_key(k)
            out[k] = _ryml_convert(tree, ch)
            ch = tree.next_sibling(ch)
        return out
    if tree.is_seq(node):
        items = []
        ch = tree.first_child(node)
        while ch != ryml.NONE:
            items.append(_ryml_convert(tree, ch))
            ch = tree.next_sibling(ch)
        return items
    if not tree.has_val(node) or tree.val(node) is None:
        return None
    text = bytes(tree.val(node)).decode()
    return text if tree.is_val_quoted(node) else plain_scalar(text)


def parse_with(parser: str, text: str) -> Any:
    """Everything the parser gives for the text (a list of documents)."""
    if parser == "draguard-fast":
        from webhook.io.fastyaml import load_documents

        return list(load_documents(text))
    if parser == "draguard-libyaml":
        from webhook.io.yamlload import load_documents

        return list(load_documents(text))
    if parser == "pyyaml-csafe":
        import yaml

        return list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    if parser == "yaml-rs":
        import yaml_rs

        found = yaml_rs.loads(text)  # one document: the document itself; several: a list of them
        return found if isinstance(found, list) and text.count("\n---") else [found]
    if parser in ("rapidyaml+convert", "rapidyaml-tree"):
        import ryml

        tree = ryml.parse_in_arena(text.encode())
        if parser == "rapidyaml-tree":
            return tree
        root = tree.root_id()
        if tree.is_stream(root):
            docs, ch = [], tree.first_child(root)
            while ch != ryml.NONE:
                docs.append(_ryml_convert(tree, ch))
                ch = tree.next_sibling(ch)
            return docs
        return [_ryml_convert(tree, root)]
    if parser == "draguard-json":
        from webhook.io.jsonload import load_json_documents

        return list(load_json_documents(text))
    if parser == "json-stdlib":
        return [json.loads(text)]
    if parser == "orjson":
        import orjson

        return [orjson.loads(text)]
    raise SystemExit(f"unknown parser {parser}")


def peak_rss_mib() -> float:
    """This process's peak resident set (VmHWM): its own address space only."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report_peak() -> None:
    """Print the peak RSS as the last line of stderr (`measure` reads it)."""
    sys.stderr.write(f"\nPEAK_RSS_MIB {peak_rss_mib():.1f}\n")


def run_one(parser: str, path: str) -> None:
    text = Path(path).read_text(encoding="utf-8")
    base = peak_rss_mib()
    t0 = time.perf_counter()
    docs = parse_with(parser, text)
    seconds = time.perf_counter() - t0
    n = len(docs) if isinstance(docs, list) else 1
    print(json.dumps({"seconds": seconds, "base_mib": base, "docs": n}))
    report_peak()


def run_cli(args: list[str]) -> None:
    """`draguard ARGS`, then the peak RSS on stderr."""
    from webhook.cli.main import main as draguard

    try:
        code = draguard(args)
    finally:
        report_peak()
    raise SystemExit(code)


def measure(cmd: list[str], timeout: float = 600, stdin: Any = None) -> tuple[float, float, str, int]:
    """(wall seconds, peak RSS MiB, stdout, exit code) of a subprocess that reports its own peak RSS."""
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryFile() as err:
        try:
            p = subprocess.run(
                cmd, stdout=subprocess.PIPE, stderr=err, stdin=stdin, cwd=ROOT, env=env, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return timeout, float("nan"), "timeout", -9
        wall = time.perf_counter() - t0
        err.seek(0)
        tail = err.read()[-200:].decode(errors="replace").split()
    rss = float(tail[-1]) if len(tail) >= 2 and tail[-2] == "PEAK_RSS_MIB" else float("nan")
    return wall, rss, p.stdout.decode(errors="replace"), p.returncode


def cli(*args: str) -> list[str]:
    """The command that runs `draguard ARGS` and reports its peak RSS."""
    return [sys.executable, __file__, "--cli", *args]


def _importable(parser: str) -> bool:
    mod = {
        "yaml-rs": "yaml_rs",
        "rapidyaml+convert": "ryml",
        "rapidyaml-tree": "ryml",
        "orjson": "orjson",
    }.get(parser)
    if mod is None:
        return True
    import importlib.util

    return importlib.util.find_spec(mod) is not None


def bench_parsers(mb: float, work: Path) -> None:
    print(f"== parsers: speed and peak RSS ({mb:g} MB corpora; each in its own process)")
    corpora = {"block": corpus_block(mb), "flow": corpus_flow(mb), "json": corpus_json(mb)}
    for name, text in corpora.items():
        path = work / f"corpus-{name}.txt"
        path.write_text(text, encoding="utf-8")
        size = len(text.encode()) / 1e6
        print(f"-- {name}: {size:.1f} MB")
        for parser in JSON_PARSERS if name == "json" else YAML_PARSERS:
            if not _importable(parser):
                print(f"   {parser:20} not installed")
                continue
            wall, rss, out, code = measure([sys.executable, __file__, "--run", parser, str(path)])
            if code != 0:
                print(f"   {parser:20} failed (exit {code})")
                continue
            r = json.loads(out)
            print(
                f"   {parser:20} {size / r['seconds']:7.1f} MB/s   peak RSS {rss:7.0f} MiB "
                f"(+{rss - r['base_mib']:5.0f} over the loaded text)   {r['docs']} documents"
            )


# -- semantics ---------------------------------------------------------------------------------------

PROBES: dict[str, tuple[str, str]] = {
    # name: (YAML, what kubectl (go-yaml v2 through sigs.k8s.io/yaml) gives)
    "y/on/yes are booleans": (
        "a: y\nb: on\nc: yes\nd: off\n",
        "{'a': True, 'b': True, 'c': True, 'd': False}",
    ),
    "0777 is octal": ("a: 0777\n", "{'a': 511}"),
    "1:30 is a string (no sexagesimal)": ("a: 1:30\n", "{'a': '1:30'}"),
    "timestamps stay strings": ("a: 2026-01-01\n", "{'a': '2026-01-01'}"),
    "!!str tag": ("a: !!str 123\n", "{'a': '123'}"),
    "merge key <<": ("b: &b {x: 1}\no:\n  <<: *b\n  z: 2\n", "{'b': {'x': 1}, 'o': {'x': 1, 'z': 2}}"),
    "y as a key is 'true'": ("y: 1\n", "{'true': 1}"),
}


def _probe_value(parser: str, text: str) -> str:
    docs = parse_with(parser, text)
    d = docs[0]
    data = getattr(d, "data", d)
    return repr(data)


def run_semantics(parser: str) -> None:
    out: dict[str, Any] = {}
    for name, (text, want) in PROBES.items():
        try:
            got = _probe_value(parser, text)
            out[name] = "yes" if got == want else f"no: {got}"
        except Exception as e:  # noqa: BLE001
            out[name] = f"no: {type(e).__name__}"
    try:
        docs = parse_with(parser, "a: 1\na: 2\n")
        d = docs[0]
        issues = getattr(d, "issues", None)
        out["duplicate keys reported"] = "yes" if issues else f"no: {getattr(d, 'data', d)!r}"
    except Exception as e:  # noqa: BLE001
        out["duplicate keys reported"] = f"yes (an exception: {type(e).__name__})"
    docs = parse_with(parser, "a: 1\n---\n# c\n\nkind: List\nitems:\n- b: 1\n- c: 2\n")
    has_lines = all(hasattr(d, "line") for d in docs) and getattr(docs[1], "item_lines", None) == [7, 8]
    out["document and List item lines"] = "yes" if has_lines else "no (no line numbers)"
    print(json.dumps(out))


HOSTILE_PROBES = {
    "billion laughs (9 levels)": "billion_laughs",
    "100,000-deep flow nesting": "deep_flow_yaml",
    "circular alias": "circular_alias",
}


def run_hostile_probe(parser: str, generator: str) -> None:
    """Parse a hostile file, then walk the result as a validator would (json.dumps)."""
    try:
        _hostile_probe(parser, generator)
    finally:
        report_peak()


def _hostile_probe(parser: str, generator: str) -> None:
    from tests.hostile import inputs_io

    d = Path(tempfile.mkdtemp())
    text = getattr(inputs_io, generator)(d).read_text()
    try:
        docs = parse_with(parser, text)
    except Exception as e:  # noqa: BLE001
        print(f"error {type(e).__name__}")
        return
    errors = [d for d in docs if type(d).__name__ == "YamlError"]
    if errors:
        print(f"error: {errors[0].message[:50]}")
        return
    try:
        json.dumps([getattr(x, "data", x) for x in docs]) if parser != "rapidyaml-tree" else None
    except (ValueError, RecursionError) as e:
        print(f"accepted; then {type(e).__name__} in the first walk")
        return
    print("accepted")


def bench_semantics() -> None:
    print("== kubectl YAML semantics per parser (go-yaml v2 through sigs.k8s.io/yaml is the reference)")
    for parser in YAML_PARSERS[:-1]:
        if not _importable(parser):
            print(f"-- {parser}: not installed")
            continue
        wall, rss, out, code = measure([sys.executable, __file__, "--semantics", parser], timeout=120)
        print(f"-- {parser}")
        for name, verdict in json.loads(out).items() if code == 0 else [("run", f"exit {code}")]:
            print(f"   {name:36} {verdict}")
        for name, generator in HOSTILE_PROBES.items():
            wall, rss, out, code = measure(
                [sys.executable, __file__, "--hostile-probe", parser, generator],
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
            what = (
                out.strip() if code == 0 else ("killed at 60 s" if code == -9 else f"crashed (exit {code})")
            )
            print(f"   {name:36} {what} ({wall:.1f} s, peak {rss:.0f} MiB)")


# -- hostile classes and large inputs through the CLI -------------------------------------------------


def bench_hostile(work: Path) -> None:
    from tests.hostile.inputs_io import INPUTS, many_flow_documents

    print("== hostile input classes through `draguard validate` (wall time, peak RSS)")
    d = work / "hostile"
    d.mkdir(exist_ok=True)
    rows = []
    for h in INPUTS.values():
        sub = d / h.name
        sub.mkdir(exist_ok=True)
        path = h.make(sub)
        if h.expect == "skipped" or path.is_symlink():
            path = sub  # the directory holding it (a special file named is a usage error at once)
        args = ["validate", "-j", "1", str(path)]
        if h.name == "oversize":
            args[1:1] = ["--max-input-bytes", "1Mi"]
        wall, rss, out, code = measure(cli(*args))
        size = sum(f.stat().st_size for f in sub.iterdir() if f.is_file() and not f.is_symlink())
        rows.append((h.name, size, wall, rss, code))
        print(f"   {h.name:24} {size / 1e6:8.2f} MB  {wall:6.2f} s  peak {rss:6.0f} MiB  exit {code}")
    big = d / "flow-3mib"
    big.mkdir(exist_ok=True)
    p = many_flow_documents(big, count=int(3 * 2**20 / 60))
    wall, rss, out, code = measure(cli("validate", str(p)))
    print(
        f"   {'3 MiB of flow docs':24} {p.stat().st_size / 1e6:8.2f} MB  {wall:6.2f} s  peak {rss:6.0f} MiB  exit {code}"
    )
    worst = max(rows, key=lambda r: r[2])
    print(
        f"   worst time: {worst[0]} {worst[2]:.2f} s; worst peak RSS: "
        f"{max(rows, key=lambda r: r[3])[0]} {max(r[3] for r in rows):.0f} MiB"
    )


def bench_validate(mbs: list[float], work: Path) -> None:
    print("== ordinary manifests through `draguard validate` (one file each; linear time and memory?)")
    for mb in mbs:
        path = work / f"slices-{mb:g}mb.yaml"
        path.write_text(corpus_block(mb), encoding="utf-8")
        size = path.stat().st_size / 1e6
        wall, rss, out, code = measure(
            cli("validate", "--summary", "-j", "1", str(path)),
            timeout=3600,
        )
        print(
            f"   {size:7.1f} MB  {wall:7.1f} s  {size / wall:5.2f} MB/s  peak RSS {rss:6.0f} MiB  "
            f"{out.strip().splitlines()[-1] if out.strip() else code}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=20, help="size of each parser corpus (default 20)")
    ap.add_argument("--only", choices=("parsers", "semantics", "hostile", "validate"))
    ap.add_argument("--validate-mb", type=float, default=100, help="largest validate run (default 100)")
    ap.add_argument("--run", nargs=2, metavar=("PARSER", "FILE"), help=argparse.SUPPRESS)
    ap.add_argument("--cli", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    ap.add_argument("--semantics", metavar="PARSER", help=argparse.SUPPRESS)
    ap.add_argument("--hostile-probe", nargs=2, metavar=("PARSER", "GENERATOR"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        return run_one(*args.run)
    if args.cli is not None:
        return run_cli(args.cli)
    if args.semantics:
        return run_semantics(args.semantics)
    if args.hostile_probe:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a parser that expands stops here
        return run_hostile_probe(*args.hostile_probe)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.only in (None, "parsers"):
            bench_parsers(args.mb, work)
        if args.only in (None, "semantics"):
            bench_semantics()
        if args.only in (None, "hostile"):
            bench_hostile(work)
        if args.only == "validate":
            top = args.validate_mb
            bench_validate([top / 4, top / 2, top], work)


if __name__ == "__main__":
    main()
