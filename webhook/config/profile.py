"""Kubernetes version profiles: which DRA feature gates exist in a version, their defaults, and
which are locked. Profiles live in `policies/profiles/<version>.yaml`; `--feature-gates` overrides.

`--feature-gates` takes a cluster's whole kube-apiserver gate string: every gate that version knows
(`policies/feature_gates.yaml`, generated from upstream by tools/gen_feature_gates.py) is accepted and
non-DRA gates are ignored; a malformed item, an unknown name or a locked gate set against its lock is a
usage error worded as kube-apiserver words it."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypedDict

import yaml

from webhook.config.data import policies_dir
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


# libyaml's loader when PyYAML has it: the 55 KB gate list is read by every run (0.12 s in Python, 0.02 in C)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str) -> dict[str, Any]:
    """One of our own generated data files, a mapping (plain YAML: the same objects whichever loader
    reads them)."""
    data = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader, C or Python
    return data if isinstance(data, dict) else {}


# A line of the generated gate table: `    Name: {stage: beta, default: true, locked: false}` under
# `  'VERSION':` (tools/gen_feature_gates.py writes nothing else below `versions:`)
_VERSION_LINE = re.compile(r"  '(\d+\.\d+)':")
_GATE_LINE = re.compile(r"    (\w+): \{stage: (\w+), default: (true|false), locked: (true|false)\}")


class GateEntry(TypedDict):
    """One gate of one version in the generated table."""

    stage: str
    default: bool
    locked: bool


GateTable = dict[str, dict[str, GateEntry]]  # version -> gate name -> entry


def read_gate_table(text: str) -> GateTable:
    """`versions` of the generated gate table, as YAML reads it: line by line when every line has the
    generator's shape (2 ms; libyaml builds the same in 40 ms, paid by every run), else by YAML."""
    versions: GateTable = {}
    gates: dict[str, GateEntry] | None = None
    lines = iter(text.splitlines())
    for line in lines:
        if line == "versions:":
            break
        if line and not line.startswith("#"):
            return _gate_table_by_yaml(text)
    for line in lines:
        m = _GATE_LINE.fullmatch(line)
        if m is not None and gates is not None:
            name, stage, default, locked = m.groups()
            gates[name] = {"stage": stage, "default": default == "true", "locked": locked == "true"}
            continue
        v = _VERSION_LINE.fullmatch(line)
        if v is None or v.group(1) in versions:
            return _gate_table_by_yaml(text)
        gates = versions[v.group(1)] = {}
    return versions


def _gate_table_by_yaml(text: str) -> GateTable:
    versions = _load_yaml(text).get("versions")
    return versions if isinstance(versions, dict) else {}


@lru_cache(maxsize=16)  # bounded: keyed by supported version (and kind)
def _all_gates(version: str) -> dict[str, Gate]:
    """Every gate kube-apiserver of `version` accepts (generated data; read once per version)."""
    gates = read_gate_table((policies_dir() / "feature_gates.yaml").read_text()).get(version) or {}
    return {
        name: Gate(name, str(g["stage"]), bool(g["default"]), bool(g.get("locked", False)))
        for name, g in gates.items()
    }


# component-base's own gates: AllAlpha=true / AllBeta=true turn on every alpha / beta gate not set
# explicitly (known to every Kubernetes component).
ALL_STAGE_GATES = {"AllAlpha": "alpha", "AllBeta": "beta"}


def known_gate_names(version: str) -> frozenset[str]:
    """Every gate name `--feature-gates` accepts for `version` (all components' gates, DRA ones too)."""
    return frozenset(_all_gates(version)) | frozenset(_read(version)) | frozenset(ALL_STAGE_GATES)


@lru_cache(maxsize=16)  # bounded: keyed by supported version (and kind)
def _read(version: str) -> dict[str, Gate]:
    path = PROFILE_DIR / f"{version}.yaml"
    if version not in SUPPORTED_VERSIONS or not path.is_file():
        raise UsageError(
            f"unsupported Kubernetes version {version!r}: choose one of {', '.join(SUPPORTED_VERSIONS)}"
        )
    data = _load_yaml(path.read_text())
    gates = {}
    for name, g in (data.get("gates") or {}).items():
        gates[name] = Gate(name, str(g["stage"]), bool(g["default"]), bool(g.get("locked", False)))
    return gates


_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # Go strconv.ParseBool
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def _flag_error(text: str, reason: str) -> UsageError:
    """kube-apiserver's wording: pflag wraps the feature gate's error with the whole flag value."""
    return UsageError(f'invalid argument "{text}" for "--feature-gates" flag: {reason}')


def parse_feature_gates(text: str) -> dict[str, bool]:
    """Parse `Name=true,Other=false` as kube-apiserver's `--feature-gates` does (component-base
    featuregate.Set: empty items skipped, names and values trimmed, values as Go's ParseBool)."""
    out: dict[str, bool] = {}
    for item in (text or "").split(","):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise _flag_error(text, f"missing bool value for {name}")
        if value not in _TRUE + _FALSE:
            raise _flag_error(
                text,
                f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": invalid syntax',
            )
        out[name] = value in _TRUE
    return out


def load_profile(
    version: str = DEFAULT_VERSION, overrides: Mapping[str, bool] | None = None, flag: str | None = None
) -> Profile:
    """The profile for `version` with `overrides` applied; unknown or locked gates are usage errors."""
    gates = _read(version)
    everything = _all_gates(version)
    values = {name: g.default for name, g in gates.items()}
    text = (
        flag if flag is not None else ",".join(f"{k}={str(v).lower()}" for k, v in (overrides or {}).items())
    )
    for name, value in (overrides or {}).items():
        if name in ALL_STAGE_GATES:
            for dra in gates.values():
                if dra.stage == ALL_STAGE_GATES[name] and dra.name not in (overrides or {}):
                    values[dra.name] = value
            continue
        g = gates.get(name) or everything.get(name)
        if g is None:
            hint = ""
            close = difflib.get_close_matches(name, sorted(known_gate_names(version)), n=1, cutoff=0.8)
            if close:
                hint = f" (Kubernetes {version} has {close[0]})"
            raise _flag_error(text, f"unrecognized feature gate: {name}{hint}")
        if g.locked and value != g.default:
            v, d = str(value).lower(), str(g.default).lower()
            raise _flag_error(text, f"cannot set feature gate {name} to {v}, feature is locked to {d}")
        if name in gates:
            values[name] = value  # non-DRA gates are accepted and ignored
    return Profile(version, gates, values)
