"""One exception tree: every exception class draguard defines derives from DraguardError, except control
flow private to its module (a leading underscore, or fastyaml's Fallback, caught where it is raised); the
tree's documentation in webhook/model/errors.py names each of them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import webhook
from webhook.model import errors
from webhook.model.errors import DraguardError

CONTROL_FLOW = {"webhook.io.fastyaml.Fallback"}  # raised and caught inside the YAML fast path


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(webhook.__path__, "webhook."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_exception_is_a_draguard_error() -> None:
    classes = _exception_classes()
    assert len(classes) > 20
    stray = [
        q
        for q, cls in classes.items()
        if not issubclass(cls, DraguardError) and not cls.__name__.startswith("_") and q not in CONTROL_FLOW
    ]
    assert not stray, f"derive from webhook.model.errors.DraguardError: {stray}"


def test_the_tree_is_documented_in_one_place() -> None:
    doc = Path(errors.__file__).read_text()
    public = {cls.__name__ for q, cls in _exception_classes().items() if issubclass(cls, DraguardError)}
    missing = sorted(n for n in public if n not in doc)
    assert not missing, f"name them in webhook/model/errors.py's tree: {missing}"
