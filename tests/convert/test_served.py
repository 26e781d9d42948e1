"""Which resource.k8s.io versions kube-apiserver 1.35–1.37 serves, and its --runtime-config semantics."""

from __future__ import annotations

import pytest

from webhook.convert.served import (
    RuntimeConfig,
    deprecation_warning,
    enabled,
    parse_runtime_config,
    registered_versions,
    serving,
)
from webhook.model.errors import UsageError

KINDS4 = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")


@pytest.mark.parametrize("k8s", ["1.35", "1.36", "1.37"])
def test_registered_versions(k8s: str) -> None:
    assert sorted(registered_versions(k8s)) == ["v1", "v1alpha3", "v1beta1", "v1beta2"]


@pytest.mark.parametrize("k8s", ["1.35", "1.36", "1.37"])
@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
@pytest.mark.parametrize("kind", KINDS4)
def test_beta_versions_are_off_by_default_and_on_with_runtime_config(
    k8s: str, version: str, kind: str
) -> None:
    api = f"resource.k8s.io/{version}"
    off = serving(api, kind, k8s)
    assert not off.served
    assert f'no matches for kind "{kind}" in version "{api}"' in off.message
    assert "draguard convert --to v1" in off.message and f"--runtime-config {api}=true" in off.message
    assert serving(api, kind, k8s, parse_runtime_config(f"{api}=true", k8s)).served


@pytest.mark.parametrize("kind", KINDS4)
def test_v1_is_served_by_default(kind: str) -> None:
    for k8s in ("1.35", "1.36", "1.37"):
        assert serving("resource.k8s.io/v1", kind, k8s).served


def test_device_taint_rule_versions_per_release() -> None:
    everything = parse_runtime_config("api/all=true")
    dtr = "DeviceTaintRule"
    # v1 from 1.37, v1beta2 from 1.36, v1alpha3 all along; never in v1beta1
    assert [serving("resource.k8s.io/v1", dtr, k, everything).served for k in ("1.35", "1.36", "1.37")] == [
        False,
        False,
        True,
    ]
    assert [
        serving("resource.k8s.io/v1beta2", dtr, k, everything).served for k in ("1.35", "1.36", "1.37")
    ] == [
        False,
        True,
        True,
    ]
    assert all(
        serving("resource.k8s.io/v1alpha3", dtr, k, everything).served for k in ("1.35", "1.36", "1.37")
    )
    assert not serving("resource.k8s.io/v1beta1", dtr, "1.37", everything).served
    msg = serving("resource.k8s.io/v1beta2", dtr, "1.35", everything).message
    assert "Kubernetes 1.35 has no DeviceTaintRule in resource.k8s.io/v1beta2" in msg
    assert "served as resource.k8s.io/v1alpha3" in msg


def test_unknown_versions_name_what_exists() -> None:
    msg = serving("resource.k8s.io/v1alpha2", "ResourceClaim", "1.37").message
    assert "classic DRA API" in msg and "resource.k8s.io/v1beta2" in msg
    assert not serving("resource.k8s.io/v2", "ResourceClaim", "1.37").served


def test_deprecation_warnings_follow_the_lifecycle() -> None:
    assert deprecation_warning("v1beta1", "ResourceClaim", "1.35") == (
        "resource.k8s.io/v1beta1 ResourceClaim is deprecated in v1.35+, unavailable in v1.38+"
    )
    assert deprecation_warning("v1beta2", "ResourceSlice", "1.35") is None  # deprecated from 1.36
    assert deprecation_warning("v1beta2", "ResourceSlice", "1.36") is not None
    assert deprecation_warning("v1beta2", "DeviceTaintRule", "1.37") is None  # deprecated from 1.39
    assert deprecation_warning("v1", "ResourceClaim", "1.37") is None


@pytest.mark.parametrize(
    ("flag", "version", "kind", "on"),
    [
        ("api/beta=true", "v1beta1", "ResourceSlice", True),
        ("api/beta=true", "v1alpha3", "DeviceTaintRule", False),
        ("api/alpha=true", "v1alpha3", "DeviceTaintRule", True),
        ("api/all=true", "v1beta2", "ResourceClaim", True),
        ("api/all=true,api/beta=false", "v1beta2", "ResourceClaim", False),  # later matcher in kube's order
        ("api/beta=false,api/all=true", "v1beta2", "ResourceClaim", False),  # order of the flag: irrelevant
        ("api/beta=true,resource.k8s.io/v1beta2=false", "v1beta2", "ResourceClaim", False),  # version wins
        ("api/ga=false", "v1", "ResourceClaim", False),
        ("resource.k8s.io/v1beta2", "v1beta2", "DeviceClass", True),  # a bare key means true
        ("resource.k8s.io/v1beta2=1", "v1beta2", "DeviceClass", True),  # strconv.ParseBool
        ("resource.k8s.io/v1beta2=F", "v1beta2", "DeviceClass", False),
        ("resource.k8s.io/v1beta2=true,resource.k8s.io/v1beta2=false", "v1beta2", "DeviceClass", False),
        ("resource.k8s.io/v1beta2/resourceclaims=true", "v1beta2", "ResourceClaim", True),  # one resource
        ("resource.k8s.io/v1beta2/resourceclaims=true", "v1beta2", "ResourceSlice", False),
        (
            "resource.k8s.io/v1beta2=true,resource.k8s.io/v1beta2/resourceslices=false",
            "v1beta2",
            "ResourceSlice",
            False,
        ),
        ("v1=true,apps/v1beta1=true,example.com/v1=false", "v1beta1", "ResourceClaim", False),  # other groups
    ],
)
def test_runtime_config_precedence(flag: str, version: str, kind: str, on: bool) -> None:
    assert enabled(parse_runtime_config(flag), version, kind) is on


def test_runtime_config_flags_accumulate() -> None:
    config = parse_runtime_config(["resource.k8s.io/v1beta1=true", "resource.k8s.io/v1beta2=true"])
    assert enabled(config, "v1beta1", "ResourceClaim") and enabled(config, "v1beta2", "ResourceClaim")
    assert str(config) == "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true"
    assert RuntimeConfig() == parse_runtime_config(None)


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("api/beta=yes", "invalid value api/beta=yes"),
        ("api/beta", "invalid value api/beta="),
        ("resource.k8s.io/v1beta2=yes", 'strconv.ParseBool: parsing "yes": invalid syntax'),
        (
            "resource.k8s.io/v1alpha2=true",
            "group version resource.k8s.io/v1alpha2 that has not been registered",
        ),
        ("resource.k8s.io/v1beta3=true", "has not been registered"),
        ("resource.k8s.io/v1beta2/ResourceClaims=true", "resource is always lowercase plural"),
    ],
)
def test_runtime_config_errors_stop_like_kube_apiserver(flag: str, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_runtime_config(flag)
