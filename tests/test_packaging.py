"""Packaging and layering: every package is installed, data is found without a checkout, and no
module imports a layer above its own."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Lower layers must not import higher ones (kopf-style layering, see STYLE.md).
LAYERS = [
    {
        "webhook.model",
        "webhook.data",
        "webhook.profile",
        "webhook.context",
        "webhook.report",
        "webhook.policy",
        "webhook.convert.served",
    },
    {
        "webhook.io",
        "webhook.schema",
        "webhook.cel",
        "webhook.rules",
        "webhook.defaults",
        "webhook.skew",
        "webhook.convert.v1beta1",
        "webhook.convert.rewrite",
        "webhook.convert.tree",
    },
    {
        "webhook.validate",
        "webhook.repocontext",
        "webhook.state",
        "webhook.engine",
        "webhook.convert.pipeline",
    },
    {"webhook.cli", "webhook.admission", "webhook.server", "webhook.simulate"},
]


def _layer(module: str) -> int | None:
    for i, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return i
    return None


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
    for path in (ROOT / "webhook").rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        own = _layer(module)
        if own is None:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
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
            "import sys, webhook.data as d; from webhook.cli.main import main; "
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
