"""Driver configuration schemas: which JSON Schema checks the opaque `parameters` of a config entry, by the
entry's driver name and the parameters' `apiVersion` and `kind`. Three sources: the bundled schemas of
the public drivers (`schemas/drivers/*.json`, their upstream sources in schemas/drivers/README.md), the
files of `--driver-schemas DIR`, and the `driverSchemas` entries of a policy. A schema from a directory
or a policy replaces the bundled one for the same driver, apiVersion and kind (a newer driver than the
bundle knows); several of them for the same key all apply. A schema without apiVersion and kind (`""`) is
for a driver whose parameters carry no type fields (DraNet's NetworkConfig): it checks every parameters
object of its drivers that no typed schema claims."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml

from webhook.config.data import schema_dir
from webhook.io.files import InputFileError, read_text
from webhook.model.errors import DraguardError, UsageError
from webhook.model.jsonsubset import unsupported

# bundled: the driver decodes strictly and validates at prepare, so a mismatch fails the Pod (error);
# custom: what a user supplied (a directory or a policy): draguard cannot know how strict the driver is
Origin = Literal["bundled", "custom"]
META = "x-draguard"  # the key of a schema file that says what it checks


class BadDriverSchema(DraguardError, ValueError):
    """A schema entry draguard cannot use: the message says what is wrong (its caller says where)."""


@dataclass(frozen=True, eq=False)
class DriverSchema:
    """One schema: the drivers it applies to, the parameters' apiVersion and kind, where it came from."""

    drivers: tuple[str, ...]
    api_version: str
    kind: str
    schema: Mapping[str, Any] = field(repr=False)
    origin: Origin = "custom"
    source: str = ""  # a file, or `policy <name>`


@dataclass(frozen=True)
class DriverSchemas:
    """The schemas in force: the bundled ones, with what a directory or the policy adds or replaces."""

    extra: tuple[DriverSchema, ...] = ()

    def lookup(self, driver: str, api_version: str, kind: str) -> list[DriverSchema]:
        """The schemas that check these parameters (empty: nothing known of them)."""
        found = [
            s for s in self.extra if driver in s.drivers and s.api_version == api_version and s.kind == kind
        ]
        if found:
            return found
        one = _bundled_index().get((driver, api_version, kind))
        if one is not None:
            return [one]
        if api_version or kind:  # no typed schema: the driver's untyped one, if it has one
            return self.lookup(driver, "", "")
        return []

    def knows_driver(self, driver: str) -> bool:
        """Whether any schema names this driver (its parameters of another kind are worth a note)."""
        return driver in _bundled_drivers() or any(driver in s.drivers for s in self.extra)

    def kinds_of(self, driver: str) -> list[str]:
        """The `apiVersion kind` pairs known for a driver, sorted."""
        pairs = {(s.api_version, s.kind) for s in (*bundled(), *self.extra) if driver in s.drivers}
        return [f"{a} {k}" if k else "untyped parameters" for a, k in sorted(pairs)]


NONE = DriverSchemas()


def with_extra(base: DriverSchemas, extra: Iterable[DriverSchema]) -> DriverSchemas:
    more = tuple(extra)
    return base if not more else DriverSchemas(base.extra + more)


def from_document(data: Any, source: str, origin: Origin = "custom") -> DriverSchema:
    """A schema file's content: a JSON Schema whose `x-draguard` says `drivers`, `apiVersion`, `kind`
    (BadDriverSchema when it is not usable)."""
    if not isinstance(data, dict) or not isinstance(data.get(META), dict):
        raise BadDriverSchema(f"a driver schema is a JSON Schema object with an {META!r} section")
    meta = data[META]
    drivers = meta.get("drivers")
    if isinstance(meta.get("driver"), str):
        drivers = [meta["driver"]]
    return _entry(drivers, meta.get("apiVersion"), meta.get("kind"), data, source, origin)


def from_policy_entry(data: Any, source: str) -> DriverSchema:
    """A policy's `driverSchemas` item: `{driver, apiVersion, kind, schema}`."""
    if not isinstance(data, dict):
        raise BadDriverSchema("expected {driver, apiVersion, kind, schema}")
    unknown = sorted(str(k) for k in data if k not in ("driver", "apiVersion", "kind", "schema"))
    if unknown:
        raise BadDriverSchema(f"unknown key {unknown[0]!r} (expected driver, apiVersion, kind, schema)")
    return _entry([data.get("driver")], data.get("apiVersion"), data.get("kind"), data.get("schema"), source)


def _entry(
    drivers: Any, api_version: Any, kind: Any, schema: Any, source: str, origin: Origin = "custom"
) -> DriverSchema:
    if not isinstance(drivers, list) or not drivers or not all(isinstance(d, str) and d for d in drivers):
        raise BadDriverSchema("`driver` must name a driver (e.g. gpu.nvidia.com)")
    if api_version in (None, "") and kind in (None, ""):
        api_version = kind = ""  # untyped parameters (e.g. DraNet's): no apiVersion or kind to key on
    for name, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or (not value and (api_version or kind)):
            raise BadDriverSchema(f"`{name}` must be a non-empty string")
    if not isinstance(schema, dict):
        raise BadDriverSchema("`schema` must be a JSON Schema object")
    problems = unsupported(schema)
    if problems:
        raise BadDriverSchema(f"schema {problems[0]}")
    return DriverSchema(tuple(drivers), api_version, kind, schema, origin, source)


def load_dir(path: str) -> tuple[DriverSchema, ...]:
    """The schemas of `--driver-schemas DIR`: each `*.json`, `*.yaml` or `*.yml` file one schema."""
    root = Path(path)
    if not root.is_dir():
        raise UsageError(f"--driver-schemas {path}: not a directory")
    out = []
    for f in sorted(root.iterdir()):
        if f.suffix not in (".json", ".yaml", ".yml") or not f.is_file():
            continue
        try:
            text = read_text(str(f))
            data = json.loads(text) if f.suffix == ".json" else yaml.safe_load(text)
            out.append(from_document(data, f"--driver-schemas {f}"))
        except (InputFileError, ValueError, yaml.YAMLError) as e:  # BadDriverSchema too
            raise UsageError(f"--driver-schemas {f}: {e}") from e
    return tuple(out)


@lru_cache(maxsize=1)
def bundled() -> tuple[DriverSchema, ...]:
    """The schemas shipped with draguard (schemas/drivers/, or the installed package's copy)."""
    root = schema_dir() / "drivers"
    if not root.is_dir():
        return ()
    return tuple(
        from_document(json.loads(f.read_text()), f"schemas/drivers/{f.name}", "bundled")
        for f in sorted(root.glob("*.json"))
    )


@lru_cache(maxsize=1)
def _bundled_index() -> Mapping[tuple[str, str, str], DriverSchema]:
    return {(d, s.api_version, s.kind): s for s in bundled() for d in s.drivers}


@lru_cache(maxsize=1)
def _bundled_drivers() -> frozenset[str]:
    return frozenset(d for s in bundled() for d in s.drivers)
