"""Regenerate the generated parts of the documentation: `python -m webhook.cli.readme` (with `--check`:
write nothing, exit 1 naming the stale pages; tests/test_docs.py runs the same comparison).

- docs/rules.md, between `<!-- rules:begin -->` and `<!-- rules:end -->`: the rule table of the registry
  (`draguard rules -o markdown`), each row opening with the anchor `<a id="<rule id>"></a>`, so
  `docs/rules.md#claim.requests` stays a link to that rule whatever the table's order (SARIF `helpUri`).
- docs/cli.md, between `<!-- flags:<command>:begin -->` and `<!-- flags:<command>:end -->`: every flag of
  every command, read from the parser `draguard` runs, so a flag cannot be added, renamed or dropped
  without the reference following.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from webhook.cli.formats import rule_anchor, rules_table
from webhook.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
RULES_PAGE = ROOT / "docs" / "rules.md"
CLI_PAGE = ROOT / "docs" / "cli.md"
RULES_BEGIN, RULES_END = "<!-- rules:begin -->\n", "<!-- rules:end -->"


def rules_block() -> str:
    """The rule table of docs/rules.md: `draguard rules -o markdown`, an anchor opening each rule's row."""
    head, sep, *rows = rules_table("markdown").splitlines()
    out = [head, sep]
    for row in rows:
        rule = row.split("`", 2)[1]
        cell = f"| `{rule}` |"
        assert row.startswith(cell), row
        out.append(f'| <a id="{rule_anchor(rule)}"></a>`{rule}` |' + row[len(cell) :])
    return "\n".join(out) + "\n"


def subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Each command of `draguard` → its parser, a command's own subcommands after it (`audit rbac`)."""
    out: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[prefix + name] = sub
                out.update(subcommands(sub, f"{prefix}{name} "))
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _flag(action: argparse.Action) -> str:
    if action.option_strings:
        return ", ".join(f"`{o}`" for o in action.option_strings)
    name = str(action.metavar or action.dest)
    return f"`{name}...`" if action.nargs in ("+", "*") else f"`{name}`"


def _value(action: argparse.Action) -> str:
    if not action.option_strings or action.nargs == 0:
        return ""
    if action.choices is not None:
        value = "`" + "\\|".join(str(c) for c in action.choices) + "`"
    else:
        value = f"`{action.metavar or action.dest.upper()}`"
    return value + (" (repeatable)" if isinstance(action, argparse._AppendAction) else "")


def _help(action: argparse.Action, prog: str) -> str:
    """The help text as `--help` prints it (argparse's `%(...)s` expansion, `%%` → `%`), and the default
    when the text does not name it."""
    text = action.help or ""
    text = text % {**vars(action), "prog": prog} if "%" in text else text
    if action.default not in (None, False, "", []) and "default" not in text.lower():
        text = f"{text} (default `{action.default}`)".lstrip()
    return text


def flags_block(command: str, parser: argparse.ArgumentParser) -> str:
    """Every flag of one command (its positional arguments first, as `--help` lists them)."""
    out = ["| flag | value | help (`draguard " + command + " --help`) |", "|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        out.append(f"| {_flag(action)} | {_value(action)} | {_cell(_help(action, parser.prog))} |")
    return "\n".join(out) + "\n"


def flag_markers(command: str) -> tuple[str, str]:
    return f"<!-- flags:{command}:begin -->\n", f"<!-- flags:{command}:end -->"


def _replace(text: str, begin: str, end: str, body: str, page: Path) -> str:
    if begin not in text or end not in text:
        raise SystemExit(f"{page.relative_to(ROOT)}: markers {begin.strip()} ... {end} not found")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + body + end + tail


def generated_pages() -> dict[Path, Callable[[str], str]]:
    """Each page with generated parts → the function that rewrites its text with them current."""

    def rules_page(text: str) -> str:
        return _replace(text, RULES_BEGIN, RULES_END, rules_block(), RULES_PAGE)

    def cli_page(text: str) -> str:
        for command, parser in subcommands(build_parser()).items():
            text = _replace(text, *flag_markers(command), flags_block(command, parser), CLI_PAGE)
        return text

    return {RULES_PAGE: rules_page, CLI_PAGE: cli_page}


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    stale = []
    for page, regenerate in generated_pages().items():
        text = page.read_text()
        fresh = regenerate(text)
        if fresh == text:
            continue
        stale.append(str(page.relative_to(ROOT)))
        if not check:
            page.write_text(fresh)
    if check and stale:
        print(f"stale: {', '.join(stale)}: run `python -m webhook.cli.readme`", file=sys.stderr)
        return 1
    for name in stale:
        print(f"regenerated {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
