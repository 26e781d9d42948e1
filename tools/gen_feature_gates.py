"""Generate policies/feature_gates.yaml: every feature gate kube-apiserver registers in Kubernetes 1.35-1.37.

kube-apiserver's `--feature-gates` is backed by one registry holding the whole Kubernetes feature set
(pkg/features: kube-apiserver, kubelet, scheduler, controller-manager and proxy gates alike), the generic
apiserver, apiextensions, component-base and controller-manager gates (all listed, with their versioned
specs, in upstream's `test/compatibility_lifecycle/reference/versioned_feature_list.yaml`), and client-go's
gates, which pkg/features registers through an adapter (they are not in that YAML; they are read from
client-go's `features/known_features.go`). A cluster's gate string passed to every component is
therefore accepted by kube-apiserver whole; a name in none of these is rejected.

Inputs, per version (`VERSION=PATH`), from a kubernetes checkout at the release and client-go at the
matching tag (v0.35.x for 1.35, ...):

    python tools/gen_feature_gates.py \\
      --list 1.35=k8s-1.35/test/compatibility_lifecycle/reference/versioned_feature_list.yaml \\
      --client-go 1.35=client-go-v0.35.0/features/known_features.go  ... (1.36, 1.37 likewise)

`--sources` (default policies/feature_gates_sources.yaml) names where each input came from (written into
the output header) and holds per-version corrections, each with its reason: `drop` (a gate of the list
that the release does not have), `derive` (a version without its own list: the gates of another
version's list that existed then, by their specs) and `carry` (gates of an older list the release still
has, removed upstream later). A gate exists in version V when one of its specs has a version <= V; its
stage, default and lock at V are those of the last such spec. `--check` compares with the committed file
instead of writing it. Nothing here is imported at run time; `webhook.profile` reads the generated file.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

VERSIONS = ("1.35", "1.36", "1.37")
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "policies" / "feature_gates.yaml"
SOURCES = ROOT / "policies" / "feature_gates_sources.yaml"
STAGES = {"Alpha": "alpha", "Beta": "beta", "GA": "ga", "Deprecated": "deprecated", "PreAlpha": "prealpha"}

Entries = dict[str, list[dict[str, Any]]]  # gate name -> versioned specs (upstream YAML field names)


def _version(v: str) -> tuple[int, int]:
    major, minor = str(v).split(".")[:2]
    return int(major), int(minor)


def read_list(path: Path) -> Entries:
    """Upstream's versioned_feature_list.yaml: a list of {name, versionedSpecs}."""
    data = yaml.safe_load(path.read_text()) or []
    if not isinstance(data, list):
        raise SystemExit(f"{path}: not a versioned_feature_list.yaml (expected a list of gates)")
    return {str(e["name"]): list(e.get("versionedSpecs") or []) for e in data}


_CONST = re.compile(r'^\s*(\w+)\s+Feature\s*=\s*"([^"]+)"', re.M)
_MAP = re.compile(
    r"defaultVersionedKubernetesFeatureGates\s*=\s*map\[Feature\]VersionedSpecs\{(.*?)\n\}", re.S
)
_ENTRY = re.compile(r"^\t(\w+):\s*\{(.*?)^\t\},", re.S | re.M)
_SPEC = re.compile(r"\{([^{}]*)\}")
_FIELD = re.compile(r'(\w+):\s*(version\.MustParse\("([^"]+)"\)|\w+)')


def read_client_go(path: Path) -> Entries:
    """client-go's features/known_features.go: its versioned defaults, in the YAML's field names."""
    text = path.read_text()
    consts = dict(_CONST.findall(text))
    block = _MAP.search(text)
    if not block:
        raise SystemExit(
            f"{path}: no defaultVersionedKubernetesFeatureGates map (not client-go's known_features.go?)"
        )
    out: Entries = {}
    for ident, body in _ENTRY.findall(block.group(1)):
        specs = []
        for spec in _SPEC.findall(body):
            fields = {k: (ver or v) for k, v, ver in _FIELD.findall(spec)}
            specs.append(
                {
                    "default": fields.get("Default") == "true",
                    "lockToDefault": fields.get("LockToDefault") == "true",
                    "preRelease": fields["PreRelease"],
                    "version": fields["Version"],
                }
            )
        out[consts.get(ident, ident)] = specs
    if not out:
        raise SystemExit(f"{path}: no client-go gates found")
    return out


def state_at(specs: list[dict[str, Any]], version: str) -> dict[str, Any] | None:
    """{stage, default, locked} of a gate at `version`, or None when it does not exist yet."""
    known = [s for s in specs if _version(s["version"]) <= _version(version)]
    if not known:
        return None
    last = max(_version(s["version"]) for s in known)
    spec = [s for s in known if _version(s["version"]) == last][-1]  # the last spec of that version wins
    return {
        "stage": STAGES[spec["preRelease"]],
        "default": bool(spec["default"]),
        "locked": bool(spec.get("lockToDefault", False)),
    }


def gates_at(entries: Entries, version: str) -> dict[str, dict[str, Any]]:
    """Gate name -> state at `version` for every gate of `entries` that exists then."""
    out = {}
    for name, specs in entries.items():
        state = state_at(specs, version)
        if state is not None:
            out[name] = state
    return out


def build(
    lists: dict[str, Entries], client_go: dict[str, Entries], sources: dict[str, Any]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per version: the gates of its list (or the list it derives from), corrected, plus client-go's."""
    rules = sources.get("versions") or {}
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for version in VERSIONS:
        rule = rules.get(version) or {}
        base = version if version in lists else str(rule.get("derive") or "")
        if base not in lists:
            raise SystemExit(
                f"{version}: no --list {version}=FILE and no `derive` from a version with a list"
            )
        gates = gates_at(lists[base], version)
        for name, why in (rule.get("carry") or {}).items():
            src = str((why or {}).get("from", "")) if isinstance(why, dict) else ""
            if src not in lists or name not in lists[src]:
                raise SystemExit(f"{version}: carry {name}: not in the list of version {src!r}")
            state = state_at(lists[src][name], version)
            if state is None:
                raise SystemExit(f"{version}: carry {name}: it does not exist yet in {version}")
            gates[name] = state
        for name in rule.get("drop") or {}:
            if gates.pop(name, None) is None:
                raise SystemExit(f"{version}: drop {name}: not in the list (stale correction?)")
        if version not in client_go:
            raise SystemExit(f"{version}: no --client-go {version}=FILE")
        for name, state in gates_at(client_go[version], version).items():
            if name in gates:
                raise SystemExit(f"{version}: client-go gate {name} is also in the list")
            gates[name] = state
        result[version] = dict(sorted(gates.items()))
    return result


def render(versions: dict[str, dict[str, dict[str, Any]]], sources: dict[str, Any]) -> str:
    lines = [
        "# Feature gates kube-apiserver accepts in each Kubernetes version (name -> stage/default/locked at",
        "# that version). Generated by tools/gen_feature_gates.py; do not edit. Inputs and corrections:",
        "# policies/feature_gates_sources.yaml. Sources:",
    ]
    for version in VERSIONS:
        rule = (sources.get("versions") or {}).get(version) or {}
        if rule.get("derive"):
            carried = len(rule.get("carry") or {})
            lines.append(
                f"#   {version} list: derived from the {rule['derive']} list, {carried} gates carried"
            )
        for key in ("list", "client_go"):
            if rule.get(key):
                lines.append(f"#   {version} {key}: {rule[key]}")
        lines.append(f"#   {version}: {len(versions[version])} gates")
    body = yaml.safe_dump({"versions": versions}, sort_keys=False, width=120, default_flow_style=None)
    return "\n".join(lines) + "\n" + body


def _tagged(items: list[str], flag: str, ap: argparse.ArgumentParser) -> dict[str, Path]:
    out = {}
    for item in items:
        version, sep, path = item.partition("=")
        if not sep or version not in VERSIONS:
            ap.error(f"{flag} takes VERSION=FILE with VERSION one of {', '.join(VERSIONS)}: {item!r}")
        out[version] = Path(path)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="append", default=[], metavar="VERSION=FILE")
    ap.add_argument("--client-go", action="append", default=[], metavar="VERSION=FILE")
    ap.add_argument("--sources", type=Path, default=SOURCES)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    sources = yaml.safe_load(args.sources.read_text()) if args.sources.is_file() else {}
    lists = {v: read_list(p) for v, p in _tagged(args.list, "--list", ap).items()}
    client_go = {v: read_client_go(p) for v, p in _tagged(args.client_go, "--client-go", ap).items()}
    text = render(build(lists, client_go, sources or {}), sources or {})
    if args.check:
        if not args.out.is_file() or args.out.read_text() != text:
            print(f"{args.out}: out of date; run tools/gen_feature_gates.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
