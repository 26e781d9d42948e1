"""Selector lint against the devices of the input or of --cluster (issue 8 §6), on realistic manifests:
names no device publishes, the wrong type, selectors that match nothing; severities in the open world
(the input may hold only some devices) and the closed one (--cluster); bounds."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.builders import (
    claim_template,
    device_class,
    dump_yaml,
    first_available,
    request,
    resource_slice,
    subrequest,
)
from webhook.model.cache import ByteLRU
from webhook.model.report import Report
from webhook.rules import selectorlint
from webhook.validate import RunOptions, check_files


def gpu(
    i: int, model: str, firmware: dict[str, Any] | None, memory: str, root: str | None = None
) -> dict[str, Any]:
    """Device gpu-<i>: a `model` GPU with `memory`, its index, NVLink and PCIe root, or its firmware."""
    attributes: dict[str, Any] = {"model": {"string": model}}
    if firmware is None:
        attributes.update(
            {
                "index": {"int": i},
                "nvlink": {"bool": True},
                "resource.kubernetes.io/pcieRoot": {"string": root},
            }
        )
    else:
        attributes["firmware"] = firmware
    return {"name": f"gpu-{i}", "attributes": attributes, "capacity": {"memory": {"value": memory}}}


SLICE = resource_slice(
    "node-1-gpus",
    [
        gpu(0, "A100-SXM4-80GB", None, "80Gi", "pci0000:15"),
        gpu(1, "A100-SXM4-80GB", None, "80Gi", "pci0000:16"),
    ],
    pool="node-1",
    node="node-1",
)
CLASS = device_class("gpu", "device.driver == 'gpu.example.com'")


def claim(name: str, expression: str, cls: str = "gpu") -> dict[str, Any]:
    return claim_template(name, [request("gpu", cls, [expression])], ns="ml")


def run(tmp_path: Path, claims: dict[str, str], cluster: bool = False) -> Report:
    (tmp_path / "claims.yaml").write_text(dump_yaml([CLASS, *claims.values()]))
    (tmp_path / "state").mkdir(exist_ok=True)
    (tmp_path / "state" / "slices.yaml").write_text(dump_yaml([SLICE]))
    if cluster:
        return check_files([str(tmp_path / "claims.yaml")], RunOptions(cluster=(str(tmp_path / "state"),)))
    return check_files([str(tmp_path)], RunOptions())


def found(report: Report, rule: str) -> dict[str, tuple[str, str]]:
    """claim name -> (severity, message) of `rule`'s findings."""
    return {
        str(o.name): (v.severity.value, v.message)
        for o in report.objects
        for v in o.violations
        if v.rule == rule
    }


def test_a_typo_in_an_attribute_name_gets_the_published_name(tmp_path: Path) -> None:
    got = found(
        run(
            tmp_path,
            {
                "typo": claim("typo", "device.attributes['gpu.example.com'].modle == 'A100-SXM4-80GB'"),
                "case": claim("case", "device.attributes['gpu.example.com'].NVLink"),
                "capacity": claim(
                    "capacity", "device.attributes['gpu.example.com'].memory.compareTo(quantity('40Gi')) > 0"
                ),
                "domain": claim("domain", "device.attributes['gpu.exmple.com'].index == 0"),
                "guarded": claim("guarded", "has(device.attributes['gpu.example.com'].modle)"),
                "fine": claim("fine", "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:15'"),
            },
        ),
        "selector.unknown-attribute",
    )
    assert set(got) == {"typo", "case", "capacity", "domain", "guarded"}
    assert got["typo"] == (
        "warning",
        '`device.attributes["gpu.example.com"].modle`: no device in the input publishes the attribute '
        "`gpu.example.com/modle` (2 devices of driver gpu.example.com checked); unguarded, the lookup is a "
        "runtime error on every device it is evaluated on (the scheduler aborts the allocation with it); did "
        'you mean `device.attributes["gpu.example.com"].model`?',
    )
    assert got["case"][1].endswith('did you mean `device.attributes["gpu.example.com"].nvlink`?')
    assert got["capacity"][1].endswith('did you mean `device.capacity["gpu.example.com"].memory`?')
    assert "anything in domain `gpu.exmple.com`" in got["domain"][1]
    assert got["domain"][1].endswith('did you mean `device.attributes["gpu.example.com"].index`?')
    assert "guarded by has() or optional chaining, the selector is false on every device" in got["guarded"][1]


def test_a_name_without_a_close_match_is_an_info_unless_the_input_is_the_whole_cluster(
    tmp_path: Path,
) -> None:
    claims = {"uuid": claim("uuid", "device.attributes['gpu.example.com'].uuid == 'GPU-1234'")}
    assert found(run(tmp_path, claims), "selector.unknown-attribute")["uuid"][0] == "info"
    closed = found(run(tmp_path, claims, cluster=True), "selector.unknown-attribute")["uuid"]
    assert closed[0] == "warning" and "no device in the cluster publishes" in closed[1]


def test_the_wrong_type_accessor_and_literal(tmp_path: Path) -> None:
    got = found(
        run(
            tmp_path,
            {
                "accessor": claim(
                    "accessor", "device.attributes['gpu.example.com'].model.string == 'A100-SXM4-80GB'"
                ),
                "bool": claim("bool", "device.attributes['gpu.example.com'].nvlink == 'true'"),
                "int": claim("int", "device.attributes['gpu.example.com'].index == '0'"),
                "fine": claim("fine", "device.attributes['gpu.example.com'].index >= 0"),
            },
        ),
        "selector.attribute-type",
    )
    assert set(got) == {"accessor", "bool", "int"}
    assert got["accessor"][1].startswith(
        '`device.attributes["gpu.example.com"].model` is a string attribute ("A100-SXM4-80GB"): attribute '
        'values are plain CEL values, so `.string` is a runtime error ("no such key: string")'
    )
    assert got["bool"][1].endswith('did you mean `device.attributes["gpu.example.com"].nvlink == true`?')
    assert got["int"][1].endswith('did you mean `device.attributes["gpu.example.com"].index == 0`?')


def test_a_selector_matching_nothing_names_the_values_the_devices_have(tmp_path: Path) -> None:
    report = run(
        tmp_path,
        {
            "close": claim("close", "device.attributes['gpu.example.com'].model == 'A100-SXM4-80G'"),
            "far": claim("far", "device.attributes['gpu.example.com'].model == 'H200'"),
            "fits": claim(
                "fits", "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) > 0"
            ),
            "other": claim("other", "device.attributes['dra.net'].rdma == true", cls="rdma-nic"),
        },
    )
    got = found(report, "selector.matches-nothing")
    assert set(got) == {"close", "far"}  # "other" is about a driver whose devices are not in the input
    assert got["close"] == (
        "warning",
        "class gpu and this request's selectors together match none of the 2 devices of driver gpu.example.com "
        'in the input: a claim using it cannot be allocated; `device.attributes["gpu.example.com"].model` is '
        'never "A100-SXM4-80G": did you mean "A100-SXM4-80GB"?',
    )
    assert got["far"][0] == "info" and got["far"][1].endswith('(the devices have "A100-SXM4-80GB")')


def test_no_lint_without_devices_or_past_the_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "claims.yaml").write_text(
        dump_yaml([CLASS, claim("typo", "device.attributes['gpu.example.com'].modle")])
    )
    report = check_files([str(tmp_path / "claims.yaml")], RunOptions())
    assert not any(v.rule.startswith("selector.") for o in report.objects for v in o.violations)
    monkeypatch.setattr(
        selectorlint, "MAX_SAMPLES", 1
    )  # more devices than that: no "matches nothing" conclusion
    report = run(tmp_path, {"far": claim("far", "device.attributes['gpu.example.com'].model == 'H200'")})
    assert found(report, "selector.matches-nothing") == {}


def _big_slice(n: int) -> dict[str, Any]:
    """One slice of n GPUs: the first ones A100s with string firmware versions, the last one an H200 whose
    firmware is published as an int (as a driver upgrade mid-rollout may do)."""
    devices = [gpu(i, "A100-SXM4-80GB", {"string": "3.1"}, "80Gi") for i in range(n - 1)]
    devices.append(gpu(n - 1, "H200", {"int": 3}, "141Gi"))
    return {**SLICE, "spec": {**SLICE["spec"], "devices": devices}}


def test_the_facts_cover_every_device_of_a_slice(tmp_path: Path) -> None:
    from webhook.rules.facts import SliceFacts, facts_of

    f = facts_of(_big_slice(40), [0])  # samples not kept: the facts alone
    assert isinstance(f, SliceFacts) and f.samples == ()
    types, values = f.attributes[("gpu.example.com", "firmware")]
    assert types == {"string", "int"} and values == ("3.1", "3")
    assert f.attributes[("gpu.example.com", "model")][1] == ("A100-SXM4-80GB", "H200")


def test_a_type_or_value_only_a_late_device_publishes_is_not_reported(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "slices.yaml").write_text(dump_yaml([_big_slice(40)]))
    claims = {
        # the 40th device has an int firmware: comparing with an int is not "never true"
        "int": claim("int", "device.attributes['gpu.example.com'].firmware == 3"),
        # no device is an H200 with 200Gi, but an H200 exists: no "is never H200" hint
        "h200": claim(
            "h200",
            "device.attributes['gpu.example.com'].model == 'H200' && "
            "device.capacity['gpu.example.com'].memory.compareTo(quantity('200Gi')) >= 0",
        ),
    }
    (tmp_path / "claims.yaml").write_text(dump_yaml([CLASS, *claims.values()]))
    report = check_files([str(tmp_path)], RunOptions())
    assert found(report, "selector.attribute-type") == {}
    nothing = found(report, "selector.matches-nothing")
    assert set(nothing) == {"h200"} and "never" not in nothing["h200"][1], nothing


def test_a_domain_the_input_lacks_is_an_info_even_when_another_domain_has_the_name(tmp_path: Path) -> None:
    # the Kubernetes docs' template reads driver.example.com's memory; the input's devices are another
    # driver's: not a typo (the domains are not close), so no warning — but a close domain is one
    claims = {
        "docs": claim("docs", "device.capacity['driver.example.com'].memory == quantity('64Gi')"),
        "slip": claim("slip", "device.capacity['gpu.exampel.com'].memory == quantity('64Gi')"),
    }
    got = found(run(tmp_path, claims), "selector.unknown-attribute")
    assert got["docs"][0] == "info" and got["slip"][0] == "warning"
    assert got["slip"][1].endswith('did you mean `device.capacity["gpu.example.com"].memory`?')


def test_a_class_for_a_driver_without_devices_in_the_cluster_is_an_info(tmp_path: Path) -> None:
    nic_class = device_class("nic", "device.driver == 'nic.example.com'")
    (tmp_path / "classes.yaml").write_text(dump_yaml([CLASS, nic_class]))
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "slices.yaml").write_text(dump_yaml([SLICE]))
    report = check_files([str(tmp_path / "classes.yaml")], RunOptions(cluster=(str(tmp_path / "state"),)))
    got = found(report, "selector.matches-nothing")
    assert got == {
        "nic": (
            "info",
            "the selectors of DeviceClass nic are about driver nic.example.com, which publishes no device in "
            "the cluster: a claim using the class cannot be allocated",
        )
    }


def test_a_first_available_alternative_matching_nothing_is_an_info_when_another_matches(
    tmp_path: Path,
) -> None:
    b200 = subrequest("b200", "gpu", ["device.attributes['gpu.example.com'].model == 'B200'"])
    prioritized = claim_template(
        "prioritized", [first_available("gpu", b200, subrequest("any", "gpu"))], ns="ml"
    )
    got = found(run(tmp_path, {"prioritized": prioritized}, cluster=True), "selector.matches-nothing")
    assert got["prioritized"][0] == "info", got
    assert "this alternative is never chosen, another one of the request matches" in got["prioritized"][1]


@pytest.mark.parametrize("command", ["validate", "simulate"])
def test_a_selector_is_compiled_once_for_the_rules_and_the_lint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The selector rules, selector.qualified-name-key and the lint compile a selector alike (the run's
    gates, no cost limit): once in all, though the rules run in a worker process and the lint in the
    run's own (the worker sends the lint's analysis back). The lint's matching evaluates in the
    scheduler's environment (every gate on), a compilation of its own, also once."""
    from webhook.cel import compiler

    log = tmp_path / "compilations"
    real = compiler._compile

    def logged(expression: str, *flags: bool) -> compiler.Compiled | compiler.CompileError:
        with open(log, "a") as f:  # forked worker processes append too
            f.write(json.dumps([expression, *flags]) + "\n")
        return real(expression, *flags)

    monkeypatch.setattr(compiler, "_CACHE", ByteLRU(compiler.CACHE_BYTES))
    monkeypatch.setattr(compiler, "_compile", logged)
    a100 = "device.attributes['gpu.example.com'].model == 'A100-SXM4-80GB'"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "claims.yaml").write_text(dump_yaml([CLASS, claim("a100", a100)]))
    (tmp_path / "in" / "slices.yaml").write_text(dump_yaml([SLICE]))
    if command == "validate":
        report = check_files([str(tmp_path / "in")], RunOptions(), jobs=2)
    else:
        from webhook.simulate import SimulateOptions, simulate

        report = simulate([str(tmp_path / "in")], SimulateOptions(jobs=2)).validation
    assert found(report, "selector.unknown-attribute") == found(report, "selector.matches-nothing") == {}
    compiled = Counter(tuple(json.loads(line)) for line in log.read_text().splitlines())
    assert compiled[(a100, False, True, False)] == 1  # the v1.37 defaults: DRAListTypeAttributes off
    assert compiled[(a100, True, True, False)] == 1  # the lint's matching, as the scheduler compiles it
    assert set(compiled.values()) == {1}, compiled
