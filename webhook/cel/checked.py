"""The checked CEL AST of a compiled expression, decoded from cel-expr-python's serialized CheckedExpr.

cel-expr-python exposes no AST, only `Expression.serialize()` (an `Any` holding `cel.expr.CheckedExpr`).
This module decodes that protobuf with a minimal wire-format reader (no protobuf dependency) into
small `Node` values with the checker's type of every node and the source position.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

# Field numbers from cel-spec `cel/expr/checked.proto` and `syntax.proto`.
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}

Fields = dict[int, list[Any]]


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def decode(buf: bytes) -> Fields:
    """One protobuf message as {field number: [raw values]} (varints as int, the rest as bytes)."""
    out: Fields = {}
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        val: Any
        if wire == 0:
            val, i = _varint(buf, i)
        elif wire == 1:
            val, i = buf[i : i + 8], i + 8
        elif wire == 2:
            size, i = _varint(buf, i)
            val, i = buf[i : i + size], i + size
        elif wire == 5:
            val, i = buf[i : i + 4], i + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.setdefault(num, []).append(val)
    return out


def _one(f: Fields, num: int, default: Any = None) -> Any:
    v = f.get(num)
    return v[-1] if v else default


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def type_name(buf: bytes) -> str:
    """A cel.expr.Type as a short name: `bool`, `string`, `list(int)`, `map(string, dyn)`, `dyn`, ..."""
    f = decode(buf)
    if 1 in f:
        return "dyn"
    if 2 in f:
        return "null_type"
    if 3 in f:
        return _PRIMITIVES.get(_one(f, 3), "unknown")
    if 4 in f:
        return "wrapper(" + _PRIMITIVES.get(_one(f, 4), "unknown") + ")"
    if 5 in f:
        return _WELL_KNOWN.get(_one(f, 5), "unknown")
    if 6 in f:
        elem = _one(decode(_one(f, 6)), 1)
        return f"list({type_name(elem) if elem is not None else 'dyn'})"
    if 7 in f:
        m = decode(_one(f, 7))
        return f"map({type_name(_one(m, 1, b''))}, {type_name(_one(m, 2, b''))})"
    if 9 in f:
        return _one(f, 9).decode()
    if 10 in f:
        return "dyn"  # a type parameter the checker did not resolve
    if 11 in f:
        return "type"
    if 12 in f:
        return "error"
    if 14 in f:
        return _one(decode(_one(f, 14)), 1, b"").decode()
    return "dyn"


@dataclass
class Node:
    """One expression node. kind: const | ident | select | call | list | map | struct | comprehension."""

    id: int
    kind: str
    type: str = "dyn"
    value: Any = None  # const value; ident name; select field; call function name
    target: Node | None = None  # select operand; call receiver
    args: list[Node] = field(default_factory=list)  # call args; list elements; map keys/values interleaved
    test_only: bool = False  # has()
    # comprehension parts
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None

    def children(self) -> list[Node]:
        out = [self.target] if self.target is not None else []
        out += self.args
        out += [
            n
            for n in (self.iter_range, self.accu_init, self.loop_condition, self.loop_step, self.result)
            if n is not None
        ]
        return out


def _const(f: Fields) -> Any:
    if 1 in f:
        return None
    if 2 in f:
        return bool(_one(f, 2))
    if 3 in f:
        return _signed(_one(f, 3))
    if 4 in f:
        return _one(f, 4)
    if 5 in f:
        return struct.unpack("<d", _one(f, 5))[0]
    if 6 in f:
        return _one(f, 6).decode("utf-8", "replace")
    if 7 in f:
        return bytes(_one(f, 7))
    return None


def _expr(buf: bytes, types: dict[int, str]) -> Node:
    f = decode(buf)
    nid = _signed(_one(f, 2, 0))
    t = types.get(nid, "dyn")
    if 3 in f:
        return Node(nid, "const", t, _const(decode(_one(f, 3))))
    if 4 in f:
        return Node(nid, "ident", t, _one(decode(_one(f, 4)), 1, b"").decode())
    if 5 in f:
        s = decode(_one(f, 5))
        operand = _one(s, 1)
        return Node(
            nid,
            "select",
            t,
            _one(s, 2, b"").decode(),
            target=_expr(operand, types) if operand is not None else None,
            test_only=bool(_one(s, 3, 0)),
        )
    if 6 in f:
        c = decode(_one(f, 6))
        tgt = _one(c, 1)
        return Node(
            nid,
            "call",
            t,
            _one(c, 2, b"").decode(),
            target=_expr(tgt, types) if tgt is not None else None,
            args=[_expr(a, types) for a in c.get(3, [])],
        )
    if 7 in f:
        lst = decode(_one(f, 7))
        return Node(nid, "list", t, args=[_expr(e, types) for e in lst.get(1, [])])
    if 8 in f:
        st = decode(_one(f, 8))
        kind = "struct" if st.get(1) else "map"
        args: list[Node] = []
        for entry in st.get(2, []):
            e = decode(entry)
            if 3 in e:
                args.append(_expr(_one(e, 3), types))
            else:
                args.append(Node(0, "const", "string", _one(e, 2, b"").decode()))
            args.append(_expr(_one(e, 4, b""), types))
        return Node(nid, kind, t, args=args)
    if 9 in f:
        c = decode(_one(f, 9))

        def sub(num: int) -> Node | None:
            v = _one(c, num)
            return _expr(v, types) if v is not None else None

        return Node(
            nid,
            "comprehension",
            t,
            iter_var=_one(c, 1, b"").decode(),
            iter_range=sub(2),
            accu_var=_one(c, 3, b"").decode(),
            accu_init=sub(4),
            loop_condition=sub(5),
            loop_step=sub(6),
            result=sub(7),
            iter_var2=_one(c, 8, b"").decode(),
        )
    return Node(nid, "unknown", t)


@dataclass
class Checked:
    """The root node plus what is needed to point at a node in the source text."""

    root: Node
    positions: dict[int, int]  # node id -> character offset
    line_offsets: list[int]  # offset of the first character after each newline

    def location(self, node_id: int) -> tuple[int, int]:
        """1-based (line, column) of a node, like cel-go's error locations."""
        off = self.positions.get(node_id, 0)
        line, start = 1, 0
        for lo in self.line_offsets:
            if lo <= off:
                line, start = line + 1, lo
            else:
                break
        return line, off - start + 1


def _packed_or_plain(vals: list[Any]) -> list[int]:
    out: list[int] = []
    for v in vals:
        if isinstance(v, int):
            out.append(v)
        else:
            i = 0
            while i < len(v):
                x, i = _varint(v, i)
                out.append(x)
    return out


def parse_checked(serialized: bytes) -> Checked:
    """Decode `Expression.serialize()` output (an `Any` wrapping a CheckedExpr)."""
    anyf = decode(serialized)
    payload = _one(anyf, 2) if 1 in anyf else serialized
    ce = decode(payload)
    types: dict[int, str] = {}
    for entry in ce.get(3, []):
        e = decode(entry)
        types[_signed(_one(e, 1, 0))] = type_name(_one(e, 2, b""))
    positions: dict[int, int] = {}
    line_offsets: list[int] = []
    si = _one(ce, 5)
    if si is not None:
        s = decode(si)
        line_offsets = _packed_or_plain(s.get(3, []))
        for entry in s.get(4, []):
            e = decode(entry)
            positions[_signed(_one(e, 1, 0))] = _one(e, 2, 0)
    return Checked(_expr(_one(ce, 4, b""), types), positions, line_offsets)
