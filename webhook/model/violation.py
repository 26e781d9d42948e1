"""Violations: what every rule reports, as plain values (never exceptions)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from webhook.model.path import Path


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value


class Finding(NamedTuple):
    """What a rule function yields: where and what. The registry adds the rule id and severity."""

    field: Path | str
    message: str


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    severity: Severity
    field: str
    message: str
    line: int = 0  # the line of `field` in its file (0: not known; the object's line is used)

    def to_dict(self) -> dict[str, str | int]:
        out: dict[str, str | int] = {
            "rule": self.rule,
            "severity": self.severity.value,
            "field": self.field,
            "message": self.message,
        }
        if self.line:
            out["line"] = self.line
        return out
