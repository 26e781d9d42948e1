"""Kubernetes version profiles: which DRA feature gates exist in a version, their defaults, and
which are locked. Profiles live in `policies/profiles/<version>.yaml`; `--feature-gates` overrides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import yaml

from webhook.data import policies_dir
from webhook.model.errors import UsageError

PROFILE_DIR = policies_dir() / "profiles"
SUPPORTED_VERSIONS = ("1.35", "1.36", "1.37")
DEFAULT_VERSION = "1.37"


@dataclass(frozen=True)
class Gate:
    name: str
    stage: str  # "alpha" | "beta" | "ga" | "deprecated"
    default: bool
    locked: bool


@dataclass(frozen=True)
class Profile:
    version: str
    gates: Mapping[str, Gate]  # every DRA gate this version knows
    values: Mapping[str, bool]  # effective values after overrides

    def enabled(self, gate: str) -> bool:
        """A gate unknown to this version is off (its fields do not exist there)."""
        return self.values.get(gate, False)

    def known(self, gate: str) -> bool:
        return gate in self.gates


@cache
def _read(version: str) -> dict[str, Gate]:
    path = PROFILE_DIR / f"{version}.yaml"
    if version not in SUPPORTED_VERSIONS or not path.is_file():
        raise UsageError(
            f"unsupported Kubernetes version {version!r}: choose one of {', '.join(SUPPORTED_VERSIONS)}"
        )
    data = yaml.safe_load(path.read_text())
    gates = {}
    for name, g in (data.get("gates") or {}).items():
        gates[name] = Gate(name, str(g["stage"]), bool(g["default"]), bool(g.get("locked", False)))
    return gates


def parse_feature_gates(text: str) -> dict[str, bool]:
    """Parse `Name=true,Other=false` (kube-apiserver's `--feature-gates` syntax)."""
    out: dict[str, bool] = {}
    for item in filter(None, (s.strip() for s in (text or "").split(","))):
        name, sep, value = item.partition("=")
        v = value.strip().lower()
        if not sep or v not in ("true", "false"):
            raise UsageError(f"--feature-gates: {item!r} is not Name=true or Name=false")
        out[name.strip()] = v == "true"
    return out


def load_profile(version: str = DEFAULT_VERSION, overrides: Mapping[str, bool] | None = None) -> Profile:
    """The profile for `version` with `overrides` applied; unknown or locked gates are usage errors."""
    gates = _read(version)
    values = {name: g.default for name, g in gates.items()}
    for name, value in (overrides or {}).items():
        g = gates.get(name)
        if g is None:
            raise UsageError(
                f"feature gate {name!r} does not exist in Kubernetes {version}; known DRA gates: "
                + ", ".join(sorted(gates))
            )
        if g.locked and value != g.default:
            raise UsageError(
                f"feature gate {name} is locked to {str(g.default).lower()} in Kubernetes {version}"
            )
        values[name] = value
    return Profile(version, gates, values)
