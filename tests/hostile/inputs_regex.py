"""Hostile regular expressions (issue §1): patterns built to backtrack (`(a+)+$`) on long inputs through
`find`/`findAll` (Python's backtracking `re` today) and `matches`, and literal patterns that Go's RE2
syntax rejects, which upstream reports at compile time. Verdicts recorded with `draoracle validate`."""

from __future__ import annotations

from tests.hostile.corpus import CEL_EVAL, CEL_FRONT
from tests.hostile.inputs_cel import OK, REJECT, D, cel_case

A40 = "a" * 40 + "b"
A5000 = "a" * 5000 + "b"

# (expression, simulate exit): each is true on every device, so the claim is feasible (exit 0), unless
# the selector errors (1); never a hang.
BACKTRACK = {
    "find-nested-plus-40": (f"'{A40}'.find('(a+)+$') == ''", 0),
    "find-nested-plus-5000": (f"'{A5000}'.find('(a+)+$') == ''", 0),
    "findall-alternation-40": (f"'{A40}'.findAll('(a|aa)+$').size() == 0", 0),
    "findall-limit-star-star": (f"'{A40}'.findAll('(a*)*$', 3).size() >= 0", 0),
    "find-dot-star-repeat": (f"('{A40}' + '{A40}')" + ".find('(.*a){20}') != 'zz'", 0),
    "find-attribute-nested-plus": (f"{D}.model.find('(a+)+$') == ''", 0),
    "findall-attribute-x-plus": (f"{D}.model.findAll('(x+x+)+y').size() == 0", 0),
    "matches-nested-plus-5000": (f"!'{A5000}'.matches('(a+)+$')", 0),
    "find-word-space-star": (f"'{'word ' * 30}!'.find('^(\\\\w+\\\\s?)*$') == ''", 0),
    "find-bind-grown-input": (
        f"cel.bind(s, '{A40}' + '{A40}' + '{A40}', cel.bind(t, s + s + s + s, t.find('(a+)+$') == ''))",
        0,
    ),
    "matches-dynamic-pattern": (f"!{D}.model.matches(device.driver + '(a+)+$')", 0),
}
for _n, (_e, _sim) in BACKTRACK.items():
    cel_case("regex", _n, _e, OK, _sim, CEL_EVAL, note=f"linear-time regex required: {_e[:80]}")

# literal patterns Go's regexp rejects: compile errors for matches() and find()/findAll() alike
RE2_INVALID = {
    "open-paren": "(",
    "backreference": "(a)\\\\1",
    "lookahead": "(?=a)",
    "lookbehind": "(?<=a)b",
    "repeat-1001": "a{1001}",
    "unknown-class": "\\\\p{Foo}",
    "reversed-range": "[z-a]",
    "python-named-backref": "(?P<n>a)(?P=n)",
    "double-star": "a**",
    "escape-upper-z": "\\\\Z",
    "reversed-count": "\\\\d{2,1}",
    "nested-repeat": "x{2}{3}",
    "posix-class-unknown": "[[:foo:]]",
    "comment-group": "(?#comment)a",
    "escape-upper-c": "\\\\C",
    "possessive": "a++",
}
for _n, _p in RE2_INVALID.items():
    cel_case("regex", f"re2-matches-{_n}", f"device.driver.matches('{_p}')", REJECT, None, CEL_FRONT)
    cel_case("regex", f"re2-find-{_n}", f"device.driver.find('{_p}') == ''", REJECT, None, CEL_FRONT)

# valid in Go's syntax (controls: must not be rejected)
for _n, _p in {
    "case-insensitive": "(?i)a",
    "dotall": "(?s).",
    "repeat-1000": "a{1000}",
    "named-group": "(?<n>a)",
}.items():
    cel_case("regex", f"re2-valid-{_n}", f"device.driver.find('{_p}') != 'zz'", OK, 0, CEL_FRONT)
