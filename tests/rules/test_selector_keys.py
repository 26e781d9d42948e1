"""selector.qualified-name-key (webhook.rules.selector_keys): a fully-qualified name looked up as a domain
is never present, with or without devices in the input; the fix names the domain and the id."""

from __future__ import annotations

from pathlib import Path

from webhook.model.report import Report
from webhook.validate import RunOptions, check_files

RULE = "selector.qualified-name-key"

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-nics}
spec:
  driver: dra.net
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: eth0
    attributes:
      rdma: {bool: true}
      resource.kubernetes.io/pcieRoot: {string: pci0000:15}
    capacity:
      bandwidth: {value: 100G}
"""


def template(name: str, expression: str) -> str:
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}, namespace: ml}}
spec:
  spec:
    devices:
      requests:
      - name: nic
        firstAvailable:
        - name: fast
          deviceClassName: nic
          selectors:
          - cel:
              expression: {expression!r}
"""


CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec:
  selectors:
  - cel: {expression: 'device.attributes["dra.net/rdma"].bool'}
"""

TEMPLATES = {
    "membership": '"dra.net/rdma" in device.attributes',
    "guarded": 'device.attributes["dra.net/rdma"].?rdma.orValue(false) == true',
    "capacity": 'has(device.capacity["dra.net/bandwidth"].value)',
    "standard": 'device.attributes["resource.kubernetes.io/pcieRoot"].string == "pci0000:15"',
    "right": 'device.attributes["dra.net"].rdma && device.attributes["resource.kubernetes.io"].pcieRoot != "x/y"',
}


def run(tmp_path: Path, devices: bool) -> Report:
    (tmp_path / "objects.yaml").write_text(
        "---\n".join([CLASS, *(template(n, e) for n, e in TEMPLATES.items())])
    )
    if devices:
        (tmp_path / "slice.yaml").write_text(SLICE)
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
        assert (severity, line) == ("warning", 6)
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
