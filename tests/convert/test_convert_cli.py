"""`draguard convert --to v1` through the real command line: in place or to stdout, comments and key order
kept, other documents byte for byte, errors at file:line with the file untouched, bounded input."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from tests import forkrun
from tests.cliproc import draguard

HERE = Path(__file__).resolve().parent / "manifests"
COMMENTED = HERE / "v1beta1" / "commented.yaml"
EXPECTED = HERE / "expected" / "commented.v1.yaml"


def test_in_place_conversion_matches_the_reviewed_result(tmp_path: Path) -> None:
    f = tmp_path / "commented.yaml"
    shutil.copy(COMMENTED, f)
    os.chmod(f, 0o640)
    p = draguard("convert", "--to", "v1", str(f))
    assert p.returncode == 0, p.stderr
    assert f.read_text() == EXPECTED.read_text()
    assert os.stat(f).st_mode & 0o777 == 0o640  # mode kept
    assert f"{f}: converted 3 objects to resource.k8s.io/v1 (resource.k8s.io/v1beta1: 3)" in p.stderr
    assert [n for n in os.listdir(tmp_path)] == ["commented.yaml"]  # no temporary file left
    # what the reviewed result keeps: the untouched documents byte for byte, the comments, the markers
    original, converted = COMMENTED.read_text(), f.read_text()
    configmap = original[original.index("---\napiVersion: v1\n") : original.index("---   # the lab")]
    assert configmap in converted
    assert original[original.index("...\n") :] == converted[converted.index("...\n") :]  # tail + v1 doc
    for comment in ("# the fast one", "# v1beta1 wraps the device fields", "# attributes come first",
                    "# marketing name", "# then capacity", "# the main request", "# which class",
                    "# one is enough", "# no admin access", "# every GPU of the driver"):  # fmt: skip
        assert comment in converted, comment
    # a second run has nothing left to do
    again = draguard("convert", "--to", "v1", str(f))
    assert again.returncode == 0 and f.read_text() == EXPECTED.read_text()
    assert "0 objects in 0 of 1 files converted" in again.stderr


def test_converted_manifests_validate_as_v1_like_the_beta_ones_with_runtime_config(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    shutil.copytree(HERE / "v1beta1", tree / "v1beta1")
    shutil.copytree(HERE / "v1beta2", tree / "v1beta2")
    (tree / "v1beta1" / "mistakes.yaml").unlink()  # unconvertible on purpose: tested below
    before = draguard("validate", "-o", "json", "--runtime-config", "api/beta=true", str(tree))
    p = draguard("convert", "--to", "v1", str(tree))
    assert p.returncode == 0, p.stderr
    after = draguard("validate", "-o", "json", str(tree))  # no --runtime-config needed any more

    def verdicts(out: str, drop: str) -> list[tuple[str, str, list[str]]]:
        return [
            (o["kind"], o["name"], sorted(v["rule"] for v in o["violations"] if v["rule"] != drop))
            for o in json.loads(out)["objects"]
        ]

    assert verdicts(after.stdout, "") == verdicts(before.stdout, "input.deprecated-api")
    assert {o["apiVersion"] for o in json.loads(after.stdout)["objects"]} <= {"resource.k8s.io/v1", "v1"}
    assert before.returncode == after.returncode == 0


def test_stdout_leaves_files_alone(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    shutil.copy(COMMENTED, f)
    for flags in (["-o", "-"], ["--stdout"]):
        p = draguard("convert", *flags, str(f))
        assert p.returncode == 0, p.stderr
        assert p.stdout == EXPECTED.read_text()
        assert f.read_text() == COMMENTED.read_text()


def test_stdin_is_converted_to_stdout() -> None:

    from tests.cliproc import ROOT

    p = forkrun.run(["convert", "--to", "v1", "-"], input=COMMENTED.read_text(), cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == EXPECTED.read_text()


def test_several_files_on_stdout_are_one_stream(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: a}\nspec: {}")
    b.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
    p = draguard("convert", "-o", "-", str(a), str(b))
    assert p.returncode == 0
    docs = list(yaml.safe_load_all(p.stdout))
    assert [d["apiVersion"] for d in docs] == ["resource.k8s.io/v1", "v1"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n"
            "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
            "  driver: d\n  pool: {name: p, resourceSliceCount: 1}\n  devices:\n  - name: a\n    attributes: {}\n",
            5,
            'spec.devices[0].attributes: unknown field "attributes" (in resource.k8s.io/v1beta1 device fields go '
            "under `basic`: spec.devices[0].basic.attributes): the API server rejects this "
            "resource.k8s.io/v1beta1 object; fix it first",
        ),
        (
            "apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClaim\nmetadata: {name: c}\nspec: {}\n",
            1,
            "classic DRA API (removed in Kubernetes 1.31) and has no conversion",
        ),
        (
            "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceTaintRule\nmetadata: {name: r}\nspec: {}\n",
            1,
            "resource.k8s.io/v1beta1 has no DeviceTaintRule (DeviceTaintRule exists as resource.k8s.io/v1, "
            "resource.k8s.io/v1beta2, resource.k8s.io/v1alpha3): fix apiVersion first",
        ),
        (
            "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: c}\nspec: {}\nspec: {}\n",
            5,
            "spec: duplicate key",
        ),
        (
            "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: c\n",
            4,  # where libyaml finds the flow mapping unclosed
            "fix the YAML first",
        ),
    ],
)
def test_unconvertible_input_is_an_error_at_its_line_and_the_file_is_not_changed(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(text + "---\napiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: ok}\n")
    p = draguard("convert", "--to", "v1", str(f))
    assert p.returncode == 1
    assert f.read_text().startswith(text)  # untouched, the convertible document too
    errors = [x for x in p.stderr.splitlines() if ": error: " in x]
    assert errors and errors[0].startswith(f"{f}:{line}: error: "), p.stderr
    assert message in p.stderr, p.stderr
    assert f"{f}: not changed" in p.stderr and "Traceback" not in p.stderr


def test_lists_and_json(tmp_path: Path) -> None:
    lst = tmp_path / "list.yaml"
    lst.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: resource.k8s.io/v1beta1\n  kind: ResourceClaim\n  metadata: {name: c, namespace: ns}\n"
        "  spec:\n    devices:\n      requests:\n      - name: r\n        deviceClassName: gpu   # the class\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n"
    )
    js = tmp_path / "slice.json"
    js.write_text(
        json.dumps(
            {
                "apiVersion": "resource.k8s.io/v1beta1",
                "kind": "ResourceSlice",
                "metadata": {"name": "s"},
                "spec": {
                    "driver": "d.example.com",
                    "nodeName": "n",
                    "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "a", "basic": {"attributes": {"x": {"int": 1}}}}],
                },
            },
            indent=4,
        )
    )
    p = draguard("convert", "--to", "v1", str(lst), str(js))
    assert p.returncode == 0, p.stderr
    assert "deviceClassName: gpu   # the class" in lst.read_text()
    items = yaml.safe_load(lst.read_text())["items"]
    assert items[0]["spec"]["devices"]["requests"] == [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]
    assert items[1] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    data = json.loads(js.read_text())
    assert list(data) == ["apiVersion", "kind", "metadata", "spec"]
    assert data["spec"]["devices"] == [{"name": "a", "attributes": {"x": {"int": 1}}}]
    assert '\n    "kind": "ResourceSlice"' in js.read_text()  # its indentation


def test_meaning_is_kept_where_yaml_versions_differ(tmp_path: Path) -> None:
    """kubectl reads YAML 1.1 (`010` is 8, `no` is false); the rewrite must mean the same to kubectl."""
    f = tmp_path / "c.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\nspec:\n"
        "  devices:\n    requests:\n    - name: r\n      deviceClassName: gpu\n      count: 010\n      adminAccess: no\n"
    )
    p = draguard("convert", str(f))
    assert p.returncode == 0, p.stderr
    from webhook.io.documents import parse

    text = f.read_text()
    assert "        count: 010\n        adminAccess: no\n" in text  # moved, never rewritten
    [doc] = list(parse(text, str(f)))
    assert doc.obj["spec"]["devices"]["requests"] == [
        {"name": "r", "exactly": {"deviceClassName": "gpu", "count": 8, "adminAccess": False}}
    ]


def test_crlf_files_keep_their_line_ends(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    text = (
        "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: c}\nspec: {}\n---\n"
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c, namespace: n}\nspec:\n"
        "  devices:\n    requests:\n    - name: r  # x\n      deviceClassName: gpu\n"
    )
    f.write_bytes(text.replace("\n", "\r\n").encode())
    p = draguard("convert", str(f))
    assert p.returncode == 0, p.stderr
    out = f.read_bytes().decode()
    assert "\n" not in out.replace("\r\n", "")  # every line end is still CR LF
    assert "namespace: n}" in out  # YAML 1.1's `n` (false to kubectl) left as written
    assert out.replace("\r\n", "\n") == (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: n}\nspec:\n"
        "  devices:\n    requests:\n    - name: r  # x\n      exactly:\n        deviceClassName: gpu\n"
    )


def test_alpha_kinds_without_v1_are_left_with_a_note(tmp_path: Path) -> None:
    f = tmp_path / "r.yaml"
    text = "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourcePoolStatusRequest\nmetadata: {name: r}\nspec: {driver: d}\n"
    f.write_text(text)
    p = draguard("convert", str(f))
    assert p.returncode == 0 and f.read_text() == text
    assert (
        "note: resource.k8s.io/v1alpha3 ResourcePoolStatusRequest has no resource.k8s.io/v1 version"
        in p.stderr
    )


def test_input_is_bounded(tmp_path: Path) -> None:
    f = tmp_path / "big.yaml"
    text = COMMENTED.read_text()
    f.write_text(text + "# padding\n" * 200)
    p = draguard("convert", "--max-input-bytes", "1Ki", str(f))
    assert p.returncode == 1 and f.read_text().startswith(text)
    assert "larger than 1 KiB: draguard does not read it" in p.stderr and "Traceback" not in p.stderr


def test_usage_errors() -> None:
    assert draguard("convert", "--to", "v1beta2", str(COMMENTED)).returncode == 2
    assert draguard("convert", "-o", "out.yaml", str(COMMENTED)).returncode == 2
    assert draguard("convert", "no-such-file.yaml").returncode == 2


def test_deadline_leaves_files_unconverted_and_says_so(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    shutil.copy(COMMENTED, f)
    p = draguard("convert", "--deadline-seconds", "0", str(f))
    assert p.returncode == 3, p.stderr
    assert f.read_text() == COMMENTED.read_text()
    assert "not converted: the deadline" in p.stderr


def test_hostile_yaml_is_an_error_and_deep_documents_still_convert(tmp_path: Path) -> None:
    laughs = [
        "apiVersion: resource.k8s.io/v1beta1",
        "kind: ResourceClaim",
        "metadata: {name: c, namespace: n}",
    ]
    laughs.append('a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]')
    for i in range(1, 9):
        laughs.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    laughs.append("spec: {devices: {requests: [{name: r, deviceClassName: gpu, selectors: *a8}]}}")
    bomb = tmp_path / "laughs.yaml"
    bomb.write_text("\n".join(laughs) + "\n")
    p = draguard("convert", str(bomb))
    assert p.returncode == 1 and "excessive aliasing" in p.stderr and "Traceback" not in p.stderr
    depth = 150
    deep = tmp_path / "deep.yaml"
    deep.write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c, namespace: n}\nspec:\n"
        "  devices:\n    requests:\n    - name: r\n      deviceClassName: gpu\n    config:\n    - opaque:\n"
        "        driver: d\n        parameters:\n          x: " + "{a: " * depth + "1" + "}" * depth + "\n"
    )
    p = draguard("convert", str(deep))
    assert p.returncode == 0, p.stderr
    assert "exactly:\n        deviceClassName: gpu" in deep.read_text()
