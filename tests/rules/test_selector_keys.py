"""selector.qualified-name-key (webhook.rules.selector_keys): a fully-qualified name looked up as a domain
is never present, with or without devices in the input; the fix names the domain and the id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.builders import (
    claim_template,
    device_class,
    dump_yaml,
    first_available,
    line_of,
    resource_slice,
    subrequest,
)
from webhook.model.report import Report
from webhook.validate import RunOptions, check_files

RULE = "selector.qualified-name-key"

NIC = {
    "name": "eth0",
    "attributes": {"rdma": {"bool": True}, "resource.kubernetes.io/pcieRoot": {"string": "pci0000:15"}},
    "capacity": {"bandwidth": {"value": "100G"}},
}
SLICE = resource_slice("node-1-nics", [NIC], pool="node-1", node="node-1", driver="dra.net")


def template(name: str, expression: str) -> dict[str, Any]:
    fast = subrequest("fast", "nic", [expression])
    return claim_template(name, [first_available("nic", fast)], ns="ml")


CLASS = device_class("nic", 'device.attributes["dra.net/rdma"].bool')

TEMPLATES = {
    "membership": '"dra.net/rdma" in device.attributes',
    "guarded": 'device.attributes["dra.net/rdma"].?rdma.orValue(false) == true',
    "capacity": 'has(device.capacity["dra.net/bandwidth"].value)',
    "standard": 'device.attributes["resource.kubernetes.io/pcieRoot"].string == "pci0000:15"',
    "right": 'device.attributes["dra.net"].rdma && device.attributes["resource.kubernetes.io"].pcieRoot != "x/y"',
}


def run(tmp_path: Path, devices: bool) -> Report:
    (tmp_path / "objects.yaml").write_text(
        dump_yaml([CLASS, *(template(n, e) for n, e in TEMPLATES.items())])
    )
    if devices:
        (tmp_path / "slice.yaml").write_text(dump_yaml([SLICE]))
    return check_files([str(tmp_path)], RunOptions())


def findings(report: Report) -> dict[str, list[tuple[str, str, str, int]]]:
    out: dict[str, list[tuple[str, str, str, int]]] = {}
    for o in report.objects:
        for v in o.violations:
            if v.rule in (RULE, "selector.unknown-attribute"):
                out.setdefault(str(o.name), []).append((v.rule, v.severity.value, v.message, v.line))
    return out


def test_a_qualified_name_as_a_domain_key_with_or_without_devices(tmp_path: Path) -> None:
    for devices in (False, True):
        got = findings(run(tmp_path, devices))
        assert sorted(got) == ["capacity", "guarded", "membership", "nic", "standard"], got  # not "right"
        assert {rule for found in got.values() for rule, *_ in found} == {RULE}  # no unknown-attribute twice
        ((_, severity, message, line),) = got["nic"]
        # the class is the input's first document: the finding is on the line of its selector's expression
        written = (tmp_path / "objects.yaml").read_text()
        assert (severity, line) == ("warning", line_of(written, "expression: "))
        assert message == (
            '`device.attributes["dra.net/rdma"]` is never present: the keys of device.attributes are domains, '
            "which have no `/` (a fully-qualified name is <domain>/<id>), so it is an empty map and selecting "
            "`bool` on it is a runtime error (no such key) on every device it is evaluated on: the scheduler "
            'aborts the allocation with it; did you mean `device.attributes["dra.net"].rdma` (an attribute\'s '
            "value is a plain CEL value: no `.bool`)?"
        )
        assert got["membership"][0][2] == (
            '`"dra.net/rdma" in device.attributes` is false on every device: the keys of device.attributes are '
            "domains, which have no `/` (a fully-qualified name is <domain>/<id>); did you mean "
            '`has(device.attributes["dra.net"].rdma)`?'
        )
        assert "the selector is false on every device" in got["guarded"][0][2]
        assert got["capacity"][0][2].endswith('did you mean `device.capacity["dra.net"].bandwidth`?')
        assert 'did you mean `device.attributes["resource.kubernetes.io"].pcieRoot`' in got["standard"][0][2]
