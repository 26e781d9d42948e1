"""The Containerfile, checked without building an image (no container runtime here): stages, the final
stage's user, entrypoint and absence of install steps, the build context `.containerignore` lets
through, and that the files the build stage copies make the package with its data."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml
from deploy_render import DEPLOY, ROOT

CONTAINERFILE = ROOT / "Containerfile"
IGNORE = ROOT / ".containerignore"


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        word, _, rest = current.partition(" ")
        out.append((word.upper(), rest.strip()))
        current = ""
    assert not current, "a continuation line at the end of the Containerfile"
    return out


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for ins in _instructions(CONTAINERFILE.read_text()):
        if ins[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(ins)
    return stages


def test_two_stages_from_the_same_slim_python() -> None:
    instructions = _instructions(CONTAINERFILE.read_text())
    args = dict(a[1].split("=", 1) for a in instructions if a[0] == "ARG" and "=" in a[1])
    assert re.fullmatch(r"python:3\.\d+-slim(-\w+)?", args["PYTHON_IMAGE"])
    stages = _stages()
    assert len(stages) == 2
    assert stages[0][0] == ("FROM", "${PYTHON_IMAGE} AS build")
    assert stages[1][0] == ("FROM", "${PYTHON_IMAGE}"), (
        "the venv's interpreter path must exist in the final stage"
    )


def test_final_stage_installs_nothing_and_runs_draguard_as_a_numeric_non_root_user() -> None:
    final = _stages()[-1]
    runs = " ".join(a for i, a in final if i == "RUN")
    for forbidden in ("pip install", "pip wheel", "apt-get", "apt ", "apk ", "gcc", "make ", "build"):
        assert forbidden not in runs, f"the final stage runs {forbidden!r}"
    copies = [a for i, a in final if i in ("COPY", "ADD")]
    assert copies and all(a.startswith("--from=build ") for a in copies), (
        "only the built environment is copied"
    )
    (user,) = [a for i, a in final if i == "USER"]
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) > 0 and (not gid or (gid.isdigit() and int(gid) > 0)), user
    entrypoint = json.loads(next(a for i, a in final if i == "ENTRYPOINT"))
    cmd = json.loads(next(a for i, a in final if i == "CMD"))
    assert entrypoint == ["draguard"] and cmd == ["serve"]
    # the Deployment runs as that user and passes `serve ...` to that entrypoint
    deployment = yaml.safe_load((DEPLOY / "base" / "deployment.yaml").read_text())
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == int(uid)
    assert pod["containers"][0]["args"][0] == cmd[0]
    assert "command" not in pod["containers"][0]


def test_build_stage_installs_the_wheel_into_a_venv_that_the_final_stage_copies() -> None:
    build, final = _stages()
    runs = " ".join(a for i, a in build if i == "RUN")
    assert "pip wheel" in runs and "python -m venv /opt/draguard" in runs
    assert "/opt/draguard/bin/draguard --version" in runs, "the build fails if the install does not run"
    assert ("COPY", "--from=build /opt/draguard /opt/draguard") in final
    env = " ".join(a for i, a in final if i == "ENV")
    assert "PATH=/opt/draguard/bin:" in env and "PYTHONDONTWRITEBYTECODE=1" in env


# -- the build context -------------------------------------------------------------------------------


def _pattern(p: str) -> re.Pattern[str]:
    """A .containerignore pattern (Docker's: Go filepath.Match plus `**`) as a regular expression."""
    out, i = "", 0
    p = p.strip("/")
    while i < len(p):
        if p.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif p.startswith("**", i):
            out += ".*"
            i += 2
        elif p[i] == "*":
            out += "[^/]*"
            i += 1
        elif p[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(p[i])
            i += 1
    return re.compile(out)


def _rules() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for line in IGNORE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            rules.append((line.startswith("!"), _pattern(line.lstrip("!"))))
    return rules


def _ignored(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent directories decides."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for negated, rx in rules:
        if any(rx.fullmatch(p) for p in prefixes):
            ignored = not negated
    return ignored


def _context() -> set[str]:
    rules = _rules()
    out = set()
    for top, dirs, files in os.walk(ROOT):
        rel = Path(top).relative_to(ROOT).as_posix()
        dirs[:] = [d for d in dirs if d != ".git"]
        for f in files:
            path = f if rel == "." else f"{rel}/{f}"
            if not _ignored(path, rules):
                out.add(path)
    return out


def test_build_context_holds_the_sources_and_no_keys() -> None:
    context = _context()
    build = _stages()[0]
    sources = [shlex.split(a)[:-1] for i, a in build if i == "COPY"]
    for src in (s for group in sources for s in group):
        assert any(p == src or p.startswith(src + "/") for p in context), (
            f"COPY {src}: not in the build context"
        )
    assert "pyproject.toml" in context and any(p.startswith("webhook/cel/") for p in context)
    # everything pyproject.toml names is copied into the build stage
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    named = {project["project"]["readme"], *project["tool"]["setuptools"]["package-dir"].values()} - {"."}
    copied = {s for group in sources for s in group}
    assert named <= copied, named - copied
    leaked = [
        p
        for p in context
        if p.endswith((".key", ".crt", ".pem")) or p.split("/")[0] in ("certs", "deploy", "tests", ".git")
    ]
    assert not leaked
    assert not any("__pycache__" in p for p in context)


def test_the_build_stages_files_make_the_package_with_its_data(tmp_path: Path) -> None:
    """What the build stage's `pip wheel` packs, from the files its COPY lines take from the build
    context and nothing else."""
    sources = [s for i, a in _stages()[0] if i == "COPY" for s in shlex.split(a)[:-1]]
    copied = {p for p in _context() if any(p == s or p.startswith(s + "/") for s in sources)}
    src = tmp_path / "src"
    for path in copied:
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_bytes((ROOT / path).read_bytes())
    target = tmp_path / "build"
    # setuptools' build_py: the packages and package data a wheel would hold, offline (no build
    # isolation, no wheel package needed)
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "import setuptools; setuptools.setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(target),
        ],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert (target / "webhook" / "cli" / "main.py").is_file()
    data = target / "webhook" / "_data"
    assert any((data / "schemas").glob("v1.37/*.json")) and any((data / "policies").glob("profiles/*.yaml"))
