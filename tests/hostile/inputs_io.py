"""Hostile inputs for reading and writing (files, parsers, output): generators, not committed files.

Each entry of `INPUTS` writes one hostile input into a directory and says what draguard must do with it:

    from tests.hostile.inputs_io import INPUTS, write_all
    for h in INPUTS.values():
        path = h.make(tmp_dir)          # writes the file (or FIFO, symlink, ...) and returns its path
        # run `draguard validate/simulate/strip path` and check h.expect / h.rule

`expect` is one of (`rule` and a part of the `message` say which finding)
- "input-error": exit 1, an error finding `rule` on that file (never a traceback, never internal.*);
- "warning": exit 0 or 1, a warning finding `rule` on that file;
- "skipped": inside a directory, a warning `input.skipped-file` on that path (never opened); named on the
  command line it is a usage error (exit 2);
- "clean": read without error (the point is time and memory, or output that stays one line per finding).

`big=True` marks the large ones (tens of MB; for the bench and the hostile corpus, not the unit tests):
`scale` shrinks them for tests. Every generator is deterministic.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HEAD = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: {name}\n  namespace: ns\n"
CLAIM_SPEC = "spec:\n  devices:\n    requests:\n    - name: r\n      exactly: {deviceClassName: gpu}\n"


@dataclass(frozen=True)
class Hostile:
    name: str
    make: Callable[[Path], Path]
    expect: str  # "input-error" | "warning" | "skipped" | "clean"
    rule: str | None
    message: str  # a part of the finding's field path or message ("" for clean ones)
    big: bool = False


def _write(d: Path, name: str, text: str | bytes) -> Path:
    p = d / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def billion_laughs(d: Path, levels: int = 9) -> Path:
    """Nine levels of ten aliases in a claim's opaque parameters: 10^9 strings once expanded."""
    lines = [
        HEAD.format(name="laughs") + CLAIM_SPEC.rstrip("\n"),
        "    config:\n    - opaque:\n        driver: gpu.example.com\n        parameters:",
        '          a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    ]
    lines += [f"          a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return _write(d, "billion-laughs.yaml", "\n".join(lines) + "\n")


def circular_alias(d: Path) -> Path:
    """An anchor that contains an alias to itself (a cycle once built)."""
    return _write(
        d,
        "circular-alias.yaml",
        HEAD.format(name="circle") + "spec: &s\n  devices:\n    config:\n"
        "    - opaque: {driver: gpu.example.com, parameters: *s}\n",
    )


def deep_flow_yaml(d: Path, depth: int = 100_000) -> Path:
    """100,000 nested flow sequences (libyaml's own composer overflows the C stack on this)."""
    return _write(d, "deep-flow.yaml", HEAD.format(name="deep") + "spec: " + "[" * depth + "]" * depth + "\n")


def deep_block_yaml(d: Path, depth: int = 10_001) -> Path:
    """10,001 nested block sequences, `- - - ... x` (the fast path's indentation stack; block mappings as
    deep would take 100 MB of indentation)."""
    return _write(d, "deep-block.yaml", HEAD.format(name="deep-block") + "spec:\n  " + "- " * depth + "x\n")


def deep_alias_yaml(d: Path) -> Path:
    """Each part nests 6,000 or 5,000 levels; an alias puts one inside the other (11,000 once expanded)."""
    inner = "&inner " + "[" * 6000 + "]" * 6000
    outer = "[" * 5000 + "*inner" + "]" * 5000
    return _write(d, "deep-alias.yaml", HEAD.format(name="deep-alias") + f"x: {inner}\ny: {outer}\n")


def deep_json(d: Path, depth: int = 100_000) -> Path:
    """100,000 nested JSON arrays."""
    text = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "deep"}, "x": '
    return _write(d, "deep.json", text + "[" * depth + "]" * depth + "}")


def big_int_json(d: Path, digits: int = 5000) -> Path:
    """A JSON number of 5,000 digits (Python's int-str limit is 4,300)."""
    text = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bigint"}, "spec": {"priority": 1'
    return _write(d, "big-int.json", text + "0" * digits + "}}")


def big_int_yaml(d: Path, digits: int = 5000) -> Path:
    """A plain 5,000-digit integer in YAML: go-yaml v2 reads it as a string (no int/float holds it)."""
    return _write(
        d,
        "big-int.yaml",
        HEAD.format(name="bigint")
        + CLAIM_SPEC
        + "    config:\n    - opaque:\n        driver: gpu.example.com\n"
        "        parameters: {n: 1" + "0" * digits + "}\n",
    )


# a Pod that uses DRA (one that does not is no DRA object: skipped, its findings not reported)
DRA_POD_SPEC = '"spec": {"resourceClaims": [{"name": "g", "resourceClaimName": "g"}], "containers": []}'


def lone_surrogate_json(d: Path) -> Path:
    """A JSON string escape of a lone surrogate (Go decodes it as U+FFFD)."""
    text = (
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "s", "annotations": {"a": "x\\ud800y"}}, '
        f"{DRA_POD_SPEC}}}"
    )
    return _write(d, "lone-surrogate.json", text)


def lone_surrogate_yaml(d: Path) -> Path:
    """The same escape in a double-quoted YAML scalar: libyaml (like go-yaml) rejects it."""
    return _write(d, "lone-surrogate.yaml", 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "x\\ud800"\n')


def nan_json(d: Path) -> Path:
    """`NaN` is not JSON (Python's json accepts it; Go does not): kubectl's decoder then reads the file as
    YAML, where `NaN` is the string "NaN" (for a Pod that uses no DRA: nothing to check)."""
    return _write(d, "nan.json", '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "n"}, "x": NaN}')


def duplicate_keys_json(d: Path) -> Path:
    """A repeated key in a JSON object, reported with its path as in YAML."""
    return _write(
        d,
        "duplicate-keys.json",
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "name": "b"}, ' + DRA_POD_SPEC + "}",
    )


def merge_not_a_map(d: Path) -> Path:
    """`<<: 1`: go-yaml v2 refuses a merge of anything but maps."""
    return _write(d, "merge-scalar.yaml", HEAD.format(name="merge") + "spec:\n  <<: 1\n")


def not_utf8(d: Path) -> Path:
    """Latin-1 bytes."""
    return _write(
        d, "latin1.yaml", ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: caf\xe9\n").encode("latin-1")
    )


def nul_bytes(d: Path) -> Path:
    """A NUL character inside a manifest (libyaml's reader rejects control characters)."""
    return _write(d, "nul.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\x00b\n")


def forged_output(d: Path) -> Path:
    """Names, keys and values with line breaks, ANSI escapes and bidi overrides: each finding must stay
    one line (and the JUnit/SARIF outputs valid)."""
    fake = "x\\nforged.yaml:1: error fake.rule: injected\\r\\u001b[2J\\u202e\\u0085\\u2028\\u0007\\ufffe"
    return _write(
        d,
        "forged.yaml",
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n"
        f'  name: "{fake}"\n  namespace: "{fake}"\n  labels: ' + "{" + f'"{fake}": "{fake}"' + "}\n"
        "spec:\n  devices:\n    requests:\n"
        f'    - name: "{fake}"\n      exactly:\n        deviceClassName: "{fake}"\n'
        f'        selectors:\n        - cel:\n            expression: "device.driver == \\"a\\" &&\\n\\n  {fake}"\n',
    )


def long_line_yaml(d: Path, size: int = 20_000_000) -> Path:
    """One 20 MB plain scalar on one line (a ConfigMap-style value)."""
    return _write(
        d,
        "long-line.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: l\ndata:\n  a: " + "x" * size + "\n",
    )


def long_flow_line_yaml(d: Path, size: int = 20_000_000) -> Path:
    """One 20 MB flow sequence on one line (10 million items)."""
    return _write(
        d,
        "long-flow-line.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: l\nx: [" + "1," * (size // 2) + "]\n",
    )


def many_flow_documents(d: Path, count: int = 16_000) -> Path:
    """16,000 flow-style documents in one file (each one outside the fast path)."""
    doc = "---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}}\n"
    return _write(d, "many-flow-docs.yaml", "".join(doc % i for i in range(count)))


def many_broken_documents(d: Path, count: int = 16_000) -> Path:
    """16,000 documents, every one a syntax error (error recovery must stay linear)."""
    return _write(d, "many-broken-docs.yaml", "".join("---\nkind: [x\n" for _ in range(count)))


def oversize(d: Path, size: int = 2_000_000) -> Path:
    """A file bigger than the limit the test passes (`--max-input-bytes 1Mi`)."""
    return _write(
        d,
        "oversize.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o\ndata:\n  a: " + "x" * size + "\n",
    )


def fifo(d: Path) -> Path:
    """A FIFO named like a manifest (opening it for reading would block forever)."""
    p = d / "pipe.yaml"
    os.mkfifo(p)
    return p


def unix_socket(d: Path) -> Path:
    """A bound Unix socket named like a manifest (the socket stays on disk after close)."""
    p = d / "socket.yaml"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(str(p))
    finally:
        s.close()
    return p


def device_link(d: Path) -> Path:
    """A symlink named like a manifest that points at /dev/zero (endless bytes)."""
    p = d / "zero.yaml"
    p.symlink_to("/dev/zero")
    return p


def symlink_loop(d: Path) -> Path:
    """Two symlinks pointing at each other."""
    (d / "loop-b.yaml").symlink_to("loop-a.yaml")
    p = d / "loop-a.yaml"
    p.symlink_to("loop-b.yaml")
    return p


def directory_loop(d: Path) -> Path:
    """A symlink to the directory's own parent: a walk that followed it would never end."""
    p = d / "up"
    p.symlink_to("..")
    return p


INPUTS: dict[str, Hostile] = {
    h.name: h
    for h in [
        Hostile("billion-laughs", billion_laughs, "input-error", "input.parse", "excessive aliasing"),
        Hostile("circular-alias", circular_alias, "input-error", "input.parse", "contains itself"),
        Hostile("deep-flow-yaml", deep_flow_yaml, "input-error", "input.parse", "nested deeper"),
        Hostile("deep-block-yaml", deep_block_yaml, "input-error", "input.parse", "nested deeper"),
        Hostile("deep-alias-yaml", deep_alias_yaml, "input-error", "input.parse", "nested deeper"),
        Hostile("deep-json", deep_json, "input-error", "input.parse", "nested deeper"),
        Hostile("big-int-json", big_int_json, "input-error", "input.parse", "4300 digits"),
        Hostile("big-int-yaml", big_int_yaml, "clean", None, ""),  # a string, as go-yaml v2 reads it
        Hostile("lone-surrogate-json", lone_surrogate_json, "warning", "input.invalid-unicode", "U+FFFD"),
        Hostile("lone-surrogate-yaml", lone_surrogate_yaml, "input-error", "input.parse", "escape"),
        Hostile("nan-json", nan_json, "clean", None, ""),  # read as YAML, as kubectl reads it
        Hostile(
            "duplicate-keys-json", duplicate_keys_json, "input-error", "input.duplicate-key", "metadata.name"
        ),
        Hostile("merge-not-a-map", merge_not_a_map, "input-error", "input.parse", "map merge"),
        Hostile("not-utf8", not_utf8, "input-error", "input.parse", "not UTF-8"),
        Hostile("nul-bytes", nul_bytes, "input-error", "input.parse", "not allowed"),
        Hostile("forged-output", forged_output, "clean", None, ""),  # findings, one line each
        Hostile("long-line", long_line_yaml, "clean", None, "", big=True),
        Hostile("long-flow-line", long_flow_line_yaml, "clean", None, "", big=True),
        Hostile("many-flow-documents", many_flow_documents, "clean", None, "", big=True),
        Hostile(
            "many-broken-documents", many_broken_documents, "input-error", "input.parse", "syntax", big=True
        ),
        Hostile(
            "oversize", oversize, "input-error", "input.too-large", "larger than"
        ),  # --max-input-bytes 1Mi
        Hostile("fifo", fifo, "skipped", "input.skipped-file", "FIFO"),
        Hostile("socket", unix_socket, "skipped", "input.skipped-file", "socket"),
        Hostile("device-link", device_link, "skipped", "input.skipped-file", "character device"),
        Hostile("symlink-loop", symlink_loop, "skipped", "input.skipped-file", "symbolic links"),
        Hostile("directory-loop", directory_loop, "clean", None, ""),  # symlinked directories: not followed
    ]
}


def write_all(d: Path, big: bool = False) -> dict[str, Path]:
    """Every input (the big ones too when `big`) written into `d`; name -> path."""
    d.mkdir(parents=True, exist_ok=True)
    return {h.name: h.make(d) for h in INPUTS.values() if big or not h.big}
