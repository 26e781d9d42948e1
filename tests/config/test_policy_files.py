"""`--policy FILE` (webhook/config/policyfile.py): DraguardPolicy objects or the plain policy file, told
apart by their documents; every problem a usage error naming the file, the line and the field path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import device_class, dump_yaml, line_of, obj, write
from tests.cliproc import draguard
from webhook.config.policyfile import load_policy
from webhook.model.catalogue import RULES
from webhook.model.errors import UsageError
from webhook.model.violation import Severity

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "examples" / "draguard-policy.yaml"
API = "draguard.io/v1alpha1"


def policy(name: str, setting: Any = "info", **spec: Any) -> dict[str, Any]:
    """A DraguardPolicy setting pool.completeness to `setting` (and any other `spec` fields)."""
    return obj("DraguardPolicy", name, api=API, spec={"rules": {"pool.completeness": setting}, **spec})


def _load(tmp_path: Path, text: str) -> Any:
    return load_policy(write(tmp_path, "policy.yaml", text), RULES)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(UsageError) as e:
        _load(tmp_path, text)
    return str(e.value)


def test_both_formats_set_the_same_policy(tmp_path: Path) -> None:
    plain = _load(tmp_path, "rules:\n  pool.completeness: off\nfeasibility: {kinds: {Pod: enforce}}\n")
    objects = _load(tmp_path, dump_yaml([policy("p", "off", feasibility={"kinds": {"Pod": "enforce"}})]))
    assert (plain.disabled, plain.feasibility) == (objects.disabled, objects.feasibility)
    assert objects.sources == ("p",) and plain.sources == ()


def test_several_objects_and_lists_combine(tmp_path: Path) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [policy("b", "error"), policy("c", "off")]}
    combined = _load(tmp_path, dump_yaml([policy("a", "info"), listed]))
    assert combined.sources == ("a", "b", "c")
    assert combined.severity == {"pool.completeness": Severity.ERROR}
    shipped = load_policy(str(EXAMPLE), RULES)
    assert shipped.sources == ("gpu-tenants", "platform-defaults")
    assert [t.id for t in shipped.tenants] == ["gpu-tenants/research", "gpu-tenants/shared-gpus"]


def test_errors_name_file_line_object_and_field(tmp_path: Path) -> None:
    tenant = {"name": "t", "mode": "Enforcing", "namespaceSelector": {}}
    text = dump_yaml([policy("a", "error"), policy("b", "fatal", tenants=[tenant])])
    second = line_of(text, "name: b")
    path = str(tmp_path / "policy.yaml")
    assert _error(tmp_path, text).splitlines() == [
        f"--policy {path}: 2 error(s); the policy is not used:",
        f"  {path}:{line_of(text, 'fatal')}: DraguardPolicy b: spec.rules[pool.completeness]: Unsupported "
        'value: "fatal": supported values: "off", "info", "warning", "error"',
        f"  {path}:{line_of(text, 'Enforcing', second)}: DraguardPolicy b: spec.tenants[0].mode: Unsupported "
        'value: "Enforcing": supported values: "Enforce", "Warn", "Audit"',
    ]


def test_an_item_of_a_list_is_located_too(tmp_path: Path) -> None:
    text = dump_yaml([{"apiVersion": "v1", "kind": "List", "items": [policy("a", "bad")]}])
    assert (
        f"policy.yaml:{line_of(text, 'bad')}: DraguardPolicy a: spec.rules[pool.completeness]: Unsupported"
        in _error(tmp_path, text)
    )


def test_a_bare_off_is_explained(tmp_path: Path) -> None:
    text = dump_yaml([policy("a", False)])  # what YAML makes of `pool.completeness: off`
    assert 'Unsupported value: false: supported values: "off", "info", "warning", "error" (YAML reads a bare off as false: quote it, "off")' in _error(tmp_path, text)  # fmt: skip


def test_file_level_mistakes(tmp_path: Path) -> None:
    def error(text: str, part: str, start: int = 1) -> str:
        """The error's text after the file name and the line of `part` (at or after line `start`)."""
        got = _error(tmp_path, text)
        where = f"{tmp_path / 'policy.yaml'}:{line_of(text, part, start)}: "
        assert where in got, got
        return got.split(where, 1)[1]

    mixed = dump_yaml([policy("a"), {"rules": {}}])
    assert error(mixed, "rules: {}").startswith("a document is not a DraguardPolicy")
    twice = dump_yaml([policy("a"), policy("a", "error")])
    assert error(twice, "name: a", line_of(twice, "---")).startswith(
        f"DraguardPolicy a: metadata.name: Duplicate value: 'a' (also line {line_of(twice, 'name: a')})"
    )
    other = dump_yaml([device_class("c")])
    assert error(other, "apiVersion").startswith("a DeviceClass (resource.k8s.io/v1) is no policy")
    repeated = dump_yaml([policy("a")]) + "  rules: {}\n"  # spec.rules twice
    assert "spec.rules: duplicate key" in error(repeated, "rules: {}")
    assert "one YAML document expected, found 2" in error("rules: {}\n---\nrules: {}\n", "rules", 2)
    assert "not valid YAML" in _error(tmp_path, "rules: {a: [\n")
    assert "expected a mapping `rules: {<rule id>: off|error|warning|info}`" in _error(
        tmp_path, "rules: [a]\n"
    )


def test_the_plain_format_keeps_working(tmp_path: Path) -> None:
    policy_ = _load(tmp_path, "rules:\n  pool.completeness: {severity: info}\n")
    assert policy_.severity == {"pool.completeness": Severity.INFO}
    assert _load(tmp_path, "feasibility: enforce\n").feasibility.mode("Pod", "x") == "enforce"


def test_the_commands_read_both_formats_and_never_show_a_traceback(tmp_path: Path) -> None:
    classes = write(tmp_path, "c.yaml", [device_class("c")])
    good = write(tmp_path, "good.yaml", [policy("a", "info")])
    bad_text = dump_yaml([policy("a", "sometimes")])
    bad = write(tmp_path, "bad.yaml", bad_text)
    for command in ("validate", "simulate"):
        p = draguard(command, "--policy", good, classes)
        assert p.returncode == 0, p.stdout + p.stderr
        p = draguard(command, "--policy", bad, classes)
        assert p.returncode == 2, p.stdout + p.stderr
        where = f"{bad}:{line_of(bad_text, 'sometimes')}"
        assert f"{where}: DraguardPolicy a: spec.rules[pool.completeness]: Unsupported value" in p.stderr
        assert "Traceback" not in p.stderr


def test_taint_limits_in_a_file_and_in_objects_combine_to_the_strictest(tmp_path: Path) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text("taints: {maxDevices: 100, maxPods: 5}\n")
    assert load_policy(str(plain), RULES).taints.over(101, 5) == ["101 devices > maxDevices 100"]
    objects = tmp_path / "objects.yaml"
    objects.write_text(
        dump_yaml(
            [
                policy("a", taints={"maxDevices": 10}),
                policy("b", taints={"maxPods": 3, "acknowledgeAnnotation": "example.com/ok"}),
            ]
        )
    )
    combined = load_policy(str(objects), RULES).taints
    assert (combined.max_devices, combined.max_pods) == (10, 3)
    assert combined.acknowledge == ("draguard.io/acknowledge-blast-radius", "example.com/ok")
    bad = tmp_path / "bad.yaml"
    bad.write_text("taints: {maxPods: -1}\n")
    with pytest.raises(UsageError, match="taints maxPods: -1 is not an integer >= 0"):
        load_policy(str(bad), RULES)
