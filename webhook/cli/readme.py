"""Regenerate the README's rule table from the registry: `python -m webhook.cli.readme`."""

from __future__ import annotations

from pathlib import Path

from webhook import simulate  # noqa: F401  (declares the feasibility.* rule ids)
from webhook.admission import feasibility  # noqa: F401  (declares admission.feasibility)
from webhook.cli.formats import rules_table
from webhook.rules import catalog  # noqa: F401

README = Path(__file__).resolve().parents[2] / "README.md"
BEGIN, END = "<!-- rules:begin -->\n", "<!-- rules:end -->"


def main() -> None:
    text = README.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + BEGIN + rules_table("markdown") + END + tail)


if __name__ == "__main__":
    main()
