"""Packaging and layering: every package is installed, data is found without a checkout, and no
module imports a layer above its own."""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# Lower layers must not import higher ones (kopf-style layering, see STYLE.md). The import contracts in
# pyproject.toml ([tool.importlinter], docs/architecture.md) draw the layers of a request; this keeps the
# finer order of the top-level modules they do not cover yet. A module's layer is that of the longest
# name that holds it (webhook.state.inventory, the index the rules read, sits below webhook.state).
LAYERS = [
    {
        "webhook.model",
        "webhook.config.data",
        "webhook.config.profile",
        "webhook.config.context",
        "webhook.model.report",
        "webhook.config.policy",
        "webhook.convert.served",
    },
    {
        "webhook.io",
        "webhook.schema",
        "webhook.cel",
        "webhook.rules",
        "webhook.apiserver.defaults",
        "webhook.apiserver.skew",
        "webhook.convert.v1beta1",
        "webhook.convert.rewrite",
        "webhook.convert.tree",
        "webhook.state.inventory",
    },
    {
        "webhook.validate",
        "webhook.validate.ignores",
        "webhook.state",
        "webhook.engine",
        "webhook.validate.versioned",
    },
    {"webhook.cli", "webhook.offline", "webhook.admission", "webhook.server", "webhook.simulate"},
]


def _layer(module: str) -> int | None:
    holders = [
        (len(n), i)
        for i, names in enumerate(LAYERS)
        for n in names
        if module == n or module.startswith(n + ".")
    ]
    return max(holders)[1] if holders else None


def test_every_package_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "webhook").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_layering() -> None:
    bad = []
    for path, targets in _absolute_imports().items():
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        own = _layer(module)
        if own is None:
            continue
        for t in targets:
            layer = _layer(t)
            if layer is not None and layer > own:
                bad.append(f"{module} imports {t}")
    assert not bad, bad


def test_installed_package_finds_its_data_without_a_checkout(tmp_path: Path) -> None:
    """A plain (non-editable) install, as pre-commit makes it, validates with its own schemas/profiles."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    manifest = tmp_path / "s.yaml"
    manifest.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {}\n")
    env = {**os.environ, "PYTHONPATH": str(target)}
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, webhook.config.data as d; from webhook.cli.main import main; "
            "assert str(d.schema_dir()).startswith(sys.argv[1]), d.schema_dir(); "
            "sys.exit(main(['validate', '--k8s-version', '1.36', sys.argv[2]]))",
            str(target),
            str(manifest),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    # the bundled driver configuration schemas are data of the package too
    bad = tmp_path / "c.yaml"
    bad.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n  config:\n"
        "  - opaque:\n      driver: gpu.nvidia.com\n      parameters: {apiVersion: resource.nvidia.com/v1beta1,"
        " kind: GpuConfig, sharing: {strategy: Timeslicing}}\n"
    )
    p = subprocess.run(
        [sys.executable, "-m", "webhook.cli.main", "validate", str(bad)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode == 1 and "spec.config[0].opaque.parameters.sharing.strategy" in p.stdout, (
        p.stdout + p.stderr
    )


# The modules each runtime dependency provides to webhook/ (top-level import names).
RUNTIME_MODULES = {
    "pyyaml": {"yaml"},
    "google-re2": {"re2"},
    "flask": {"flask"},
    "gunicorn": {"gunicorn"},
    "cryptography": {"cryptography"},
    "prometheus-client": {"prometheus_client"},
    "immutables": {"immutables"},
    "kubernetes": {"kubernetes"},
    "ruamel-yaml": {"ruamel"},
}
# Modules webhook/ imports that come with a runtime dependency (its own requirement, checked below).
BORROWED = {"werkzeug": "flask", "urllib3": "kubernetes"}


def _dist_name(requirement: str) -> str:
    """PEP 503 normalised distribution name of a requirement string (`ruamel.yaml>=0.18` -> ruamel-yaml)."""
    name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert name, requirement
    return re.sub(r"[-_.]+", "-", name.group(0)).lower()


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level modules outside the standard library that webhook/ imports → the files importing them."""
    found: dict[str, set[str]] = {}
    for path, names in _absolute_imports().items():
        for name in names:
            top = name.split(".")[0]
            if top != "webhook" and top not in sys.stdlib_module_names:
                found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


@functools.cache
def _absolute_imports() -> dict[Path, tuple[str, ...]]:
    """Each module of webhook/ → the modules it imports by absolute name (parsed once per session)."""
    out: dict[Path, tuple[str, ...]] = {}
    for path in (ROOT / "webhook").rglob("*.py"):
        names: list[str] = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.append(node.module)
            elif isinstance(node, ast.Import):
                names.extend(a.name for a in node.names)
        out[path] = tuple(names)
    return out


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project


def test_runtime_dependencies_are_exactly_what_the_product_imports() -> None:
    """`pip install .` brings what webhook/ imports at run time and nothing else: a module imported without
    a runtime dependency providing it fails an installed draguard; a dependency no module of webhook/
    imports (a test tool) belongs in `[test]`."""
    runtime = {_dist_name(r) for r in _project()["dependencies"]}
    assert runtime == set(RUNTIME_MODULES), (
        f"pyproject [project] dependencies and RUNTIME_MODULES differ: {sorted(runtime ^ set(RUNTIME_MODULES))}"
    )
    imported = _third_party_imports()
    provided = set().union(*RUNTIME_MODULES.values(), BORROWED)
    missing = {m: sorted(files) for m, files in imported.items() if m not in provided}
    assert not missing, f"webhook/ imports modules no runtime dependency provides: {missing}"
    unused = sorted(d for d, modules in RUNTIME_MODULES.items() if not modules & set(imported))
    assert not unused, f"runtime dependencies webhook/ never imports (move them to [test]): {unused}"


def test_test_tools_stay_out_of_the_product() -> None:
    tools = {_dist_name(r) for r in _project()["optional-dependencies"]["test"]}
    assert not tools & set(RUNTIME_MODULES), "a runtime dependency is listed in [test] too"
    imported = _third_party_imports()
    for module in ("jsonschema", "jsonpatch", "kubernetes_validate", "hypothesis", "pytest"):
        assert module not in imported, f"webhook/ imports the test tool {module}: {sorted(imported[module])}"


def test_modules_borrowed_from_a_dependency_are_its_requirements() -> None:
    """werkzeug comes with flask and urllib3 with kubernetes: webhook/ may import them only while the
    installed dependency still requires them (else they become runtime dependencies of their own)."""
    for module, dist in BORROWED.items():
        required = {_dist_name(r) for r in metadata.requires(dist) or [] if "extra ==" not in r}
        assert module in required, f"{dist} no longer requires {module}: add it to [project] dependencies"
