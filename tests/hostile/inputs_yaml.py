"""Hostile YAML/JSON (issues §3, §4): alias bombs and cycles, deep nesting, huge integers, lone
surrogates, duplicate JSON keys, binary and non-UTF-8 bytes, odd tags and keys. Each must be an input
error (or a valid object) in every command: never a traceback, a hang or gigabytes."""

from __future__ import annotations

import json
import random
from pathlib import Path
from string import Template

from tests.hostile.corpus import (
    INPUT_ERROR,
    INPUT_IO,
    case,
    input_error_everywhere,
    simulate,
    strip,
    validate,
)
from tests.hostile.k8s import write

CLAIM_HEAD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: {name}
  namespace: default
"""


PARAMS_HEAD = CLAIM_HEAD.format(name="c") + (
    "spec:\n  devices:\n    requests:\n    - name: r\n      exactly: {deviceClassName: gpu}\n"
    "    config:\n    - opaque:\n        driver: gpu.example.com\n        parameters:\n"
)


def params(body: str) -> str:
    """A valid claim whose opaque config parameters (free-form JSON to the API server) are `body`: the
    only thing wrong with the document is what `body` does to a reader."""
    return PARAMS_HEAD + "".join("          " + ln + "\n" for ln in body.rstrip("\n").split("\n"))


def _laughs(levels: int, fan: int) -> str:
    lines = ['  a0: &a0 "lol"']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * fan)
        lines.append(f"  a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def json_params(raw: str) -> str:
    """The claim of `params` as one JSON document, with `raw` (JSON text) as the parameters."""
    head = (
        '{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": '
        '"default"}, "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}], '
        '"config": [{"opaque": {"driver": "gpu.example.com", "parameters": '
    )
    return head + raw + "}}]}}}"


EVERYWHERE = input_error_everywhere()
ANYTHING_BUT_A_TRACEBACK = (validate(exit=(0, 1, 2)), simulate(exit=(0, 1, 2)), strip(exit=(0, 1, 2)))
VALIDATE_SIMULATE = (validate(exit=INPUT_ERROR), simulate(exit=INPUT_ERROR))
VALIDATE_ONLY = (validate(exit=INPUT_ERROR),)
STRIP_ANY = (validate(exit=INPUT_ERROR), simulate(exit=INPUT_ERROR), strip(exit=(0, 1, 2)))


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def billion_laughs(d: Path) -> list[str]:
    """9 levels × 10 aliases: 10^9 strings if expanded"""
    return [write(d, "bomb.yaml", params("laughs:\n" + _laughs(9, 10)))]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def billion_laughs_in_spec(d: Path) -> list[str]:
    """the bomb inside a field the rules walk (spec.devices.requests)"""
    text = CLAIM_HEAD.format(name="c") + "spec:\n  devices:\n    config:\n    - opaque:\n"
    text += "        driver: gpu.example.com\n        parameters:\n"
    text += "".join("          " + ln + "\n" for ln in _laughs(9, 10).splitlines())
    text += "    requests: *a9\n"
    return [write(d, "bomb.yaml", text)]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def laughs_wide(d: Path) -> list[str]:
    """4 levels × 200 aliases (1.6 × 10^9 leaves), a small file"""
    return [write(d, "bomb.yaml", params("laughs:\n" + _laughs(4, 200)))]


# the hostile documents are text (what they do to a reader is the subject), filled in by concatenation or a
# Template: their YAML flow maps keep their braces as written
MERGE = Template("  m$i: &m$i {<<: *m$prev, k$i: [*m$prev, *m$prev]}")


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def laughs_merge_keys(d: Path) -> list[str]:
    """merge keys (`<<: *a`) fanning out"""
    lines = ["  m0: &m0 {k0: lol}"]
    for i in range(1, 25):
        lines.append(MERGE.substitute(i=i, prev=i - 1))
    return [write(d, "bomb.yaml", params("laughs:\n" + "\n".join(lines)))]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def quadratic_alias_string(d: Path) -> list[str]:
    """one 100 KB anchored string aliased 30,000 times (3 GB if expanded)"""
    text = params(f'big: &b "{"x" * 100_000}"\n' + "l:\n" + "- *b\n" * 30_000)
    return [write(d, "bomb.yaml", text)]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def circular_alias_list(d: Path) -> list[str]:
    """a list that contains itself"""
    return [write(d, "cycle.yaml", CLAIM_HEAD.format(name="c") + "spec: &s {devices: {requests: [*s]}}\n")]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def circular_alias_map(d: Path) -> list[str]:
    """a map that contains itself, in metadata"""
    text = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: &m\n  name: c\n  namespace: default\n  labels: *m\n"
    return [write(d, "cycle.yaml", text)]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def circular_alias_merge(d: Path) -> list[str]:
    """a merge key pointing at its own map"""
    return [write(d, "cycle.yaml", CLAIM_HEAD.format(name="c") + "spec: &s\n  <<: *s\n  devices: {}\n")]


@case("yaml", validate(exit=0), strip(exit=0), area=INPUT_IO)
def aliases_legitimate(d: Path) -> list[str]:
    """control: ordinary anchors and aliases (100 reuses of a small map) stay accepted"""
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\ndata: &d {a: b}\n"
    text += "extra: [" + ", ".join(["*d"] * 100) + "]\n"
    return [write(d, "aliases.yaml", text)]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def deep_flow_100000(d: Path) -> list[str]:
    """100,000 nested flow sequences in YAML"""
    return [write(d, "deep.yaml", params("x: " + "[" * 100_000 + "]" * 100_000))]


@case("yaml", *VALIDATE_SIMULATE, area=INPUT_IO)
def deep_flow_maps_20000(d: Path) -> list[str]:
    """20,000 nested flow maps"""
    return [write(d, "deep.yaml", params("x: " + "{a: " * 20_000 + "1" + "}" * 20_000))]


@case("yaml", validate(exit=INPUT_ERROR + (0,)), strip(exit=INPUT_ERROR + (0,)), area=INPUT_IO)
def deep_block_1000(d: Path) -> list[str]:
    """1,000 levels of block indentation (1 MB of spaces)"""
    lines = ["x:"] + [" " * (i + 1) + "a:" for i in range(1000)]
    lines[-1] += " 1"
    return [write(d, "deep.yaml", params("\n".join(lines)))]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def deep_json_100000(d: Path) -> list[str]:
    """100,000-deep JSON arrays in a .json file"""
    return [write(d, "deep.json", json_params("[" * 100_000 + "]" * 100_000))]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def deep_json_objects_yaml_suffix(d: Path) -> list[str]:
    """100,000-deep JSON objects in a .yaml file starting with `{` (the JSON fast path)"""
    return [write(d, "deep.yaml", json_params('{"a": ' * 100_000 + "1" + "}" * 100_000))]


@case("yaml", *input_error_everywhere(stdin="deep.json", paths=("-",)), area=INPUT_IO)
def deep_json_on_stdin(d: Path) -> list[str]:
    """100,000-deep JSON on stdin"""
    return [write(d, "deep.json", "[" * 100_000 + "]" * 100_000)]


@case("yaml", *STRIP_ANY, area=INPUT_IO)
def huge_int_count(d: Path) -> list[str]:
    """an integer of 5,000 digits as a request count (YAML)"""
    text = CLAIM_HEAD.format(name="c") + "spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n"
    text += f"        deviceClassName: gpu\n        count: {'9' * 5000}\n"
    return [write(d, "bigint.yaml", text)]


@case("yaml", *EVERYWHERE, area=INPUT_IO)
def huge_int_json(d: Path) -> list[str]:
    """an integer of 5,000 digits in a JSON file (metadata.generation)"""
    return [
        write(
            d,
            "bigint.json",
            '{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"g","generation":'
            + "7" * 5000
            + '},"spec":{}}',
        )
    ]


@case("yaml", *STRIP_ANY, area=INPUT_IO)
def huge_int_attribute(d: Path) -> list[str]:
    """an integer of 4,301 digits as a device attribute"""
    text = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: gpu.example.com\n"
        "  nodeName: n\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  devices:\n  - name: d\n"
        "    attributes:\n      big: {int: " + "1" * 4301 + "}\n"
    )
    return [write(d, "bigint.yaml", text)]


@case("yaml", *ANYTHING_BUT_A_TRACEBACK, area=INPUT_IO)
def huge_int_hex(d: Path) -> list[str]:
    """a 20,000-digit hexadecimal YAML 1.1 integer (go-yaml: a string; never int(), never a traceback)"""
    return [write(d, "bigint.yaml", params(f"x: 0x{'f' * 20000}"))]


@case("yaml", *ANYTHING_BUT_A_TRACEBACK, area=INPUT_IO)
def huge_int_sexagesimal(d: Path) -> list[str]:
    """a YAML 1.1 base-60 integer with 3,000 groups (go-yaml: a string)"""
    return [write(d, "bigint.yaml", params("x: 1" + ":59" * 3000))]


@case("yaml", *STRIP_ANY, area=INPUT_IO)
def lone_surrogate_json_name(d: Path) -> list[str]:
    """a lone surrogate escape in a JSON object name"""
    return [
        write(
            d,
            "sur.json",
            '{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"a\\ud800b"},"spec":{}}',
        )
    ]


@case("yaml", *STRIP_ANY, area=INPUT_IO)
def lone_surrogate_yaml_escape(d: Path) -> list[str]:
    """a lone surrogate escape in a double-quoted YAML string"""
    return [write(d, "sur.yaml", CLAIM_HEAD.format(name='"x\\ud800"'))]


@case("yaml", *STRIP_ANY, area=INPUT_IO)
def lone_surrogate_json_key(d: Path) -> list[str]:
    """a lone surrogate in a label key"""
    return [
        write(
            d,
            "sur.json",
            '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"\\udfff":"x"}},"spec":{"resourceClaims":[{"name":"g","resourceClaimName":"g"}],"containers":[]}}',
        )
    ]


@case("yaml", validate(exit=(0, 1, 2)), simulate(exit=(0, 1, 2)), strip(exit=(0, 1, 2)), area=INPUT_IO)
def lone_surrogate_cel(d: Path) -> list[str]:
    """a lone surrogate inside a CEL selector (Go decodes it as U+FFFD: valid, maybe a warning)"""
    doc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "g"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == '\ud800'"}}]},
    }
    return [write(d, "sur.json", json.dumps(doc))]


DUP = validate(exit=1, rules=("input.duplicate-key",))


@case("yaml", DUP, strip(exit=(0, 1)), area=INPUT_IO)
def duplicate_key_json(d: Path) -> list[str]:
    """a duplicate key in a JSON object (reported like in YAML)"""
    return [
        write(
            d,
            "dup.json",
            '{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"a","name":"b"},"spec":{}}',
        )
    ]


@case("yaml", DUP, area=INPUT_IO)
def duplicate_key_json_top(d: Path) -> list[str]:
    """a duplicate `kind` at the top of a JSON object in a .yaml file"""
    return [
        write(
            d,
            "dup.yaml",
            '{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","kind":"ResourceClaim","metadata":{"name":"a"},"spec":{}}',
        )
    ]


@case("yaml", DUP, area=INPUT_IO)
def duplicate_key_yaml(d: Path) -> list[str]:
    """control: a duplicate key in YAML"""
    return [write(d, "dup.yaml", CLAIM_HEAD.format(name="c") + "  name: d\nspec: {}\n")]


@case("yaml", validate(exit=INPUT_ERROR, rules=("input.duplicate-key",)), area=INPUT_IO)
def duplicate_keys_50000_json(d: Path) -> list[str]:
    """50,000 duplicate label keys in JSON (reported, not quadratic)"""
    labels = ",".join('"k":"v"' for _ in range(50_000))
    return [
        write(
            d,
            "dup.json",
            '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{'
            + labels
            + '}},"spec":{"resourceClaims":[{"name":"g","resourceClaimName":"g"}],"containers":[]}}',
        )
    ]


@case("yaml", *VALIDATE_SIMULATE, area=INPUT_IO)
def binary_random(d: Path) -> list[str]:
    """64 KiB of random bytes named .yaml"""
    return [write(d, "bin.yaml", random.Random(6).randbytes(65536))]


@case("yaml", *VALIDATE_ONLY, area=INPUT_IO)
def latin1_file(d: Path) -> list[str]:
    """a Latin-1 encoded manifest (not UTF-8)"""
    return [
        write(
            d,
            "latin1.yaml",
            (CLAIM_HEAD.format(name="c") + "  annotations: {a: caf\xe9}\n").encode("latin-1"),
        )
    ]


@case("yaml", validate(exit=INPUT_ERROR + (0,)), strip(exit=INPUT_ERROR + (0,)), area=INPUT_IO)
def utf16_bom(d: Path) -> list[str]:
    """a UTF-16 manifest with its BOM"""
    return [write(d, "u16.yaml", CLAIM_HEAD.format(name="c").encode("utf-16"))]


@case("yaml", *VALIDATE_ONLY, area=INPUT_IO)
def nul_bytes(d: Path) -> list[str]:
    """NUL bytes inside a UTF-8 YAML file"""
    return [write(d, "nul.yaml", CLAIM_HEAD.format(name="c\x00\x00") + "\x00\n")]


@case("yaml", *VALIDATE_ONLY, area=INPUT_IO)
def overlong_utf8(d: Path) -> list[str]:
    """overlong UTF-8 sequences and stray continuation bytes"""
    return [write(d, "bad.yaml", CLAIM_HEAD.format(name="c").encode() + b"x: \xc0\xaf\x80\x80\xed\xa0\x80\n")]


@case("yaml", *ANYTHING_BUT_A_TRACEBACK, area=INPUT_IO)
def python_tag(d: Path) -> list[str]:
    """a `!!python/object/apply` tag (never constructed)"""
    return [write(d, "tag.yaml", params("x: !!python/object/apply:os.system ['true']"))]


VALID_OR_ERROR = (0, 1, 2)


@case("yaml", validate(exit=1), strip(exit=VALID_OR_ERROR), area=INPUT_IO)
def timestamp_name(d: Path) -> list[str]:
    """a YAML timestamp where a name (string) belongs"""
    return [write(d, "ts.yaml", CLAIM_HEAD.format(name="2001-12-14t21:59:43.10-05:00"))]


@case("yaml", validate(exit=1), strip(exit=VALID_OR_ERROR), area=INPUT_IO)
def binary_tag_driver(d: Path) -> list[str]:
    """a `!!binary` value as a driver name"""
    text = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: !!binary aGVsbG8=\n  nodeName: n\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  devices: []\n"
    return [write(d, "bin.yaml", text)]


@case("yaml", validate(exit=1), strip(exit=VALID_OR_ERROR), area=INPUT_IO)
def set_and_omap_tags(d: Path) -> list[str]:
    """`!!set` and `!!omap` where maps and lists belong"""
    text = CLAIM_HEAD.format(name="c") + "  labels: !!set {a, b}\nspec: !!omap [devices: {requests: []}]\n"
    return [write(d, "tags.yaml", text)]


@case("yaml", validate(exit=1), strip(exit=VALID_OR_ERROR), area=INPUT_IO)
def non_string_keys(d: Path) -> list[str]:
    """integer, null, bool (YAML 1.1 `on`) and float keys"""
    text = (
        CLAIM_HEAD.format(name="c")
        + "  labels: {1: a, null: b, on: c, 1.5: d}\nspec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, 3: x}}]}}\n"
    )
    return [write(d, "keys.yaml", text)]


@case("yaml", validate(exit=INPUT_ERROR), strip(exit=INPUT_ERROR), area=INPUT_IO)
def complex_keys(d: Path) -> list[str]:
    """a map and a list used as keys"""
    return [
        write(
            d,
            "keys.yaml",
            CLAIM_HEAD.format(name="c") + "  labels:\n    ? {a: 1}\n    : x\n    ? [1, 2]\n    : y\n",
        )
    ]


@case("yaml", validate(exit=1, rules=("schema.type",)), area=INPUT_IO)
def yaml11_booleans(d: Path) -> list[str]:
    """`on`/`y`/`no` where strings belong (kubectl's YAML 1.1 reads booleans)"""
    text = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: on\n  nodeName: y\n  pool: {name: no, generation: 1, resourceSliceCount: 1}\n  devices: []\n"
    return [write(d, "bools.yaml", text)]


@case("yaml", validate(exit=(0, 1)), area=INPUT_IO)
def float_specials(d: Path) -> list[str]:
    """`.inf`, `-.Inf`, `.NaN`, `1e400` as numbers in int fields"""
    text = CLAIM_HEAD.format(name="c") + "spec:\n  devices:\n    requests:\n"
    for i, v in enumerate((".inf", "-.Inf", ".NaN", "1e400", "-0.0")):
        text += (
            f"    - name: r{i}\n      exactly: "
            + "{deviceClassName: g, allocationMode: ExactCount, count: "
            + v
            + "}\n"
        )
    return [write(d, "floats.yaml", text)]


@case("yaml", validate(exit=(0, 1)), area=INPUT_IO)
def long_key_1mb(d: Path) -> list[str]:
    """a 1 MB label key"""
    return [write(d, "key.yaml", CLAIM_HEAD.format(name="c") + "  labels:\n    " + "k" * 1_000_000 + ": v\n")]


@case("yaml", validate(exit=(0, 1)), area=INPUT_IO)
def labels_100000(d: Path) -> list[str]:
    """100,000 labels in one object"""
    labels = "".join(f"    k{i}: v\n" for i in range(100_000))
    return [write(d, "labels.yaml", CLAIM_HEAD.format(name="c") + "  labels:\n" + labels)]


@case("yaml", validate(exit=0), simulate(exit=(0, 3)), strip(exit=0), area=INPUT_IO)
def empty_documents_175000(d: Path) -> list[str]:
    """175,000 empty documents (`---` lines, 700 KB): the CI size of empty-documents-700000"""
    return [write(d, "empty.yaml", "---\n" * 175_000)]


@case("yaml", validate(exit=0), simulate(exit=(0, 3)), strip(exit=0, timeout=30.0), area=INPUT_IO, large=True)
def empty_documents_700000(d: Path) -> list[str]:
    """700,000 empty documents (`---` lines, 2.8 MB): about 2.8 s of parsing; `simulate` may reach its
    deadline inside it on a busy machine (the parser stops between empty documents: exit 3, not checked);
    `strip` (no deadline) took 8.5 s on a slow 2-core machine, so its hang bound is 30 s, not the default 10"""
    return [write(d, "empty.yaml", "---\n" * 700_000)]


@case("yaml", *VALIDATE_SIMULATE, area=INPUT_IO)
def anchors_60000(d: Path) -> list[str]:
    """60,000 distinct anchors, each used once, then a syntax error at the end"""
    text = params("x:\n" + "".join(f"- &a{i} {i}\n- *a{i}\n" for i in range(60_000))) + "y: [\n"
    return [write(d, "anchors.yaml", text)]


@case("yaml", *VALIDATE_SIMULATE, area=INPUT_IO)
def unclosed_quote_3mb(d: Path) -> list[str]:
    """an unclosed quote opening a 3 MB scalar"""
    return [write(d, "quote.yaml", params('x: "' + "abc " * 750_000))]


@case("yaml", validate(exit=(0, 1)), strip(exit=(0, 1)), area=INPUT_IO)
def directives_and_markers(d: Path) -> list[str]:
    """`%YAML`/`%TAG` directives, `...` end markers, CRLF, a BOM, tabs in flow style"""
    text = "\ufeff%YAML 1.1\n%TAG !e! tag:example.com,2000:\r\n---\r\n" + CLAIM_HEAD.format(name="c").replace(
        "\n", "\r\n"
    )
    text += "spec: {devices:\t{requests: []}}\r\n...\r\n---\n" + CLAIM_HEAD.format(name="d") + "...\n"
    return [write(d, "dir.yaml", text)]


@case("yaml", validate(exit=1), strip(exit=(0, 1)), area=INPUT_IO)
def document_is_scalar_list(d: Path) -> list[str]:
    """documents that are a scalar, a list, a List with non-object items"""
    text = "42\n---\n- a\n- b\n---\napiVersion: v1\nkind: List\nitems: [1, null, [2], {apiVersion: v1}]\n"
    return [write(d, "odd.yaml", text)]
