"""Output forging (issue §6): input text (names, kinds, namespaces, map keys, CEL expressions, file
paths) carrying newlines, carriage returns, ANSI escapes and XML-invalid characters must not print a line
that looks like another finding, must leave JUnit output valid XML and SARIF URIs percent-encoded."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from tests.hostile.corpus import INPUT_IO, Run, register, simulate, strip, validate
from tests.hostile.corpus import Case as _Case
from tests.hostile.harness import Outcome
from tests.hostile.k8s import (
    DRIVER,
    claim,
    device,
    device_class,
    node,
    pod,
    request,
    resource_slice,
    uid,
    write,
)

FORGED = "FORGED.yaml:1: error fake.rule: spec: forged finding"
PAYLOADS = {
    "newline": f"x\n{FORGED}\n",
    "crlf": f"x\r\n{FORGED}",
    "carriage-return": f"x\r{FORGED}",
    "ansi": f"x\x1b[2K\x1b[1G{FORGED}\x1b[31m",
    "nel-ls": f"x\x85{FORGED}\u2028{FORGED}",
    "xml-invalid": "x\x00\x01\x08\x0b\x0c\x1f\ufffe\uffff]]><!--",
}

_LINE = re.compile(r"^(\S.*?):(\d+): (error|warning|info) [a-z][a-z0-9.-]*: ")
_BAD_CHAR = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _bad_chars(text: str) -> str | None:
    m = _BAD_CHAR.search(text)
    if m:
        return f"raw control character U+{ord(m.group()):04X} in output: {text[max(0, m.start() - 40) : m.end() + 20]!r}"
    return None


def _input_dirs(o: Outcome) -> tuple[str, ...]:
    """The case directories of the run's inputs (lines must start with one of them + '/')."""
    return tuple({str(Path(a).parent) + "/" for a in o.argv if a.startswith("/")}) or ("/",)


def check_text(o: Outcome) -> str | None:
    """`file:line: severity rule: ...` lines only, each for one of the input's files, no raw controls."""
    bad = _bad_chars(o.stdout)
    if bad:
        return bad
    prefixes = _input_dirs(o) + ("<stdin>:",)
    for line in o.stdout.split("\n"):
        if not line or line.startswith("Summary: "):
            continue
        if not line.startswith(prefixes) or not _LINE.match(line):
            return f"a line that is not one finding: {line[:160]!r}"
    return None


def check_stderr_lines(o: Outcome) -> str | None:
    """strip's stderr: findings only (`file:line: ...`), no raw controls."""
    bad = _bad_chars(o.stderr)
    if bad:
        return bad
    prefixes = _input_dirs(o) + ("draguard: ",)
    for line in o.stderr.split("\n"):
        if line and not line.startswith(prefixes):
            return f"a stderr line that is not one finding: {line[:160]!r}"
    return None


def check_simulate_text(o: Outcome) -> str | None:
    bad = _bad_chars(o.stdout)
    if bad:
        return bad
    for line in o.stdout.split("\n"):
        if line.lstrip().startswith("FORGED") or line.startswith("Pod FORGED"):
            return f"a forged line: {line[:160]!r}"
    heads = [ln for ln in o.stdout.split("\n") if re.match(r"^(Pod |Claims )", ln)]
    if len(heads) > 1:
        return f"{len(heads)} Pod headings for one Pod: {heads[:3]!r}"
    return None


def check_junit(o: Outcome) -> str | None:
    try:
        root = ET.fromstring(o.stdout.encode("utf-8", "surrogateescape"))
    except ET.ParseError as e:
        return f"JUnit output is not XML: {e}"
    except UnicodeEncodeError as e:
        return f"JUnit output is not encodable: {e}"
    if not root.findall(".//testcase"):
        return "JUnit output has no testcase"
    return None


_URI = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")


def check_sarif(o: Outcome) -> str | None:
    try:
        doc = json.loads(o.stdout)
    except ValueError as e:
        return f"SARIF output is not JSON: {e}"
    uris = [
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for run in doc.get("runs", [])
        for res in run.get("results", [])
        for loc in res.get("locations", [])
    ]
    if not uris:
        return "SARIF output has no result location"
    for u in uris:
        if not _URI.match(u):
            return f"SARIF uri not percent-encoded: {u[:120]!r}"
    return None


def _runs(sim: bool = False, strip_stderr: bool = False) -> tuple[Run, ...]:
    runs = [
        validate(exit=1),
        validate(exit=1, check=check_text, shared=True),
        validate("-o", "junit", exit=1, check=check_junit, shared=True),
        validate("-o", "sarif", exit=1, check=check_sarif, shared=True),
        validate("--summary", exit=1, check=check_text, shared=True),
    ]
    if sim:
        runs.append(simulate(exit=1, check=check_simulate_text))
    if strip_stderr:
        runs.append(strip(exit=(0, 1), check=check_stderr_lines))
    return tuple(runs)


def _obj_with(where: str, payload: str, u: str) -> list[Any]:
    dc = device_class(f"{u}-g")
    cl = claim(f"{u}-c", [request("r", f"{u}-g")])
    if where == "name":
        cl["metadata"]["name"] = payload
    elif where == "namespace":
        cl["metadata"]["namespace"] = payload
    elif where == "kind":
        cl["kind"] = payload
    elif where == "label-key":
        cl["metadata"]["labels"] = {payload: "v"}
    elif where == "label-value":
        cl["metadata"]["labels"] = {"k": payload}
    elif where == "annotation-key":
        cl["metadata"]["annotations"] = {payload: "v"}
    elif where == "unknown-field":
        cl["spec"][payload] = 1
    elif where == "request-name":
        cl["spec"]["devices"]["requests"][0]["name"] = payload
    elif where == "class-ref":
        cl["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = payload
    elif where == "cel":
        cl["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
            {"cel": {"expression": "device.driver == '''" + payload + "''' && 1"}}
        ]
    elif where == "cel-bad-token":
        cl["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
            {"cel": {"expression": payload + " ==="}}
        ]
    else:
        raise ValueError(where)
    return [dc, cl]


WHERE = (
    "name",
    "namespace",
    "kind",
    "label-key",
    "label-value",
    "annotation-key",
    "unknown-field",
    "request-name",
    "class-ref",
    "cel",
    "cel-bad-token",
)
for _w in WHERE:
    for _p in ("newline", "ansi", "xml-invalid") if _w not in ("name", "cel") else PAYLOADS:
        register(
            _Case(
                f"output.{_p}-in-{_w}",
                "output",
                INPUT_IO,
                (
                    lambda w, p: (
                        lambda d: [write(d, "case.json", json.dumps(_obj_with(w, PAYLOADS[p], uid(d))[1]))]
                    )
                )(_w, _p),
                _runs(),
                note=f"{_p} payload in {_w}",
            )
        )


def _sim_names(d: Path, where: str, payload: str) -> list[str]:
    u = uid(d)
    n = node(f"{u}-n")
    sl = resource_slice(f"{u}-s", [device("gpu-0", 0)], pool=f"{u}-p", node=f"{u}-n")
    dc = device_class(f"{u}-g")
    cl = claim(f"{u}-c", [request("r", f"{u}-g", ["device.attributes['gpu.example.com'].model == 'none'"])])
    p = pod(f"{u}-pod", [f"{u}-c"])
    if where == "pod-name":
        p["metadata"]["name"] = payload
    elif where == "claim-name":
        cl["metadata"]["name"] = payload
        p["spec"]["resourceClaims"][0]["resourceClaimName"] = payload
    elif where == "driver":
        sl["spec"]["driver"] = payload
    elif where == "selector-string":
        cl["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
            {
                "cel": {
                    "expression": f"device.attributes['{DRIVER}'].model == '{payload.encode('unicode_escape').decode()}' || 1 / 0 == 1"
                }
            }
        ]
    return [
        write(d, "case.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [n, sl, dc, cl, p]}))
    ]


for _w in ("pod-name", "claim-name", "driver", "selector-string"):
    for _p in ("newline", "ansi"):
        register(
            _Case(
                f"output.simulate-{_p}-in-{_w}",
                "output",
                INPUT_IO,
                (lambda w, p: lambda d: _sim_names(d, w, PAYLOADS[p]))(_w, _p),
                (simulate(exit=(1, 3), check=check_simulate_text),),
                note=f"simulate text with a {_p} payload in the {_w}",
            )
        )

# ---- file names -----------------------------------------------------------------------------------

FILE_NAMES = {
    "newline": f"a\n{FORGED}\n.yaml",
    "ansi": "a\x1b[2Kb.yaml",
    "colon-line": "a.yaml:1: error fake.rule: forged .yaml",
    "space-percent-hash": "a b%20c#d?e.yaml",
    "unicode": "d\u00e9j\u00e0-\u2603.yaml",
    "xml-specials": "a<b>&\"']]>.yaml",
    "backslash": "a\\b.yaml",
    "control-bytes": "a\x01\x02\x7f.yaml",
}


def _bad_file(name: str) -> Any:
    def build(d: Path) -> list[str]:
        dc = device_class("Bad_Name")  # one error finding, so there is output naming the file
        return [write(d, name, [dc])]

    return build


for _n, _fname in FILE_NAMES.items():
    register(
        _Case(
            f"output.file-name-{_n}",
            "output",
            INPUT_IO,
            _bad_file(_fname),
            _runs(strip_stderr=False),
            note=f"a manifest file named {_fname!r}",
        )
    )


def _strip_forged(d: Path) -> list[str]:
    """A claim using a field its version drops, in a file whose name carries a payload (strip's stderr)."""
    c = claim("c", [request("r", "g")])
    c["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {f"x\n{FORGED}": "1"}}
    return [write(d, f"s\n{FORGED}.yaml", [c])]


register(
    _Case(
        "output.strip-stderr-forged",
        "output",
        INPUT_IO,
        _strip_forged,
        (strip("--k8s-version", "1.35", exit=(0, 1), check=check_stderr_lines),),
        note="strip's dropped-field warnings on stderr with payloads in the file name and a map key",
    )
)


def _parse_error_snippet(d: Path) -> list[str]:
    """A YAML syntax error on a line that carries ANSI escapes (parse errors quote the input)."""
    text = 'apiVersion: v1\nkind: Pod\nmetadata: {name: "\x1b[2K' + FORGED + '"}\n  bad: [\n'
    return [write(d, "parse.yaml", text)]


register(
    _Case(
        "output.yaml-error-snippet",
        "output",
        INPUT_IO,
        _parse_error_snippet,
        _runs(),
        note=_parse_error_snippet.__doc__ or "",
    )
)
