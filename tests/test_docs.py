"""The documentation as a newcomer meets it: the README's quick start is the set-up CI runs, the generated
parts of docs/ (rule table, flag reference) are current, every flag is documented under its command, and
every link between the pages points at a file and a heading that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from webhook.cli import readme
from webhook.cli.formats import rules_table
from webhook.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "deploy" / "README.md"]
README_LIMIT = 16_000  # bytes: the page a user reads, not the reference (docs/)


def _quick_start() -> list[str]:
    """The commands of the README's quick start block (comments dropped)."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def test_the_quick_start_is_two_set_up_commands_then_serve_and_the_tests() -> None:
    clone, setup, serve, tests = _quick_start()
    assert clone.startswith("git clone ") and clone.endswith("&& cd draguard")
    # one command that makes and uses a virtual environment (PEP 668: a system Python refuses pip)
    steps = [s.strip() for s in setup.split("&&")]
    assert steps == ["python3 -m venv .venv", ". .venv/bin/activate", "pip install -e '.[test]'"], setup
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()
    assert serve == "draguard serve"
    assert tests == "python3 -m pytest"


def test_ci_runs_the_readmes_install_and_test_command() -> None:
    """`.ci/run` installs the same extra and runs the README's test command, and the README says so."""
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and line[0] != "#"]
    last = commands[-1]
    install, test = (part.strip() for part in last.split("&&"))
    assert "pip install" in install and shlex.split(install)[-2:] == ["-e", ".[test]"]
    assert test == _quick_start()[-1]
    assert f"`{last}`" in (ROOT / "README.md").read_text(), "the README must quote what .ci/run runs"


def test_the_readme_is_the_page_a_user_reads() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes: move reference text to docs/"
    assert "<!--" not in (ROOT / "README.md").read_text(), "generated parts belong in docs/"


@pytest.mark.parametrize("page", sorted(readme.generated_pages()), ids=lambda p: p.name)
def test_generated_parts_are_current(page: Path) -> None:
    text = page.read_text()
    assert readme.generated_pages()[page](text) == text, "stale: run `python -m webhook.cli.readme`"


def _cells(row: str) -> list[str]:
    """The cells of a markdown table row, as GitHub splits them (`\\|` does not split)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_every_rule_has_its_anchored_row_of_five_cells() -> None:
    page = readme.RULES_PAGE.read_text()
    table = page.split(readme.RULES_BEGIN, 1)[1].split(readme.RULES_END, 1)[0]
    rows = table.splitlines()[2:]
    ids = [line.split("`", 2)[1] for line in rules_table("markdown").splitlines()[2:]]
    assert len(rows) == len(ids)
    for rule, row in zip(ids, rows, strict=True):
        assert row.startswith(f'| <a id="{rule}"></a>`{rule}` |'), row[:80]
        assert len(_cells(row)) == 5, f"{rule}: an unescaped | splits a cell: {row[:200]}"


def _section(page: str, heading: str) -> str:
    return page.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def _commands() -> dict[str, list[list[str]]]:
    """Each command → its flags, each as its option strings (help aside)."""
    return {
        name: [
            a.option_strings for a in p._actions if a.option_strings and a.option_strings != ["-h", "--help"]
        ]
        for name, p in readme.subcommands(build_parser()).items()
    }


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_flag_is_documented_under_its_command(command: str) -> None:
    """The flag reference is generated; each command's own section must still say what its flags do: one
    of a flag's spellings in a code span of the section (`--jobs N`, `draguard certs --dir DIR ...`)."""
    section = _section(readme.CLI_PAGE.read_text(), f"## `draguard {command}`")
    spans = re.findall(r"`([^`\n]+)`", section)

    def documented(option: str) -> bool:
        return any(re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", span) for span in spans)

    missing = [flag for flag in _commands()[command] if not any(documented(o) for o in flag)]
    assert not missing, f"docs/cli.md, `draguard {command}`: document {missing}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text()
    out: set[str] = set(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    seen: dict[str, int] = {}
    for line in _prose(text).splitlines():
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            out.add(slug if n == 0 else f"{slug}-{n}")
            seen[slug] = n + 1
    return out


def _prose(text: str) -> str:
    """Markdown without fenced code blocks (their `#` lines are comments, their brackets code)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _links(path: Path) -> list[str]:
    prose = re.sub(r"`[^`\n]*`", "", _prose(path.read_text()))
    return re.findall(r"\]\(([^)\s]+)\)", prose)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_points_at_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue  # http(s), mailto: not checked offline
        target, _, fragment = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{link}: no file {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
        elif fragment and path.suffix == ".md" and fragment not in _anchors(path):
            broken.append(f"{link}: no heading or anchor #{fragment} in {path.relative_to(ROOT)}")
    assert not broken, broken


def test_the_cookbook_shows_the_policies_its_tests_run() -> None:
    """Each recipe's YAML in docs/policy-cookbook.md is its tested policy file, byte for byte, and every
    recipe folder is in the cookbook."""
    page = (ROOT / "docs" / "policy-cookbook.md").read_text()
    shown = re.findall(r"<!-- the file (\S+) -->\n```yaml\n(.*?)\n```", page, re.S)
    assert len(shown) == 5
    for path, block in shown:
        assert (ROOT / path).read_text().rstrip("\n") == block, f"{path} differs from the cookbook's copy"
    folders = {p.parent.name for p in (ROOT / "deploy/examples/policies/cookbook").glob("*/policy.yaml")}
    assert folders == {Path(path).parent.name for path, _ in shown}
