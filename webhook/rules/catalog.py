"""Imports every rule module of this package, so the registry is complete before anything runs."""

from __future__ import annotations

import importlib
import pkgutil

import webhook.rules as _pkg

MODULES = sorted(m.name for m in pkgutil.iter_modules(_pkg.__path__) if m.name not in ("catalog", "registry"))
for _name in MODULES:
    importlib.import_module(f"{_pkg.__name__}.{_name}")
