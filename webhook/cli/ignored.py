"""The CLI's part of `draguard.io/ignore` (webhook.validate.ignores): warning about rule ids the catalogue
(webhook/model/catalogue.py) does not have, each at the annotation's line in its file."""

from __future__ import annotations

from collections.abc import Mapping

from webhook.config.policy import Policy
from webhook.io.files import MAX_FILE_BYTES
from webhook.io.findinglines import assign_lines
from webhook.model.report import Report
from webhook.validate.ignores import unknown_rules, warn_unknown


def warn_unknown_ignores(
    report: Report,
    policy: Policy | None = None,
    texts: Mapping[str, str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> None:
    """Add `input.ignore-annotation` warnings to `report`'s objects whose annotation names a rule id
    draguard does not have, each at the annotation's line."""
    if not any(unknown_rules(o) for o in report.objects):
        return
    changed = warn_unknown(report, policy)
    if changed:
        assign_lines(Report(objects=changed), texts, max_bytes=max_bytes)
