"""A run's report from its files' results: concatenated, then the inventory (cross-object) rules over all
objects at once."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from webhook.config.context import Context
from webhook.config.policy import Policy
from webhook.convert import source_message, source_path
from webhook.model.report import ObjectResult, Report
from webhook.model.violation import Severity, Violation
from webhook.rules.facts import RunFacts
from webhook.rules.registry import inventory_rules
from webhook.state.inventory import Inventory
from webhook.validate.documents import FileResult
from webhook.validate.objects import apply_policy, violation

# How a run's file results become its report (`assemble`, or one that adds context: webhook.offline.repocontext)
Assembler = Callable[[list[FileResult], Context, Policy | None], Report]


_NO_INVENTORY = (
    "cross-object rules (pools, duplicate devices, classes, extended resource names) were not run: the "
    "input was not read completely before the deadline"
)


def assemble(file_results: list[FileResult], ctx: Context, policy: Policy | None) -> Report:
    """Concatenate per-file results and run the inventory (cross-object) rules over all of them —
    unless the deadline left something unchecked: rules over part of the input could report what is
    missing from it (a class, a slice of a pool), so none is run and the first `input.not-checked`
    finding says so."""
    report = Report()
    records: list[Any] = []
    facts = RunFacts()
    for fr in file_results:
        facts.add(fr, len(report.objects))
        report.objects.extend(fr.objects)
        records.extend(fr.records)
        report.skipped += fr.skipped
        report.not_checked += fr.not_checked
        if fr.not_objects:
            report.not_objects += fr.not_objects
            report.not_object_files += 1
            report.first_not_object = report.first_not_object or fr.first_not_object
    if report.not_checked:
        first = next(
            (o for o in report.objects if any(v.rule == "input.not-checked" for v in o.violations)), None
        )
        if first is not None:
            first.violations.extend(apply_policy(policy, [violation("input.not-checked", "", _NO_INVENTORY)]))
        return report
    facts.objects = [(o.source, o.kind, o.namespace) for o in report.objects]
    for o, rec in zip(report.objects, records, strict=False):
        rule = next((v.rule for v in o.violations if v.severity is Severity.ERROR), None)
        if rec is None and o.kind and o.name and rule is not None:
            facts.rejected.setdefault((o.kind, o.namespace or None, o.name), (o.source, o.line, rule))
    run_inventory_rules(report.objects, records, dataclasses.replace(ctx, facts=facts), policy)
    return report


def run_inventory_rules(
    objects: list[ObjectResult], records: list[Any], ctx: Context, policy: Policy | None
) -> None:
    """Cross-object rules; their findings are appended to the objects they name."""
    inventory = Inventory(records)
    for rule, fn in inventory_rules():
        if policy is not None and not policy.enabled(rule.id):
            continue
        try:
            for f in fn(inventory, ctx):
                assert isinstance(f.index, int)  # a run's inventory is keyed by position
                target = objects[f.index]
                field_ = source_path(target.api_version, target.kind, str(f.field))  # a converted beta
                message = source_message(target.api_version, target.kind, f.message)
                v = Violation(rule.id, f.severity or rule.severity, field_, message)
                target.violations.extend(policy.apply([v]) if policy else [v])
        except Exception as e:
            if objects:
                objects[0].violations.append(
                    violation("internal.rule-crash", "", f"rule {rule.id} failed: {type(e).__name__}: {e}")
                )
