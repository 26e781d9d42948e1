"""`draguard rules`: every rule id with its severity, kinds, field path and what it checks (the
catalogue, webhook/model/catalogue.py), as text, markdown or JSON."""

from __future__ import annotations

import argparse
import sys

from webhook.cli.formats import rules_table
from webhook.cli.options import EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    r = sub.add_parser("rules", help="list every rule id with its severity and field path")
    r.add_argument("-o", "--format", dest="format", choices=("text", "markdown", "json"), default="text")
    r.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(rules_table(args.format))
    return EXIT_OK
