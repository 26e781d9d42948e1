"""The exception tree. Expected outcomes (violations, infeasible claims) are values, not exceptions.

DraguardError                 base of everything draguard raises on purpose
├── InputError                input cannot be read or parsed: carries source file and line
├── UsageError                bad command-line flags, unknown profile or feature gate, bad policy file
└── UndecidedError            a search ran out of its step/time budget (engine, later issues)
"""

from __future__ import annotations


class DraguardError(Exception):
    """Base class for errors draguard raises deliberately."""


class InputError(DraguardError):
    """A file or document that cannot be read or parsed."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.source = source
        self.line = line
        self.message = message


class UsageError(DraguardError):
    """Invalid flags, profiles, feature gates or policy files: the user must change the invocation."""


class UndecidedError(DraguardError):
    """A bounded search ran out of budget before it could decide."""
