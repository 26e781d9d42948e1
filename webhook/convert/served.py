"""Which `resource.k8s.io` versions a kube-apiserver of Kubernetes 1.35–1.37 serves, and its
`--runtime-config` flag (parsed and applied as kube-apiserver does).

Facts, from upstream:
- A version of a kind is *registered* from the release it was introduced in until the release it is
  removed in (`k8s.io/api` `resource/<version>/zz_generated.prerelease-lifecycle.go`, tabled in LIFECYCLE).
- Beta and alpha versions are *disabled by default* (KEP-3136, "beta APIs off by default" since 1.24:
  `pkg/controlplane/instance.go` `betaAPIGroupVersionsDisabledByDefault` /
  `alphaAPIGroupVersionsDisabledByDefault`, enforced by `TestNewBetaResourcesEnabledByDefault`);
  `resource.k8s.io/v1` is enabled by default.
- `--runtime-config` is a `cliflag.ConfigurationMap` (comma-separated `key=value`, a bare `key` means
  `key=`, repeated flags accumulate, a later key wins). `api/all`, `api/ga`, `api/beta`, `api/alpha`
  (value exactly `true` or `false`) apply first in that order, then `<group>/<version>` keys, then
  `<group>/<version>/<resource>` keys (highest priority); values of those are Go `strconv.ParseBool`,
  empty meaning true (`k8s.io/apiserver/pkg/server/resourceconfig/helpers.go`
  `MergeAPIResourceConfigs`). A key of an unregistered version of a registered group (e.g.
  `resource.k8s.io/v1alpha2`) stops kube-apiserver; keys of other groups are not checked here.
- A served version whose kind is deprecated (deprecated release <= target) answers every request with
  a warning (`k8s.io/apiserver/pkg/endpoints/deprecation` `WarningMessage`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webhook.model.errors import UsageError

GROUP = "resource.k8s.io"
PREFIX = GROUP + "/"

# version → kind → (introduced, deprecated, removed) as (major, minor); None = never (GA)
Release = tuple[int, int]
_V1BETA1 = ((1, 32), (1, 35), (1, 38))
_V1BETA2 = ((1, 33), (1, 36), (1, 39))
LIFECYCLE: dict[str, dict[str, tuple[Release, Release | None, Release | None]]] = {
    "v1": {
        "DeviceClass": ((1, 34), None, None),
        "ResourceClaim": ((1, 34), None, None),
        "ResourceClaimTemplate": ((1, 34), None, None),
        "ResourceSlice": ((1, 34), None, None),
        "DeviceTaintRule": ((1, 37), None, None),
    },
    "v1beta1": {
        "DeviceClass": _V1BETA1,
        "ResourceClaim": _V1BETA1,
        "ResourceClaimTemplate": _V1BETA1,
        "ResourceSlice": _V1BETA1,
    },
    "v1beta2": {
        "DeviceClass": _V1BETA2,
        "ResourceClaim": _V1BETA2,
        "ResourceClaimTemplate": _V1BETA2,
        "ResourceSlice": _V1BETA2,
        "DeviceTaintRule": ((1, 36), (1, 39), (1, 42)),
    },
    "v1alpha3": {
        "DeviceTaintRule": ((1, 33), (1, 36), (1, 39)),
        "ResourcePoolStatusRequest": ((1, 36), (1, 39), (1, 42)),
    },
}
RESOURCES = {  # kind → REST resource (the name `<group>/<version>/<resource>` keys use)
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "ResourceSlice": "resourceslices",
    "DeviceTaintRule": "devicetaintrules",
    "ResourcePoolStatusRequest": "resourcepoolstatusrequests",
}

_GA = re.compile(r"v\d+$")
_BETA = re.compile(r"v\d+beta\d+$")
_ALPHA = re.compile(r"v\d+alpha\d+$")
_MATCHERS = {  # applied in this order
    "api/all": lambda v: True,
    "api/ga": lambda v: _GA.match(v) is not None,
    "api/beta": lambda v: _BETA.match(v) is not None,
    "api/alpha": lambda v: _ALPHA.match(v) is not None,
}
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def _release(version: str) -> Release:
    major, _, minor = version.partition(".")
    return int(major), int(minor)


def registered_versions(k8s_version: str) -> list[str]:
    """The resource.k8s.io versions kube-apiserver `k8s_version` registers (some kind not removed yet)."""
    rel = _release(k8s_version)
    return [
        v
        for v, kinds in LIFECYCLE.items()
        if any(intro <= rel and (removed is None or rel < removed) for intro, _, removed in kinds.values())
    ]


def kind_exists(version: str, kind: str, k8s_version: str) -> bool:
    """Whether `resource.k8s.io/<version>` has `kind` in Kubernetes `k8s_version`."""
    life = LIFECYCLE.get(version, {}).get(kind)
    if life is None:
        return False
    intro, _, removed = life
    rel = _release(k8s_version)
    return intro <= rel and (removed is None or rel < removed)


def deprecation_warning(version: str, kind: str, k8s_version: str) -> str | None:
    """The warning kube-apiserver sends for a deprecated served kind (None when not deprecated)."""
    life = LIFECYCLE.get(version, {}).get(kind)
    if life is None or life[1] is None or _release(k8s_version) < life[1]:
        return None
    (dmaj, dmin), removed = life[1], life[2]
    text = f"{PREFIX}{version} {kind} is deprecated in v{dmaj}.{dmin}+"
    if removed is not None:
        text += f", unavailable in v{removed[0]}.{removed[1]}+"
    return text


@dataclass(frozen=True)
class RuntimeConfig:
    """kube-apiserver's `--runtime-config`, as (key, value) pairs in the order given (a later value of
    the same key wins). Plain tuples: picklable, hashable, cheap to pass to worker processes."""

    entries: tuple[tuple[str, str], ...] = ()

    def mapping(self) -> dict[str, str]:
        return dict(self.entries)

    def __str__(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.entries)


DEFAULT = RuntimeConfig()
# Every version the API server has: for objects that already exist in a cluster (a state directory, e.g.
# `kubectl get resourceslices.v1beta2.resource.k8s.io -o yaml`): the API server stored them (as v1), so the
# version they are written in was served when they were made, whatever the flags of today.
EVERY_VERSION = RuntimeConfig((("api/all", "true"),))


def parse_runtime_config(texts: str | list[str] | None, k8s_version: str = "1.37") -> RuntimeConfig:
    """Parse one or more `--runtime-config` values (kube-apiserver's syntax) and check them as
    kube-apiserver `k8s_version` does at start-up; raises `UsageError` with its message."""
    if texts is None:
        texts = []
    elif isinstance(texts, str):
        texts = [texts]
    entries: list[tuple[str, str]] = []
    for text in texts:
        for item in text.split(","):
            if not item:
                continue
            key, sep, value = item.partition("=")
            entries.append((key.strip(), value.strip() if sep else ""))
    config = RuntimeConfig(tuple(entries))
    _check(config, k8s_version)
    return config


def _parse_bool(key: str, value: str) -> bool:
    if value == "":
        return True
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise UsageError(
        f'--runtime-config: invalid value of {key}: {value}, err: strconv.ParseBool: parsing "{value}": '
        "invalid syntax"
    )


def _check(config: RuntimeConfig, k8s_version: str) -> None:
    registered = registered_versions(k8s_version)
    for key, value in config.mapping().items():
        if key in _MATCHERS:
            if value not in ("true", "false"):
                raise UsageError(f"--runtime-config: invalid value {key}={value}")
            continue
        tokens = key.split("/")
        if len(tokens) < 2 or len(tokens) > 3:
            continue  # kube-apiserver ignores these keys too (e.g. the core group's `v1`)
        if tokens[0] != GROUP:
            continue  # another API group: not a DRA concern (kube-apiserver checks it)
        if tokens[1] not in registered:
            raise UsageError(
                f"--runtime-config: group version {tokens[0]}/{tokens[1]} that has not been registered "
                f"(Kubernetes {k8s_version} has {', '.join(PREFIX + v for v in registered)})"
            )
        _parse_bool(key, value)
        if len(tokens) == 3 and tokens[2].lower() != tokens[2]:
            raise UsageError(
                f"--runtime-config: invalid key {key}: group/version/resource and resource is always "
                f"lowercase plural, not {tokens[2]!r}"
            )


def enabled(config: RuntimeConfig, version: str, kind: str) -> bool:
    """Whether `resource.k8s.io/<version>` `kind` is enabled: the default (GA on, beta and alpha off),
    then api/all, api/ga, api/beta, api/alpha, then `<group>/<version>`, then `<group>/<version>/<resource>`."""
    on = _GA.match(version) is not None
    values = config.mapping()
    for key, matches in _MATCHERS.items():
        if key in values and matches(version):
            on = values[key] == "true"
    gv = f"{PREFIX}{version}"
    if gv in values:
        on = _parse_bool(gv, values[gv])
    gvr = f"{gv}/{RESOURCES.get(kind, kind.lower() + 's')}"
    if gvr in values:
        on = _parse_bool(gvr, values[gvr])
    return on


@dataclass(frozen=True)
class Serving:
    """How kube-apiserver answers an object of `resource.k8s.io/<version>` `kind`."""

    served: bool
    message: str = ""  # why not (served False), or the deprecation warning (served True)


def serving(api_version: str, kind: str, k8s_version: str, config: RuntimeConfig = DEFAULT) -> Serving:
    """Whether `api_version` (a resource.k8s.io version) `kind` is served by kube-apiserver
    `k8s_version` started with `config`; the message says why not and what to do."""
    version = api_version[len(PREFIX) :]
    not_found = f'no matches for kind "{kind}" in version "{api_version}"'
    if version not in registered_versions(k8s_version):
        known = ", ".join(PREFIX + v for v in registered_versions(k8s_version))
        hint = ""
        if version == "v1alpha2":
            hint = (
                " (v1alpha2 is the classic DRA API, removed in Kubernetes 1.31: rewrite the object for "
                f"{PREFIX}v1)"
            )
        return Serving(
            False, f"{not_found}: Kubernetes {k8s_version} has no {api_version}{hint}; it has {known}"
        )
    if not kind_exists(version, kind, k8s_version):
        where = [PREFIX + v for v in registered_versions(k8s_version) if kind_exists(v, kind, k8s_version)]
        has = f"; {kind} is served as {' or '.join(where)}" if where else ""
        return Serving(False, f"{not_found}: Kubernetes {k8s_version} has no {kind} in {api_version}{has}")
    if not enabled(config, version, kind):
        if _GA.match(version):
            return Serving(
                False,
                f"{not_found}: the API server's --runtime-config ({config}) disables {api_version} {kind}",
            )
        stage = "alpha" if _ALPHA.match(version) else "beta"
        return Serving(
            False,
            f"{not_found}: Kubernetes {k8s_version} does not serve {api_version} by default ({stage} APIs "
            f"are off unless enabled): migrate the file with `draguard convert --to v1 FILE`, or, if your "
            f"API server runs with --runtime-config {api_version}=true, validate with that same flag",
        )
    return Serving(True, deprecation_warning(version, kind, k8s_version) or "")
