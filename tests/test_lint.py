"""ruff (lint + format) and mypy run as part of the test command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint() -> None:
    p = _run("ruff", "check", ".")
    assert p.returncode == 0, p.stdout + p.stderr


def test_ruff_format() -> None:
    p = _run("ruff", "format", "--check", ".")
    assert p.returncode == 0, p.stdout + p.stderr


def test_mypy_package() -> None:
    p = _run("mypy", "webhook")
    assert p.returncode == 0, p.stdout + p.stderr


_LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
)


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    # the package under test is the one in `cwd` (first on the path), not an installed copy
    env = {"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", _LINT_IMPORTS, "--no-cache"], cwd=cwd, capture_output=True, text=True, env=env
    )


def test_import_contracts_are_kept() -> None:
    p = _lint_imports(ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 broken" in p.stdout


def test_an_engine_module_that_reads_the_rules_breaks_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "webhook", tmp_path / "webhook", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "webhook" / "engine" / "shortcut.py").write_text("from webhook.rules import registry\n")
    p = _lint_imports(tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "webhook.engine.shortcut -> webhook.rules.registry" in p.stdout
    assert "BROKEN" in p.stdout
