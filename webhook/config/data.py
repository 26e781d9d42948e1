"""Where draguard's data lives: `schemas/` and `policies/` of the checkout, or the copies installed
with the package (a pre-commit or pip install has no checkout)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[2]


def _dir(name: str, env: str) -> Path:
    override = os.environ.get(env)
    if override:
        return Path(override)
    local = _CHECKOUT / name
    if local.is_dir():
        return local
    return Path(str(resources.files(f"webhook._data.{name}")))


def schema_dir() -> Path:
    """The generated JSON Schemas (`schemas/<Kind>.json`)."""
    return _dir("schemas", "DRAGUARD_SCHEMAS")


def policies_dir() -> Path:
    """Version profiles (`policies/profiles/<version>.yaml`) and policy files."""
    return _dir("policies", "DRAGUARD_POLICIES")
