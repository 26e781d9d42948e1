"""Streams as kubectl reads them (k8s.io/apimachinery's YAMLOrJSONDecoder), whatever the file's suffix:
JSON values one after the other, the rest as YAML when the first or second value is not JSON; what follows
a JSON object and is neither JSON nor a YAML object is an error at its line. A symlink loop named on the
command line is a usage error (exit 2); inside a directory it is skipped with a warning."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cliproc import draguard

A = '{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "a"}, "spec": {}}'
B = A.replace('"a"', '"b"')
C = A.replace('"a"', '"c"')
YAML_B = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: b}\nspec: {}\n"


def run(tmp_path: Path, name: str, text: str) -> tuple[int, list[tuple[int, str | None, list[str]]]]:
    """Exit code, and (line, name, rules) of each object reported for one file."""
    f = tmp_path / name
    f.write_text(text)
    p = draguard("validate", "-o", "json", str(f))
    assert "Traceback" not in p.stderr, p.stderr
    objects = json.loads(p.stdout)["objects"]
    return p.returncode, [(o["line"], o["name"], [v["rule"] for v in o["violations"]]) for o in objects]


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@pytest.mark.parametrize(
    ("text", "found"),
    [
        (A + "\n" + B + "\n", [(1, "a", []), (2, "b", [])]),  # a JSON stream
        (A + B, [(1, "a", []), (1, "b", [])]),  # concatenated, as json.Decoder reads them
        (A + "\n---\n" + YAML_B, [(1, "a", []), (3, "b", [])]),  # JSON, then YAML documents
        (A.replace('"', ""), [(1, "a", [])]),  # not JSON: all of it is YAML (a flow mapping)
    ],
    ids=["stream", "concatenated", "json-then-yaml", "flow-yaml"],
)
def test_what_kubectl_reads_is_read(
    tmp_path: Path, suffix: str, text: str, found: list[tuple[int, str]]
) -> None:
    assert run(tmp_path, "in" + suffix, text) == (0, found)


TRAILING = "what follows the JSON object is neither JSON nor a YAML document (kubectl rejects it too)"


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@pytest.mark.parametrize(
    ("text", "line"),
    [(A + "}\n", 1), (A + " xyz\n", 1), (A + "\n\n]\n", 3), (A + "\n- x\n", 2)],
    ids=["brace", "word", "bracket-on-line-3", "a-yaml-list"],
)
def test_trailing_garbage_after_a_json_object_is_an_error_at_its_line(
    tmp_path: Path, suffix: str, text: str, line: int
) -> None:
    code, found = run(tmp_path, "in" + suffix, text)
    assert code == 1
    assert found == [(1, "a", []), (line, None, ["input.parse"])]
    p = draguard("validate", str(tmp_path / f"in{suffix}"))
    assert p.stdout.startswith(f"{tmp_path}/in{suffix}:{line}: error input.parse: JSON syntax error: ")
    assert TRAILING in p.stdout


def test_after_two_json_values_a_json_error_is_final(tmp_path: Path) -> None:
    # kubectl no longer tries YAML once two JSON objects were read: `}` is an error, not a YAML document
    code, found = run(tmp_path, "in.json", A + "\n" + B + "\n" + C + "}\n")
    assert code == 1
    assert found == [(1, "a", []), (2, "b", []), (3, "c", []), (3, None, ["input.parse"])]


def test_a_symlink_loop_named_is_a_usage_error_and_one_in_a_directory_is_skipped(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    os.symlink("loop-b.yaml", d / "loop-a.yaml")
    os.symlink("loop-a.yaml", d / "loop-b.yaml")
    (d / "class.yaml").write_text(YAML_B)
    named = draguard("validate", str(d / "loop-a.yaml"))
    assert named.returncode == 2 and named.stdout == ""
    assert (
        named.stderr
        == f"draguard: error: {d}/loop-a.yaml: a symlink loop (Too many levels of symbolic links): nothing to read\n"
    )
    walked = draguard("validate", "-o", "json", str(d))
    assert walked.returncode == 0, walked.stderr
    skipped = {
        o["source"]: o["violations"][0]["rule"]
        for o in json.loads(walked.stdout)["objects"]
        if o["violations"]
    }
    assert skipped == {f"{d}/loop-a.yaml": "input.skipped-file", f"{d}/loop-b.yaml": "input.skipped-file"}
