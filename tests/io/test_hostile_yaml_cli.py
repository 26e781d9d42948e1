"""YAML that expands or overflows, through the real CLI (issue 6 findings `yaml.quadratic-alias-string` and
`yaml.huge-int-hex`): an alias-expanded string is an input error in every command before anything
expands it; hex, octal and binary integers beyond 64 bits are strings, as go-yaml v2 reads them."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.io.test_hostile_io import draguard

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
  namespace: default
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu}
    config:
    - opaque:
        driver: gpu.example.com
        parameters:
"""


def _claim(tmp_path: Path, body: str, name: str = "claim.yaml") -> Path:
    p = tmp_path / name
    p.write_text(CLAIM + "".join(f"          {line}\n" for line in body.splitlines()))
    return p


def test_one_string_aliased_30000_times_is_an_input_error_everywhere(tmp_path: Path) -> None:
    """537 KB of YAML that is 3 GB of JSON: was 2 GiB and a MemoryError in the 10 KiB size check
    (validate), killed (simulate, strip)."""
    bomb = _claim(tmp_path, f'big: &b "{"x" * 100_000}"\nl:\n' + "- *b\n" * 30_000)
    want = f"{bomb}:47: error input.parse: aliases expand this document to more than 3,145,728 bytes"
    for command in ("validate", "simulate", "strip"):
        p = draguard(command, str(bomb))
        assert p.returncode == 1, (command, p.stdout[-2000:], p.stderr[-2000:])
        assert want in p.stdout + p.stderr, (command, p.stdout[-2000:], p.stderr[-2000:])
        assert "internal." not in p.stdout + p.stderr


def test_aliases_within_the_bound_are_checked_without_expanding(tmp_path: Path) -> None:
    """Within the bound the document is read (aliases share one string); the 10 KiB size check of the
    parameters measures them without writing them out."""
    ok = _claim(tmp_path, f'big: &b "{"x" * 100_000}"\nl:\n' + "- *b\n" * 20)
    p = draguard("validate", str(ok))
    assert p.returncode == 1, p.stdout + p.stderr
    assert (
        "error claim.config: spec.devices.config[0].opaque.parameters: Too long: must have at most 10240 bytes"
        in (p.stdout)
    )
    p = draguard("strip", str(ok))
    assert p.returncode == 0, p.stderr
    (doc,) = yaml.safe_load_all(p.stdout)
    assert doc["spec"]["devices"]["config"][0]["opaque"]["parameters"]["l"] == ["x" * 100_000] * 20


def test_strip_bounds_what_it_writes_on_its_own(tmp_path: Path) -> None:
    """Control characters are one character to the reader's count and six bytes of JSON (`\\u0001`): a
    document the reader accepts may still expand past the bound when written out; strip does not write
    it (an error naming the document), validate measures it as usual."""
    s = "\\x01" * 100_000  # 400 KB of YAML, 100,000 characters, 600 KB of JSON
    p_ = _claim(tmp_path, f'big: &b "{s}"\nl: [{", ".join(["*b"] * 10)}]\n')
    p = draguard("strip", str(p_))
    assert p.returncode == 1, p.stderr
    assert f"{p_}:1: error input.parse: aliases expand this document to more than 3,145,728 bytes" in p.stderr
    assert p.stdout == ""
    p = draguard("validate", str(p_))
    assert p.returncode == 1 and "Too long: must have at most 10240 bytes" in p.stdout, p.stdout + p.stderr


HUGE = {
    "hex": "0x" + "f" * 20_000,
    "hex-negative": "-0x" + "F" * 20_000,
    "hex-4335-digits": "0x" + "f" * 3_600,  # ~4,335 decimal digits: the old int broke str()
    "octal": "0o" + "7" * 30_000,
    "binary": "0b" + "1_" * 20_000,
    "base60": "1" + ":59" * 3_000,
}


def test_integers_beyond_64_bits_are_strings_in_every_command(tmp_path: Path) -> None:
    """go-yaml v2 makes them strings (ParseInt and ParseUint fail, not float-shaped): never an int that
    str() refuses (was internal.rule-crash in validate and simulate, a traceback in strip)."""
    body = "\n".join(f"{k}: {v}" for k, v in HUGE.items())
    path = _claim(tmp_path, body)
    for command in ("validate", "simulate"):
        p = draguard(command, str(path))
        assert p.returncode == 1, (command, p.stdout[-2000:], p.stderr[-2000:])
        assert "Too long: must have at most 10240 bytes" in p.stdout  # 125 KB of strings as JSON
        assert "internal." not in p.stdout + p.stderr
    p = draguard("strip", str(path))
    assert p.returncode == 0, p.stderr[-2000:]
    (doc,) = yaml.safe_load_all(p.stdout)
    assert doc["spec"]["devices"]["config"][0]["opaque"]["parameters"] == HUGE
    small = _claim(tmp_path, "x: 0x" + "f" * 5_000 + "\nu: 0xFFFFFFFFFFFFFFFF\nz: 0o17", "small.yaml")
    p = draguard("validate", str(small))
    assert p.returncode == 0, p.stdout + p.stderr
    p = draguard("strip", str(small))
    assert yaml.safe_load(p.stdout)["spec"]["devices"]["config"][0]["opaque"]["parameters"] == {
        "x": "0x" + "f" * 5_000,
        "u": 2**64 - 1,
        "z": 15,
    }


def test_integer_field_with_a_huge_hex_number_is_a_type_error(tmp_path: Path) -> None:
    path = tmp_path / "count.yaml"
    path.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
        "spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n        deviceClassName: gpu\n"
        "        allocationMode: ExactCount\n        count: 0x" + "f" * 20_000 + "\n"
    )
    p = draguard("validate", str(path))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "spec.devices.requests[0].exactly.count" in p.stdout and "internal." not in p.stdout
