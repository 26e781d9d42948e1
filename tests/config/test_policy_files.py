"""`--policy FILE` (webhook/config/policyfile.py): DraguardPolicy objects or the plain policy file, told
apart by their documents; every problem a usage error naming the file, the line and the field path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cliproc import draguard as run
from webhook.config.policyfile import load_policy
from webhook.model.catalogue import RULES
from webhook.model.errors import UsageError
from webhook.model.violation import Severity

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "examples" / "draguard-policy.yaml"

POLICY = """\
apiVersion: draguard.io/v1alpha1
kind: DraguardPolicy
metadata:
  name: {name}
spec:
  rules:
    pool.completeness: {setting}
"""


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return str(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(UsageError) as e:
        load_policy(_write(tmp_path, text), RULES)
    return str(e.value)


def test_both_formats_set_the_same_policy(tmp_path: Path) -> None:
    plain = load_policy(
        _write(tmp_path, "rules:\n  pool.completeness: off\nfeasibility: {kinds: {Pod: enforce}}\n"), RULES
    )
    obj = load_policy(
        _write(
            tmp_path,
            POLICY.format(name="p", setting='"off"') + "  feasibility:\n    kinds: {Pod: enforce}\n",
        ),
        RULES,
    )
    assert (plain.disabled, plain.feasibility) == (obj.disabled, obj.feasibility)
    assert obj.sources == ("p",) and plain.sources == ()


def test_several_objects_and_lists_combine(tmp_path: Path) -> None:
    text = (
        POLICY.format(name="a", setting="info")
        + "---\n"
        + "apiVersion: v1\nkind: List\nitems:\n"
        + "".join(
            "- " + POLICY.format(name=n, setting=s).replace("\n", "\n  ").rstrip() + "\n"
            for n, s in (("b", "error"), ("c", '"off"'))
        )
    )
    policy = load_policy(_write(tmp_path, text), RULES)
    assert policy.sources == ("a", "b", "c")
    assert policy.severity == {"pool.completeness": Severity.ERROR}
    shipped = load_policy(str(EXAMPLE), RULES)
    assert shipped.sources == ("gpu-tenants", "platform-defaults")
    assert [t.id for t in shipped.tenants] == ["gpu-tenants/research", "gpu-tenants/shared-gpus"]


def test_errors_name_file_line_object_and_field(tmp_path: Path) -> None:
    text = (
        POLICY.format(name="a", setting="error")
        + "---\n"
        + POLICY.format(name="b", setting="fatal")
        + ("  tenants:\n  - name: t\n    mode: Enforcing\n    namespaceSelector: {}\n")
    )
    message = _error(tmp_path, text)
    path = str(tmp_path / "policy.yaml")
    assert message.splitlines() == [
        f"--policy {path}: 2 error(s); the policy is not used:",
        f'  {path}:15: DraguardPolicy b: spec.rules[pool.completeness]: Unsupported value: "fatal": supported '
        'values: "off", "info", "warning", "error"',
        f'  {path}:18: DraguardPolicy b: spec.tenants[0].mode: Unsupported value: "Enforcing": supported '
        'values: "Enforce", "Warn", "Audit"',
    ]


def test_an_item_of_a_list_is_located_too(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- " + POLICY.format(name="a", setting="bad").replace(
        "\n", "\n  "
    )
    message = _error(tmp_path, text)
    assert re.search(
        r"policy\.yaml:10: DraguardPolicy a: spec\.rules\[pool\.completeness\]: Unsupported", message
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            POLICY.format(name="a", setting="info") + "---\nrules: {}\n",
            ":9: a document is not a DraguardPolicy",
        ),
        (
            POLICY.format(name="a", setting="info") + "---\n" + POLICY.format(name="a", setting="error"),
            ":12: DraguardPolicy a: metadata.name: Duplicate value: 'a' (also line 4)",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
            ":1: a ConfigMap (v1) is no policy: expected DraguardPolicy objects",
        ),
        ("rules: [a]\n", "expected a mapping `rules: {<rule id>: off|error|warning|info}`"),
        ("rules: {}\n---\nrules: {}\n", ":3: one YAML document expected, found 2"),
        ("rules: {a: [\n", "not valid YAML"),
        (
            POLICY.format(name="a", setting="info") + "  rules: {}\n",
            ":8: spec.rules: duplicate key",
        ),
    ],
)
def test_file_level_mistakes(tmp_path: Path, text: str, message: str) -> None:
    got = _error(tmp_path, text)
    assert str(tmp_path / "policy.yaml") in got
    assert message in got, got


def test_the_plain_format_keeps_working(tmp_path: Path) -> None:
    policy = load_policy(_write(tmp_path, "rules:\n  pool.completeness: {severity: info}\n"), RULES)
    assert policy.severity == {"pool.completeness": Severity.INFO}
    assert (
        load_policy(_write(tmp_path, "feasibility: enforce\n"), RULES).feasibility.mode("Pod", "x")
        == "enforce"
    )


def test_the_commands_read_both_formats_and_never_show_a_traceback(tmp_path: Path) -> None:
    slice_file = tmp_path / "c.yaml"
    slice_file.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {}\n"
    )
    ok = _write(tmp_path, POLICY.format(name="a", setting="info"))
    for command in ("validate", "simulate"):
        p = run(command, "--policy", ok, str(slice_file))
        assert p.returncode == 0, p.stdout + p.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(POLICY.format(name="a", setting="sometimes"))
    for command in ("validate", "simulate"):
        p = run(command, "--policy", str(bad), str(slice_file))
        assert p.returncode == 2, p.stdout + p.stderr
        assert f"{bad}:7: DraguardPolicy a: spec.rules[pool.completeness]: Unsupported value" in p.stderr
        assert "Traceback" not in p.stderr
