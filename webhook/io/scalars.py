"""YAML scalars as kubectl reads them: go-yaml v2's resolution (YAML 1.1: `y`, `on`, `0777` are a boolean
and an octal int, timestamps stay strings) and sigs.k8s.io/yaml's conversion of mapping keys to JSON."""

from __future__ import annotations

import re
from typing import Any

_NULL = frozenset(("", "~", "null", "Null", "NULL"))
_TRUE = frozenset(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_FALSE = frozenset(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"))
YAML11_BOOLEANS = _TRUE | _FALSE
_INT = re.compile(r"[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0o?[0-7_]+|[1-9][0-9_]*|0)")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = frozenset((".nan", ".NaN", ".NAN"))

STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"


def plain_scalar(text: str) -> Any:
    """go-yaml v2 resolution of a plain (unquoted, untagged) scalar."""
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text and (text[0] in "0123456789+-."):
        return _number(text)
    return text


def _number(text: str) -> Any:
    if _INT.fullmatch(text):
        t = text.replace("_", "")
        sign = -1 if t[0] == "-" else 1
        body = t.lstrip("+-")
        try:
            if body.startswith("0b"):
                return sign * int(body[2:], 2)
            if body.startswith("0x"):
                return sign * int(body[2:], 16)
            if body.startswith("0o"):
                return sign * int(body[2:], 8)
            if len(body) > 1 and body[0] == "0":
                return sign * int(body[1:], 8)
            # More than 4,300 decimal digits (Python's int-str limit) is beyond float64 too: go-yaml
            # v2 finds no int, uint or float and keeps the text as a string, and so does this.
            return sign * int(body)
        except ValueError:
            return text
    if _FLOAT.fullmatch(text):
        f = float(text.replace("_", ""))
        if f in (_INF_F, -_INF_F):
            return text  # out of float64 range (1e9999): go-yaml's ParseFloat fails, the text stays a string
        return (
            int(f) if f.is_integer() and abs(f) < 2**63 and "." not in text and "e" not in text.lower() else f
        )
    if _INF.fullmatch(text):
        return float("-inf") if text[0] == "-" else float("inf")
    if text in _NAN:
        return float("nan")
    return text


_INF_F = float("inf")

_TYPE_CHECKS = {
    "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
    "float": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
    "bool": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
}


def tagged_scalar(tag: str, text: str) -> Any:
    """A scalar with an explicit tag: `!!int '7'` is 7, `!!str 1` is "1"; other tags keep the text."""
    short = tag.rsplit(":", 1)[-1] if tag.startswith("tag:yaml.org,2002:") else ""
    check = _TYPE_CHECKS.get(short)
    if check is not None:
        v = plain_scalar(text)
        if check(v):
            return float(v) if short == "float" else v
    return text


def json_key(k: Any) -> str:
    """Non-string keys become strings, as in the YAML → JSON conversion kubectl does."""
    if k is None:
        return "null"
    if isinstance(k, bool):
        return "true" if k else "false"
    return str(k)
