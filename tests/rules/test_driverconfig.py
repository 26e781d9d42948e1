"""config.driver-schema on real driver configs: every opaque config of the realistic fixtures passes its
driver's bundled schema; broken variants of them fail at the exact field path; unknown drivers are
skipped; custom schemas (a directory, a policy) warn; the webhook denies and `draguard validate` reports."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from webhook.config.context import Context
from webhook.config.driverschemas import (
    NONE,
    BadDriverSchema,
    bundled,
    from_policy_entry,
    load_dir,
    with_extra,
)
from webhook.config.filepolicy import spec_from_data
from webhook.config.policy import combine
from webhook.config.policyobject import check_policy_object
from webhook.config.profile import load_profile
from webhook.model.catalogue import RULES
from webhook.validate import object_violations

ROOT = Path(__file__).resolve().parents[2]
REALISTIC = ROOT / "tests" / "fixtures" / "realistic"
CONFIG_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass")


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def _find(path: Path, kind: str = "") -> dict[str, Any]:
    """The file's first object of `kind` (default: its claim or claim template)."""
    kinds = (kind,) if kind else ("ResourceClaim", "ResourceClaimTemplate")
    return next(d for d in _docs(path) if d.get("kind") in kinds)


def _prefix(obj: dict[str, Any], i: int = 0) -> str:
    spec = "spec.spec" if obj["kind"] == "ResourceClaimTemplate" else "spec"
    return f"{spec}.devices.config[{i}].opaque.parameters."


def _config_findings(obj: dict[str, Any], ctx: Context | None = None) -> list[tuple[str, str, str, str]]:
    found = object_violations(copy.deepcopy(obj), ctx or Context())
    return [(v.rule, v.severity.value, v.field, v.message) for v in found if v.rule.startswith("config.")]


def _recorded_config_problems() -> set[str]:
    problems = yaml.safe_load((REALISTIC / "PROBLEMS.yaml").read_text())["problems"]
    return {p["file"] for p in problems if any(r.startswith("config.") for r in p["rules"])}


def test_every_realistic_config_passes_its_schema() -> None:
    """Every opaque config in tests/fixtures/realistic/: no config.* finding beyond what PROBLEMS.yaml records;
    and the walk really checks configs against bundled schemas (NVIDIA and dra-example-driver ones)."""
    recorded = _recorded_config_problems()
    checked: list[str] = []
    for path in sorted(REALISTIC.rglob("*.yaml")):
        rel = str(path.relative_to(REALISTIC))
        if "templates" in path.parts or rel == "PROBLEMS.yaml":
            continue  # unrendered Helm templates
        for doc in _docs(path):
            if doc.get("kind") not in CONFIG_KINDS:
                continue
            spec = doc.get("spec") or {}
            config = (
                spec.get("config") or ((spec.get("spec") or spec).get("devices") or {}).get("config") or []
            )
            for c in config:
                opaque = c.get("opaque") or {}
                params = opaque.get("parameters") or {}
                if NONE.lookup(
                    opaque.get("driver", ""), params.get("apiVersion", ""), params.get("kind", "")
                ):
                    checked.append(f"{rel} {params.get('kind', 'untyped')}")
            if rel not in recorded:
                assert [f for f in _config_findings(doc) if f[1] != "info"] == [], rel
    assert len(checked) >= 4, checked
    assert any("nvidia" in c for c in checked) and any("dra-example-driver" in c for c in checked)
    assert any(c.startswith("dranet/") for c in checked)


NVIDIA_TS = REALISTIC / "nvidia/specs/quickstart/gpu-test3.yaml"  # GpuConfig, TimeSlicing
NVIDIA_MPS = REALISTIC / "nvidia/specs/quickstart/gpu-test4.yaml"  # GpuConfig, MPS
EXAMPLE = REALISTIC / "dra-example-driver/demo/gpu-test5.yaml"  # GpuConfig, TimeSlicing and SpacePartitioning


def _params(obj: dict[str, Any], i: int = 0) -> dict[str, Any]:
    spec = obj["spec"]
    devices = (spec.get("spec") or spec)["devices"]
    params: dict[str, Any] = devices["config"][i]["opaque"]["parameters"]
    return params


BROKEN = [
    pytest.param(
        NVIDIA_TS,
        lambda p: p["sharing"]["timeSlicingConfig"].update(interval="Longest"),
        "sharing.timeSlicingConfig.interval",
        'Unsupported value: "Longest": supported values: "Default", "Short", "Medium", "Long"',
        id="bad-interval",
    ),
    pytest.param(
        NVIDIA_TS,
        lambda p: p["sharing"].update(strategy="Timeslicing"),
        "sharing.strategy",
        'Unsupported value: "Timeslicing": supported values: "TimeSlicing", "MPS"',
        id="bad-strategy",
    ),
    pytest.param(
        NVIDIA_TS,
        lambda p: p["sharing"].update(timeSliceConfig=p["sharing"].pop("timeSlicingConfig")),
        "sharing.timeSliceConfig",
        'unknown field "timeSliceConfig"',
        id="unknown-field",
    ),
    pytest.param(
        NVIDIA_TS,
        lambda p: p["sharing"].pop("strategy"),
        "sharing.strategy",
        "Required value",
        id="missing-strategy",
    ),
    pytest.param(
        NVIDIA_MPS,
        lambda p: p["sharing"]["mpsConfig"].update(defaultActiveThreadPercentage="50%"),
        "sharing.mpsConfig.defaultActiveThreadPercentage",
        'Invalid value: "50%": must be of type integer',
        id="wrong-type",
    ),
    pytest.param(
        NVIDIA_MPS,
        lambda p: p["sharing"]["mpsConfig"].update(defaultActiveThreadPercentage=150),
        "sharing.mpsConfig.defaultActiveThreadPercentage",
        "Invalid value: 150: must be less than or equal to 100",
        id="over-maximum",
    ),
    pytest.param(
        NVIDIA_MPS,
        lambda p: p["sharing"]["mpsConfig"].update(defaultPerDevicePinnedMemoryLimit={"0": "10 GB"}),
        "sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit[0]",
        'Invalid value: "10 GB": must match the regular expression',
        id="bad-quantity-in-map",
    ),
]


@pytest.mark.parametrize(("path", "breaks", "field", "message"), BROKEN)
def test_broken_variants_fail_at_the_field(path: Path, breaks: Any, field: str, message: str) -> None:
    template = _find(path)
    assert _config_findings(template) == []
    breaks(_params(template))
    found = _config_findings(template)
    assert len(found) == 1, found
    rule, severity, at, text = found[0]
    assert (rule, severity, at) == ("config.driver-schema", "error", _prefix(template) + field)
    assert text.startswith(message) and text.endswith("(gpu.nvidia.com GpuConfig)"), text


def test_example_driver_space_partitioning_count_and_interval() -> None:
    claim = _find(EXAMPLE)
    assert _config_findings(claim) == []
    _params(claim, 1)["sharing"]["spacePartitioningConfig"]["partitionCount"] = -1
    _params(claim, 0)["sharing"]["timeSlicingConfig"] = {}  # the example driver's interval has no default
    found = {(f[2].split("opaque.parameters.")[1], f[3].split(" (")[0]) for f in _config_findings(claim)}
    assert found == {
        (
            "sharing.spacePartitioningConfig.partitionCount",
            "Invalid value: -1: must be greater than or equal to 0",
        ),
        ("sharing.timeSlicingConfig.interval", "Required value"),
    }


def _class(driver: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "imex"},
        "spec": {"config": [{"opaque": {"driver": driver, "parameters": params}}]},
    }


def test_device_class_compute_domain_channel_needs_a_domain_id() -> None:
    params = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomainChannelConfig"}
    assert _config_findings(_class("compute-domain.nvidia.com", params)) == [
        (
            "config.driver-schema",
            "error",
            "spec.config[0].opaque.parameters.domainID",
            "Required value (compute-domain.nvidia.com ComputeDomainChannelConfig)",
        )
    ]
    ok = {**params, "domainID": "b5f1", "allocationMode": "All"}
    assert _config_findings(_class("compute-domain.nvidia.com", ok)) == []


def test_unknown_driver_skipped_unknown_kind_of_known_driver_is_info() -> None:
    unknown = _find(REALISTIC / "dranet/examples/resourceclaim-advanced.yaml")
    unknown["spec"]["devices"]["config"][0]["opaque"]["driver"] = "nic.acme.example.com"  # invented
    _params(unknown)["interface"]["mtu"] = "not a number"  # no schema for this driver: the driver's to judge
    assert _config_findings(unknown) == []
    found = _config_findings(
        _class("gpu.nvidia.com", {"apiVersion": "resource.nvidia.com/v1", "kind": "GpuConfig"})
    )
    assert [(r, s, f) for r, s, f, _ in found] == [
        ("config.driver-schema.unknown-kind", "info", "spec.config[0].opaque.parameters")
    ]
    assert "resource.nvidia.com/v1beta1 GpuConfig" in found[0][3]


ACME = {"apiVersion": "acme.com/v1", "kind": "AcmeConfig", "mode": "fast"}
ACME_SCHEMA = {
    "type": "object",
    "properties": {"apiVersion": {}, "kind": {}, "mode": {"enum": ["slow", "safe"]}},
    "additionalProperties": False,
}


def test_policy_file_schema_warns_and_replaces_bundled() -> None:
    spec = spec_from_data(
        {
            "driverSchemas": [
                {
                    "driver": "gpu.acme.com",
                    "apiVersion": "acme.com/v1",
                    "kind": "AcmeConfig",
                    "schema": ACME_SCHEMA,
                }
            ]
        },
        "p.yaml",
        RULES,
    )
    ctx = Context(driver_schemas=with_extra(NONE, combine([spec]).driver_schemas))
    assert [(r, s, f) for r, s, f, _ in _config_findings(_class("gpu.acme.com", ACME), ctx)] == [
        ("config.driver-schema.custom", "warning", "spec.config[0].opaque.parameters.mode")
    ]
    assert _config_findings(_class("gpu.acme.com", ACME)) == []  # without the policy: skipped


def test_driver_schemas_dir_replaces_a_bundled_schema(tmp_path: Path) -> None:
    newer = json.loads((ROOT / "schemas/drivers/nvidia-gpuconfig.json").read_text())
    newer["$defs"]["TimeSlicingConfig"]["properties"]["interval"]["enum"].append("Longest")
    (tmp_path / "gpu.json").write_text(json.dumps(newer))
    ctx = Context(driver_schemas=with_extra(NONE, load_dir(str(tmp_path))))
    template = _find(NVIDIA_TS)
    _params(template)["sharing"]["timeSlicingConfig"]["interval"] = "Longest"
    assert _config_findings(template, ctx) == []
    assert _config_findings(template)[0][0] == "config.driver-schema"


def test_draguard_policy_object_driver_schemas() -> None:
    obj = {
        "apiVersion": "draguard.io/v1alpha1",
        "kind": "DraguardPolicy",
        "metadata": {"name": "acme"},
        "spec": {
            "driverSchemas": [
                {
                    "driver": "gpu.acme.com",
                    "apiVersion": "acme.com/v1",
                    "kind": "AcmeConfig",
                    "schema": ACME_SCHEMA,
                }
            ]
        },
    }
    spec = check_policy_object(obj, RULES, load_profile("1.37"))
    assert not isinstance(spec, list) and spec.driver_schemas[0].kind == "AcmeConfig"
    bad = copy.deepcopy(obj)
    bad["spec"]["driverSchemas"][0]["schema"] = {"type": "object", "format": "uuid"}
    errors = check_policy_object(bad, RULES, load_profile("1.37"))
    assert isinstance(errors, list)
    assert [str(e) for e in errors] == [
        "spec.driverSchemas[0].schema: Invalid value: schema <root>: keyword 'format' is not supported"
    ]


def test_validate_cli_on_a_real_file(tmp_path: Path) -> None:
    text = NVIDIA_TS.read_text().replace("interval: Long", "interval: Longest")
    bad = tmp_path / "gpu-test3.yaml"
    bad.write_text(text)
    p = subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", "validate", "--no-feasibility", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 1, p.stdout + p.stderr
    line = next(x for x in p.stdout.splitlines() if "config.driver-schema" in x)
    field = "spec.devices.config[0].opaque.parameters.sharing.timeSlicingConfig.interval"
    assert line.startswith(f"{bad}:32: error config.driver-schema: {field}: "), line


def test_bundled_schemas_are_the_documented_ones() -> None:
    readme = (ROOT / "schemas/drivers/README.md").read_text()
    kinds = {(s.api_version, s.kind) for s in bundled()}
    assert len(kinds) == 9  # DraNet's untyped NetworkConfig: ("", "")
    for s in bundled():
        assert s.origin == "bundled" and s.source.split("/")[-1] in readme


def test_serve_driver_schemas_dir_reaches_the_admission_context(tmp_path: Path) -> None:
    from webhook.server.options import ServeOptions
    from webhook.server.wiring import load_serve_policy, make_config, serve_profile

    (tmp_path / "acme.yaml").write_text(
        yaml.safe_dump(
            {
                "x-draguard": {
                    "drivers": ["gpu.acme.com"],
                    "apiVersion": "acme.com/v1",
                    "kind": "AcmeConfig",
                },
                **ACME_SCHEMA,
            }
        )
    )
    options = ServeOptions(state="examples", certs="certs", driver_schemas=str(tmp_path))
    policy = load_serve_policy(options)
    assert policy is not None
    config = make_config(options, "validate", serve_profile(options), policy)
    found = _config_findings(_class("gpu.acme.com", ACME), config.context())
    assert [(r, f) for r, _, f, _ in found] == [
        ("config.driver-schema.custom", "spec.config[0].opaque.parameters.mode")
    ]


def _strict_interval_schemas(tmp_path: Path) -> Path:
    """A --driver-schemas directory whose GpuConfig allows only the Default and Short intervals: the real
    gpu-test3 claim (interval Long) does not fit it."""
    stricter = json.loads((ROOT / "schemas/drivers/nvidia-gpuconfig.json").read_text())
    stricter["$defs"]["TimeSlicingConfig"]["properties"]["interval"]["enum"] = ["Default", "Short"]
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "gpu.json").write_text(json.dumps(stricter))
    return schemas


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", *argv], capture_output=True, text=True, cwd=ROOT
    )


INTERVAL = "spec.devices.config[0].opaque.parameters.sharing.timeSlicingConfig.interval"


def test_simulate_driver_schemas_dir(tmp_path: Path) -> None:
    """`simulate --driver-schemas DIR`: the directory's schema checks the input's claims (raised to an
    error by the policy, since simulate reports the errors of what it simulates); bundled ones always do."""
    schemas = _strict_interval_schemas(tmp_path)
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  config.driver-schema.custom: error\n")

    def findings(*argv: str) -> list[tuple[str, str]]:
        p = _cli("simulate", "-o", "json", *argv, str(NVIDIA_TS))
        assert p.returncode in (0, 1), p.stdout + p.stderr
        objs = json.loads(p.stdout)["errors"]
        return [
            (v["rule"], v["field"]) for o in objs for v in o["violations"] if v["rule"].startswith("config.")
        ]

    assert findings("--policy", str(policy)) == []
    assert findings("--policy", str(policy), "--driver-schemas", str(schemas)) == [
        ("config.driver-schema.custom", INTERVAL)
    ]
    # two files, two worker processes: the workers' context has the directory's schemas too
    assert findings(
        "-j", "2", "--policy", str(policy), "--driver-schemas", str(schemas), str(NVIDIA_MPS)
    ) == [("config.driver-schema.custom", INTERVAL)]
    bad = tmp_path / "gpu-test3.yaml"
    bad.write_text(NVIDIA_TS.read_text().replace("interval: Long", "interval: Longest"))
    p = _cli("simulate", str(bad))
    assert p.returncode == 1 and f"error config.driver-schema: {INTERVAL}: " in p.stdout, p.stdout


def test_audit_driver_schemas_dir(tmp_path: Path) -> None:
    """`audit --cluster DIR --driver-schemas DIR`: the cluster's claims are checked against the directory's
    schemas (a custom schema's finding is a warning); without the flag the real claim passes."""
    schemas = _strict_interval_schemas(tmp_path)
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    (cluster / "gpu-test3.yaml").write_text(NVIDIA_TS.read_text())

    def results(*argv: str) -> list[tuple[str, str, str]]:
        p = _cli("audit", "-o", "json", "--cluster", str(cluster), *argv)
        assert p.returncode in (0, 1), p.stdout + p.stderr
        return [
            (r["rule"], r["result"], r.get("field", ""))
            for r in json.loads(p.stdout)["results"]
            if r["rule"].startswith("config.")
        ]

    assert results() == []
    assert results("--driver-schemas", str(schemas)) == [("config.driver-schema.custom", "warn", INTERVAL)]


def test_policy_test_files_take_driver_schemas_from_their_policies(tmp_path: Path) -> None:
    """`draguard test` has no --driver-schemas (a test file says everything its results depend on): the
    policies it names carry `driverSchemas`, and their schemas check the resources under test."""
    stricter = json.loads((ROOT / "schemas/drivers/nvidia-gpuconfig.json").read_text())
    stricter["$defs"]["TimeSlicingConfig"]["properties"]["interval"]["enum"] = ["Default", "Short"]
    stricter.pop("x-draguard")
    entry = {"driver": "gpu.nvidia.com", "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump({"driverSchemas": [{**entry, "schema": stricter}]}))
    (tmp_path / "gpu-test3.yaml").write_text(NVIDIA_TS.read_text())
    test = {
        "apiVersion": "cli.draguard.io/v1alpha1",
        "kind": "Test",
        "metadata": {"name": "interval"},
        "policies": ["policy.yaml"],
        "resources": ["gpu-test3.yaml"],
        "results": [
            {
                "resource": "ResourceClaim/gpu-test3/single-gpu",
                "rule": "config.driver-schema.custom",
                "result": "warn",
            }
        ],
    }
    (tmp_path / "draguard-test.yaml").write_text(yaml.safe_dump(test))
    p = _cli("test", str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr


SRIOV = REALISTIC / "sriov/examples/vf-pod.yaml"  # VfConfig: ifName, netAttachDefName, driver vfio-pci


@pytest.mark.parametrize(
    ("breaks", "field", "message"),
    [
        pytest.param(lambda p: p.update(addVhostMount="yes"), "addVhostMount", "Invalid value", id="type"),
        pytest.param(
            lambda p: p.update(netAttachDefNs=p.pop("netAttachDefName")),
            "netAttachDefNs",
            'unknown field "netAttachDefNs"',
            id="unknown-field",
        ),
        pytest.param(
            lambda p: p.update(ifName=3), "ifName", "Invalid value: 3: must be of type string", id="int"
        ),
    ],
)
def test_sriov_vfconfig(breaks: Any, field: str, message: str) -> None:
    """The SR-IOV driver's VfConfig (decoded strictly at prepare): the realistic fixture's config passes, a
    broken variant fails at its field."""
    template = _find(SRIOV)
    assert NONE.lookup("sriovnetwork.k8snetworkplumbingwg.io", _params(template)["apiVersion"], "VfConfig")
    assert _config_findings(template) == []
    breaks(_params(template))
    found = _config_findings(template)
    assert [(r, s, f) for r, s, f, _ in found] == [
        ("config.driver-schema", "error", _prefix(template) + field)
    ]
    assert found[0][3].startswith(message), found[0][3]
    assert found[0][3].endswith("(sriovnetwork.k8snetworkplumbingwg.io VfConfig)"), found[0][3]


DRANET = REALISTIC / "dranet/examples/resourceclaim-advanced.yaml"  # interface name, addresses, mtu; ethtool
DRANET_GPU = REALISTIC / "dranet/examples/gpu-nic-aligned.yaml"  # template: interface.mtu only


@pytest.mark.parametrize(
    ("breaks", "field", "message"),
    [
        pytest.param(
            lambda p: p["interface"].update(mtu="9000"),
            "interface.mtu",
            'Invalid value: "9000": must be of type integer',
            id="type",
        ),
        pytest.param(
            lambda p: p["interface"].update(mtu=60), "interface.mtu", "Invalid value: 60", id="mtu-below-68"
        ),
        pytest.param(
            lambda p: p["interface"].update(MTU=p["interface"].pop("mtu")),
            "interface.MTU",
            'unknown field "MTU"',
            id="unknown-field-case",
        ),
        pytest.param(
            lambda p: p.update(apiVersion="dra.net/v1"),  # typed like other drivers: refused
            "apiVersion",
            'unknown field "apiVersion"',
            id="typed-parameters",
        ),
        pytest.param(
            lambda p: p["interface"].update(name="storage-interface0"),
            "interface.name",
            'Invalid value: "storage-interface0"',
            id="name-over-15",
        ),
        pytest.param(
            lambda p: p["interface"].update(arpIgnore=4),
            "interface.arpIgnore",
            "Unsupported value: 4",
            id="arp",
        ),
        pytest.param(
            lambda p: p.update(
                routes=[{"destination": "10.0.0.0/8", "gateway": "169.254.169.1", "scope": 200}]
            ),
            "routes[0].scope",
            "Unsupported value: 200",
            id="route-scope",
        ),
        pytest.param(
            lambda p: p.update(routes=[{"gateway": "169.254.169.1"}]),
            "routes[0].destination",
            "Required value",
            id="route-destination",
        ),
        pytest.param(
            lambda p: p["interface"].update(vrf={"name": "vrf0", "table": 254}),
            "interface.vrf.table",
            "Invalid value: 254",
            id="vrf-reserved-table",
        ),
        pytest.param(
            lambda p: p["ethtool"]["features"].update({"rx-checksum": "on"}),
            "ethtool.features[rx-checksum]",
            'Invalid value: "on": must be of type boolean',
            id="ethtool-feature",
        ),
    ],
)
def test_dranet_networkconfig(breaks: Any, field: str, message: str) -> None:
    """DraNet's NetworkConfig (no apiVersion or kind; decoded strictly and validated at prepare): the realistic
    fixtures' configs pass, a broken variant fails at its field."""
    assert NONE.lookup("dra.net", "", "") and NONE.kinds_of("dra.net") == ["untyped parameters"]
    assert _config_findings(_find(DRANET_GPU)) == []
    template = _find(DRANET)
    assert _config_findings(template) == []
    breaks(_params(template))
    found = _config_findings(template)
    assert [(r, s, f) for r, s, f, _ in found] == [
        ("config.driver-schema", "error", _prefix(template) + field)
    ]
    assert found[0][3].startswith(message), found[0][3]
    assert found[0][3].endswith("(dra.net)"), found[0][3]


def test_dranet_accepts_what_the_driver_accepts() -> None:
    """Fields the driver decodes and leaves valid pass: every documented field, a derived VRF table, link routes
    without a gateway, private flags; formats (CIDR, MAC, IP) and cross-field checks are the driver's."""
    claim = _find(DRANET)
    _params(claim).update(
        profile="fast",
        routes=[{"destination": "10.0.0.0/8", "scope": 253, "table": 100, "source": "169.254.169.14"}],
        rules=[{"priority": 100, "source": "10.0.0.0/8", "table": 100}],
        neighbors=[{"destination": "169.254.169.1", "hardwareAddr": "02:00:00:00:00:01"}],
    )
    _params(claim)["interface"].update(
        dhcp=False,
        hardwareAddr="02:00:00:00:00:02",
        gsoMaxSize=65536,
        groMaxSize=65536,
        gsoIPv4MaxSize=65536,
        groIPv4MaxSize=65536,
        disableEbpfPrograms=True,
        forwarding=True,
        arpIgnore=8,
        arpAnnounce=2,
    )
    _params(claim)["ethtool"]["privateFlags"] = {"my-flag": True}
    assert _config_findings(claim) == []
    _params(claim)["interface"]["vrf"] = {"name": "vrf-blue"}  # table derived by the driver
    _params(claim).pop("rules")  # rules with a VRF: the driver's to judge (not checked here either)
    assert _config_findings(claim) == []


def test_untyped_custom_schema_checks_every_parameters_object_of_its_driver() -> None:
    """A schema without apiVersion and kind (a policy's, as for DraNet's bundled one) checks every parameters
    object of its driver that no typed schema checks; one of apiVersion or kind alone is still refused."""
    schema = from_policy_entry({"driver": "nic.acme.example.com", "schema": {"type": "object"}}, "policy p")
    ctx = with_extra(NONE, [schema])
    assert ctx.lookup("nic.acme.example.com", "", "") == [schema]
    assert ctx.lookup("nic.acme.example.com", "acme.com/v1", "NicConfig") == [schema]
    assert ctx.kinds_of("nic.acme.example.com") == ["untyped parameters"]
    with pytest.raises(BadDriverSchema, match="`kind` must be a non-empty string"):
        from_policy_entry({"driver": "nic.acme.example.com", "apiVersion": "acme.com/v1", "schema": {}}, "p")
