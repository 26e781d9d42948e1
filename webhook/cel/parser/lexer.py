"""The CEL lexer: cel-go's token rules (longest match, ANTLR's error recovery and messages)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

# Token kinds (names as ANTLR prints them in "expecting" sets, in ANTLR's token-type order).
EOF = "<EOF>"
TOKEN_ORDER = (
    "==",
    "!=",
    "in",
    "<",
    "<=",
    ">=",
    ">",
    "&&",
    "||",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    ".",
    ",",
    "-",
    "!",
    "?",
    ":",
    "+",
    "*",
    "/",
    "%",
    "true",
    "false",
    "null",
    "NUM_FLOAT",
    "NUM_INT",
    "NUM_UINT",
    "STRING",
    "BYTES",
    "IDENTIFIER",
    "ESC_IDENTIFIER",
)
_LITERAL_NAMES = frozenset(TOKEN_ORDER[:28])
_RANK = {name: i for i, name in enumerate(TOKEN_ORDER)}
KEYWORDS = frozenset({"in", "true", "false", "null"})


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # an operator/keyword text, a TOKEN_ORDER name, or EOF
    text: str
    start: int  # code-point offset
    index: int  # position in the token list


@dataclass(frozen=True, slots=True)
class LexError:
    start: int
    text: str  # the characters ANTLR names in "token recognition error at: '...'"


def display_set(kinds: frozenset[str] | set[str]) -> str:
    """ANTLR's rendering of an expected-token set."""
    names = sorted(kinds, key=lambda k: _RANK.get(k, -1))
    shown = [("<EOF>" if k == EOF else f"'{k}'" if k in _LITERAL_NAMES else k) for k in names]
    return shown[0] if len(shown) == 1 else "{" + ", ".join(shown) + "}"


def display_token(tok: Token) -> str:
    """ANTLR's quoting of a token's text in messages ('<EOF>', escaped newlines and tabs)."""
    if tok.kind == EOF:
        return "'<EOF>'"
    return "'" + escape_ws(tok.text) + "'"


def escape_ws(text: str) -> str:
    return text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


_PUNCT2 = {"==", "!=", "<=", ">=", "&&", "||"}
_PUNCT1 = set("<>[]{}().,-!?:+*/%")
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXP = re.compile(r"[eE][+-]?[0-9]+")
_ESC_IDENT = re.compile(r"`[A-Za-z0-9_./ -]+`")
_WS = re.compile(r"[\t \r\n\f]+")
_HEXD = "0123456789abcdefABCDEF"
_SIMPLE_ESC = set("abfnrtv\"'\\?`")


def _number(s: str, i: int) -> tuple[str, int]:
    """The longest number token at i (s[i] is a digit or '.' followed by a digit)."""
    best_kind, best_end = "", i
    m = _HEX.match(s, i)
    if m:
        end = m.end()
        if end < len(s) and s[end] in "uU":
            return "NUM_UINT", end + 1
        return "NUM_INT", end
    if s[i] == ".":
        m = _DIGITS.match(s, i + 1)
        assert m
        end = m.end()
        e = _EXP.match(s, end)
        return "NUM_FLOAT", e.end() if e else end
    m = _DIGITS.match(s, i)
    assert m
    end = m.end()
    best_kind, best_end = "NUM_INT", end
    if end < len(s) and s[end] in "uU":
        return "NUM_UINT", end + 1
    if end < len(s) and s[end] == ".":
        frac = _DIGITS.match(s, end + 1)
        if frac:
            e = _EXP.match(s, frac.end())
            return "NUM_FLOAT", e.end() if e else frac.end()
    e = _EXP.match(s, end)
    if e:
        return "NUM_FLOAT", e.end()
    return best_kind, best_end


def _escape_end(s: str, j: int) -> int:
    """End of a valid escape sequence starting at s[j] == '\\', or -(index of the failing char) - 1."""
    n = len(s)
    if j + 1 >= n:
        return -(j + 1) - 1
    c = s[j + 1]
    if c in _SIMPLE_ESC:
        return j + 2
    if c in "xX":
        need = 2
    elif c == "u":
        need = 4
    elif c == "U":
        need = 8
    elif c in "0123":
        for k in range(j + 2, j + 4):
            if k >= n or s[k] not in "01234567":
                return -k - 1
        return j + 4
    else:
        return -(j + 1) - 1
    for k in range(j + 2, j + 2 + need):
        if k >= n or s[k] not in _HEXD:
            return -k - 1
    return j + 2 + need


def _string(s: str, i: int) -> int:
    """End of the string literal starting at i (quote or r/R prefix), or -(failing index) - 1."""
    n = len(s)
    raw = s[i] in "rR"
    j = i + 1 if raw else i
    q = s[j]
    triple = s.startswith(q * 3, j)
    if triple:
        j += 3
        close = q * 3
        while True:
            if j >= n:
                return -n - 1
            if s.startswith(close, j):
                return j + 3
            if s[j] == "\\" and not raw:
                k = _escape_end(s, j)
                if k < 0:
                    return k
                j = k
            else:
                j += 1
    j += 1
    while True:
        if j >= n:
            return -n - 1
        c = s[j]
        if c == q:
            return j + 1
        if c in "\n\r":
            return -j - 1
        if c == "\\" and not raw:
            k = _escape_end(s, j)
            if k < 0:
                return k
            j = k
        else:
            j += 1


def _quote_at(s: str, i: int) -> bool:
    return i < len(s) and s[i] in "\"'"


# The common tokens in one regular expression (a C loop); anything else (numbers other than plain decimal
# integers, strings with escapes or prefixes, triple quotes, comments, escaped identifiers, errors) goes
# through `_slow_token`, which applies ANTLR's longest-match rules character by character.
_FAST = re.compile(
    r"""[\t \r\n\f]*+(?:"""
    r"""([A-Za-z_][A-Za-z0-9_]*+)(?!["'])"""  # 1: identifier or keyword
    r"""|(==|!=|<=|>=|&&|\|\||[<>\[\]{}(),\-!?:+*%]|\.(?![0-9])|/(?!/))"""  # 2: operator
    r"""|([0-9]++)(?![.eExXuU])"""  # 3: decimal int
    r"""|("(?!"")[^"\\\n\r]*+"|'(?!'')[^'\\\n\r]*+')"""  # 4: plain string
    r""")"""
)
_FAST_KINDS = (None, "IDENTIFIER", None, "NUM_INT", "STRING")


def _slow_token(s: str, i: int) -> tuple[str, int, int]:
    """(kind, end, fail) of the token at i: kind "" when ANTLR fails (fail: index of the failing character),
    kind " " for skipped text (white space, comments)."""
    n = len(s)
    c = s[i]
    if c in "\t \r\n\f":
        return " ", _WS.match(s, i).end(), -1  # type: ignore[union-attr]
    if c == "/" and s.startswith("//", i):
        j = s.find("\n", i)
        return " ", (n if j < 0 else j), -1
    kind = ""
    end = i
    fail = -1  # furthest index where the longest alternative failed (no accepted prefix)
    if c.isdigit() and c.isascii() or (c == "." and i + 1 < n and s[i + 1] in "0123456789"):
        kind, end = _number(s, i)
    elif c in "\"'":
        r = _string(s, i)
        if r >= 0:
            kind, end = "STRING", r
        elif s.startswith(c * 3, i):
            kind, end = "STRING", i + 2  # unterminated triple quotes: the empty string matched
        else:
            fail = -r - 1
    elif c in "rRbB" and (
        _quote_at(s, i + 1) or (c in "bB" and s[i + 1 : i + 2] in ("r", "R") and _quote_at(s, i + 2))
    ):
        start = i + 1 if c in "bB" else i
        r = _string(s, start)
        q = start + 1 if s[start] in "rR" else start
        if r >= 0:
            kind, end = ("BYTES" if c in "bB" else "STRING"), r
        elif s.startswith(s[q] * 3, q):
            kind, end = ("BYTES" if c in "bB" else "STRING"), q + 2
        else:
            m = _IDENT.match(s, i)  # the identifier prefix is the longest accepted token
            kind, end = "IDENTIFIER", m.end()  # type: ignore[union-attr]
    elif c == "_" or (c.isascii() and c.isalpha()):
        m = _IDENT.match(s, i)
        end = m.end()  # type: ignore[union-attr]
        text = s[i:end]
        kind = text if text in KEYWORDS else "IDENTIFIER"
    elif c == "`":
        m = _ESC_IDENT.match(s, i)
        if m:
            kind, end = "ESC_IDENTIFIER", m.end()
        else:
            j = i + 1
            while j < n and (s[j].isascii() and (s[j].isalnum() or s[j] in "_./ -")):
                j += 1
            fail = j
    elif s[i : i + 2] in _PUNCT2:
        kind, end = s[i : i + 2], i + 2
    elif c in _PUNCT1:
        kind, end = c, i + 1
    elif c in "&|=":
        fail = i + 1  # '&&', '||', '==' need their second character
    else:
        fail = i
    return kind, end, fail


class Tokens:
    """The token stream as parallel lists (index i: kinds[i], texts[i], starts[i]); the last token is EOF."""

    __slots__ = ("kinds", "texts", "starts", "errors")

    def __init__(self, kinds: list[str], texts: list[str], starts: list[int], errors: list[LexError]) -> None:
        self.kinds = kinds
        self.texts = texts
        self.starts = starts
        self.errors = errors

    def token(self, i: int) -> Token:
        return Token(self.kinds[i], self.texts[i], self.starts[i], i)


def lex(s: str) -> Tokens:
    """Tokens (ending with EOF) and lexer errors, as ANTLR's CEL lexer produces them."""
    kinds: list[str] = []
    texts: list[str] = []
    starts: list[int] = []
    errs: list[LexError] = []
    add_kind, add_text, add_start = kinds.append, texts.append, starts.append
    keywords = KEYWORDS
    intern = sys.intern  # identifiers repeat (`device`, field names): one string each in the AST
    n = len(s)
    i = 0
    while i < n:
        scan = _FAST.scanner(s, i).match  # type: ignore[attr-defined]
        last = None
        while True:
            m = scan()
            if m is None:
                break
            last = m
            g = m.lastindex
            text = m.group(g)
            if g == 1:
                if text in keywords:
                    kind = text
                else:
                    kind = "IDENTIFIER"
                    text = intern(text)
            elif g == 2:
                kind = text
            else:
                kind = _FAST_KINDS[g]
            add_kind(kind)
            add_text(text)
            add_start(m.end() - len(text))
        if last is not None:
            i = last.end()
            if i >= n:
                break
        kind, end, fail = _slow_token(s, i)
        if kind == " ":
            i = end
            continue
        if kind:
            add_kind(kind)
            add_text(sys.intern(s[i:end]) if kind == "IDENTIFIER" else s[i:end])
            add_start(i)
            i = end
            continue
        # ANTLR: report the text up to and including the failing character, then skip that one char.
        errs.append(LexError(i, s[i : fail + 1]))
        i = fail + 1 if fail < n else n
    add_kind(EOF)
    add_text("<EOF>")
    add_start(n)
    return Tokens(kinds, texts, starts, errs)


def tokenize(s: str) -> tuple[list[Token], list[LexError]]:
    """Tokens (ending with EOF) and lexer errors as Token objects (see `lex` for the compact form)."""
    t = lex(s)
    return [t.token(i) for i in range(len(t.kinds))], t.errors
