"""Field errors of a DraguardPolicy, in the API server's wording (`spec.tenants[0].mode: Unsupported value:
"Enforced": supported values: "Audit", "Enforce", "Warn"`), and a reader that checks a plain-data object
the way a structural schema with strict field validation does: types, required fields, unknown fields."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from webhook.model.didyoumean import closest
from webhook.model.path import Path
from webhook.model.text import clip

# What a Invalid condition's reason says (the first error's): a closed set, CamelCase as condition reasons are.
Reason = Literal[
    "InvalidValue",  # a value the schema or draguard does not accept
    "Required",  # a required field is missing
    "UnknownField",  # a field the schema does not declare (strict field validation)
    "InvalidType",  # a string where a number belongs, ...
    "Duplicate",  # a tenant or namespace name given twice
    "UnknownRule",  # a rule id draguard does not have
    "InvalidSelector",  # a label selector upstream would reject
    "InvalidExpression",  # a CEL expression that does not compile
]


S = TypeVar("S", bound=str)


@dataclass(frozen=True)
class FieldError:
    field: str  # `spec.tenants[0].mode`
    message: str  # `Unsupported value: "x": supported values: ...`
    reason: Reason = "InvalidValue"

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def show(value: Any) -> str:
    """A value as the API server quotes it in an error (strings quoted, clipped)."""
    if isinstance(value, str):
        return json.dumps(clip(value), ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return (
        "object" if isinstance(value, dict) else "array" if isinstance(value, list) else type(value).__name__
    )


def required(path: Path, detail: str = "") -> FieldError:
    return FieldError(str(path), "Required value" + (f": {detail}" if detail else ""), "Required")


def invalid(path: Path, value: Any, detail: str, reason: Reason = "InvalidValue") -> FieldError:
    return FieldError(str(path), f"Invalid value: {show(value)}: {detail}", reason)


def unsupported(path: Path, value: Any, supported: Iterable[str]) -> FieldError:
    options = ", ".join(json.dumps(s) for s in supported)
    hint = ""
    if value is False:  # YAML 1.1 reads a bare `off` (also no, false) as false
        hint = ' (YAML reads a bare off as false: quote it, "off")'
    elif isinstance(value, str):
        near = closest(value, supported)
        hint = f" (did you mean {json.dumps(near)}?)" if near else ""
    return FieldError(str(path), f"Unsupported value: {show(value)}: supported values: {options}{hint}")


def duplicate(path: Path, value: Any) -> FieldError:
    return FieldError(str(path), f"Duplicate value: {show(value)}", "Duplicate")


_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number"}


def _json_type(value: Any) -> str:
    return "null" if value is None else _TYPE_NAMES.get(type(value), type(value).__name__)


@dataclass
class Reader:
    """Reads plain data (a parsed YAML/JSON object) field by field, collecting the errors; every `read`
    returns None for a value that is absent or has the wrong type (the error is recorded)."""

    errors: list[FieldError] = field(default_factory=list)

    def add(self, *errors: FieldError) -> None:
        self.errors.extend(errors)

    def _type(self, value: Any, path: Path, expected: str) -> None:
        self.add(
            FieldError(
                str(path), f"Invalid value: {show(value)}: must be of type {expected}, not {_json_type(value)}",
                "InvalidType",
            )
        )  # fmt: skip

    def mapping(
        self, value: Any, path: Path, known: tuple[str, ...] | None, need: tuple[str, ...] = ()
    ) -> dict[str, Any] | None:
        """An object: its unknown fields (when `known` is given) and missing required ones are errors."""
        if value is None:
            return None
        if not isinstance(value, dict):
            self._type(value, path, "object")
            return None
        for k in value:
            if not isinstance(k, str):
                self.add(invalid(path, k, "a field name must be a string"))
            elif known is not None and k not in known:
                near = closest(k, known)
                hint = f" (did you mean {near!r}?)" if near else f" (known: {', '.join(known)})"
                self.add(FieldError(str(path.child(k)), f"unknown field {show(k)}{hint}", "UnknownField"))
        for k in need:
            if value.get(k) is None:
                self.add(required(path.child(k)))
        return value

    def listing(self, value: Any, path: Path, max_items: int) -> list[Any] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            self._type(value, path, "array")
            return None
        if len(value) > max_items:
            self.add(FieldError(str(path), f"Too many: {len(value)}: must have at most {max_items} items"))
            return None
        return value

    def string(self, value: Any, path: Path, max_length: int | None = None) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self._type(value, path, "string")
            return None
        if max_length is not None and len(value.encode()) > max_length:
            self.add(FieldError(str(path), f"Too long: may not be more than {max_length} bytes"))
            return None
        return value

    def choice(self, value: Any, path: Path, options: tuple[S, ...]) -> S | None:
        """A string from an enum (exact, as the schema's enum)."""
        if value is None:
            return None
        for option in options:
            if value == option and isinstance(value, str):
                return option
        self.add(unsupported(path, value, options))
        return None

    def integer(self, value: Any, path: Path, minimum: int, maximum: int) -> int | None:
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            self._type(value, path, "integer")
            return None
        if not minimum <= value <= maximum:
            self.add(invalid(path, value, f"must be between {minimum} and {maximum}"))
            return None
        return value

    def boolean(self, value: Any, path: Path) -> bool | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            self._type(value, path, "boolean")
            return None
        return value
