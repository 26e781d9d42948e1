"""ruff (lint + format) and mypy run as part of the test command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize(
    ("package", "imported"),
    [
        ("engine", "webhook.rules.registry"),  # the engine reads the rules
        ("cel/checker", "webhook.cel.lib.stdlib"),  # a CEL stage reaches another stage's code
        ("cel/parser", "webhook.cel.interpreter.program"),  # ... or a stage above it
        ("rules", "webhook.cel.parser.parser"),  # a CEL stage used from outside webhook.cel
    ],
)
def test_a_module_that_takes_a_shortcut_breaks_the_contracts(
    tmp_path: Path, package: str, imported: str
) -> None:
    shutil.copytree(ROOT / "webhook", tmp_path / "webhook", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    module, name = imported.rsplit(".", 1)
    (tmp_path / "webhook" / package / "shortcut.py").write_text(f"from {module} import {name}\n")
    p = _lint_imports(tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"webhook.{package.replace('/', '.')}.shortcut -> {imported}" in p.stdout
    assert "BROKEN" in p.stdout


def _import_graph(level: int) -> dict[str, set[str]]:
    """webhook's imports (type-checking ones too), between units named by their first `level` parts below
    `webhook` (1: top-level packages and modules; 2: their modules)."""
    import ast

    def unit(name: str) -> str:
        return ".".join(name.split(".")[1 : 1 + level])

    edges: dict[str, set[str]] = {}
    for path in (ROOT / "webhook").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("webhook."):
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("webhook.")]
            else:
                continue
            here = unit(module)
            for target in targets:
                there = unit(target)
                is_module = (ROOT / Path(*target.split("."))).with_suffix(".py").is_file()
                if there != here and (level == 1 or is_module) and not module.startswith(f"{target}."):
                    edges.setdefault(here, set()).add(there)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_package_imports_itself_through_another() -> None:
    """webhook's top-level packages and modules form no import cycle (type-checking imports included)."""
    assert _cycles(_import_graph(1)) == []


def test_no_module_imports_itself_through_another() -> None:
    """webhook's modules form no import cycle either, down to those of subpackages (`webhook.cel.parser.parser`)."""
    assert _cycles(_import_graph(3)) == []


def test_the_cycle_check_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
