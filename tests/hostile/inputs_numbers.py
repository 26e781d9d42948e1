"""Hostile numbers (issue §4): quantities upstream cannot parse (`abc`, `.inf`, `.nan`,
`1e9223372036854775808`) in every place a quantity goes are validation errors; quantities it accepts
however large (`1e9999`) are compared exactly and never crash `simulate`; int64 fields and int attributes
outside int64 are errors; CEL integer and quantity arithmetic at the edges is an error, not a crash."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.hostile.corpus import CEL_EVAL, ENGINE, INPUT_IO, register, simulate, strip, validate
from tests.hostile.corpus import Case as _Case
from tests.hostile.inputs_cel import OK, REJECT, C, D, cel_case
from tests.hostile.k8s import DRIVER, V1, claim, node, own_class, request, uid, write, write_json_list

BAD_QUANTITIES = {
    "abc": "abc",
    "inf": ".inf",
    "nan": ".nan",
    "exp-overflow": "1e9223372036854775808",
    "exp-huge-negative": "1e-9223372036854775809",
    "empty": "",
    "double-sign": "+-1",
    "two-dots": "1.5.5",
    "suffix-garbage": "1Ki1",
    "hex": "0x10",
    "space": "1 Gi",
    "unicode-digit": "\u0661",
}
UPSTREAM_NAMED = ("abc", "inf", "nan", "exp-overflow")  # the examples: also through simulate
HUGE = ("1e9999", "2e63", "upper-e-308")  # larger than anything asked for: valid, feasible
STRICT_WHERE = ("capacity", "shared-counter", "claim-request", "consumes-counter")
BIG_QUANTITIES = {
    "1e9999": "1e9999",
    "2e63": "9223372036854775808",
    "1e-9999": "1e-9999",
    "upper-e-308": "1E308",
}


def _scenario(d: Path, where: str, value: Any, as_json: bool = True) -> list[str]:
    """A cluster with consumable and counter-consuming devices and a claim asking for capacity, with
    `value` put at `where` (a quantity field); otherwise feasible."""
    u = uid(d)
    dev: dict[str, Any] = {
        "name": "gpu-0",
        "attributes": {"model": {"string": "X100"}, "case": {"string": u}},
        "allowMultipleAllocations": True,
        "capacity": {
            "memory": {
                "value": "80Gi",
                "requestPolicy": {
                    "default": "1Gi",
                    "validRange": {"min": "1Gi", "max": "80Gi", "step": "1Gi"},
                },
            }
        },
        "consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "1Gi"}}}],
    }
    counters: dict[str, Any] = {"name": "set", "counters": {"mem": {"value": "80Gi"}}}
    req = request("r", f"{u}-gpu", capacity={"requests": {"memory": "2Gi"}})
    if where == "capacity":
        dev["capacity"]["memory"]["value"] = value
    elif where == "policy-default":
        dev["capacity"]["memory"]["requestPolicy"]["default"] = value
    elif where == "policy-range-max":
        dev["capacity"]["memory"]["requestPolicy"]["validRange"]["max"] = value
    elif where == "policy-range-step":
        dev["capacity"]["memory"]["requestPolicy"]["validRange"]["step"] = value
    elif where == "policy-valid-values":
        dev["capacity"]["memory"]["requestPolicy"] = {"default": "1Gi", "validValues": ["1Gi", value]}
    elif where == "shared-counter":
        counters["counters"]["mem"]["value"] = value
    elif where == "consumes-counter":
        dev["consumesCounters"][0]["counters"]["mem"]["value"] = value
    elif where == "claim-request":
        req["exactly"]["capacity"]["requests"]["memory"] = value
    else:
        raise ValueError(where)
    spec = {
        "driver": DRIVER,
        "nodeName": f"{u}-node",
        "pool": {"name": f"{u}-pool", "generation": 1, "resourceSliceCount": 2},
    }
    objs = [
        node(f"{u}-node"),
        own_class(u),
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": f"{u}-counters"},
            "spec": {**copy.deepcopy(spec), "sharedCounters": [counters]},
        },
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": f"{u}-devices"},
            "spec": {**spec, "devices": [dev]},
        },
        claim(f"{u}-claim", [req]),
    ]
    # JSON: the value reaches the quantity parser exactly as written (YAML would resolve 1e9999, .inf, ...)
    return [write_json_list(d, "case.json", objs) if as_json else write(d, "case.yaml", objs)]


WHERE = (
    "capacity",
    "policy-default",
    "policy-range-max",
    "policy-range-step",
    "policy-valid-values",
    "shared-counter",
    "consumes-counter",
    "claim-request",
)


def _q(where: str, value: Any) -> Any:
    return lambda d: _scenario(d, where, value)


register(
    _Case(
        "numbers.quantity-control",
        "numbers",
        INPUT_IO,
        _q("capacity", "80Gi"),
        (validate(exit=0), simulate(pod_batch=True, exit=0)),
        note="control: the scenario with sane quantities is valid and feasible",
    )
)
for _w in WHERE:
    for _n, _v in BAD_QUANTITIES.items():
        if _n in ("unicode-digit", "space", "hex", "two-dots", "empty") and _w not in (
            "capacity",
            "claim-request",
        ):
            continue  # the syntax family once per side (slice, claim); the upstream-named values everywhere
        register(
            _Case(
                f"numbers.quantity-{_n}-in-{_w}",
                "numbers",
                ENGINE,
                _q(_w, _v),
                (validate(exit=1), simulate(pod_batch=True, exit=1))
                if _n in UPSTREAM_NAMED
                else (validate(exit=1),),
                note=f"quantity {_v!r} in {_w}: upstream cannot parse it",
            )
        )
    for _n, _v in BIG_QUANTITIES.items():
        if _n != "1e9999" and _w not in ("capacity", "claim-request", "shared-counter"):
            continue
        register(
            _Case(
                f"numbers.quantity-{_n}-in-{_w}",
                "numbers",
                ENGINE,
                _q(_w, _v),
                (
                    # acceptance is validation's; whether it fits is the simulate run's question
                    validate("--no-feasibility", exit=0 if _n in HUGE and _w in STRICT_WHERE else (0, 1)),
                    simulate(
                        pod_batch=True,
                        exit=0 if _n in HUGE and _w in ("capacity", "shared-counter") else (0, 1),
                    ),
                ),
                note=f"quantity {_v} in {_w}: accepted upstream, compared exactly, never an OverflowError",
            )
        )

# unquoted YAML numbers where quantities go: floats that are inf/nan after YAML


def _unquoted(raw: str) -> Any:
    def build(d: Path) -> list[str]:
        path = _scenario(d, "capacity", "__V__", as_json=False)[0]
        text = Path(path).read_text().replace("'__V__'", raw).replace("__V__", raw)
        return [write(d, "case.yaml", text)]

    return build


# kubectl's go-yaml reads `.inf`/`.nan` as floats (not quantities: errors) but keeps `1e400`/`1e9999` as
# strings (ParseFloat is out of range), which are valid quantities.
for _n, _raw, _ok in (
    ("yaml-inf", ".inf", False),
    ("yaml-nan", ".nan", False),
    ("yaml-1e400", "1e400", True),
    ("yaml-1e9999", "1e9999", True),
):
    register(
        _Case(
            f"numbers.quantity-{_n}-unquoted",
            "numbers",
            INPUT_IO,
            _unquoted(_raw),
            (validate(exit=0), simulate(pod_batch=True, exit=0))
            if _ok
            else (validate(exit=1), simulate(pod_batch=True, exit=1)),
            note=f"an unquoted YAML {_raw} as a capacity value ({'a string to go-yaml: valid' if _ok else 'a float: invalid'})",
        )
    )

# upstream parses the exponent of `1eN` as int64 and then truncates it to int32: 1e4294967296 is 1,
# 1e9223372036854775807 is 0.1, 1e2147483647 is 10^2147483647 (never materialised). A capacity of X and a
# selector asking for at least 2 must give upstream's verdict, without building a 4-billion-digit int.


def _wrapped(d: Path, value: str) -> list[str]:
    u = uid(d)
    dev = {"name": "gpu-0", "attributes": {"case": {"string": u}}, "capacity": {"memory": {"value": value}}}
    objs = [
        node(f"{u}-node"),
        own_class(u),
        {
            "apiVersion": V1,
            "kind": "ResourceSlice",
            "metadata": {"name": f"{u}-s"},
            "spec": {
                "driver": DRIVER,
                "nodeName": f"{u}-node",
                "pool": {"name": f"{u}-p", "generation": 1, "resourceSliceCount": 1},
                "devices": [dev],
            },
        },
        claim(f"{u}-c", [request("r", f"{u}-gpu", [f"{C}.memory.compareTo(quantity('2')) >= 0"])]),
    ]
    return [write_json_list(d, "case.json", objs)]


_WRAPPED: dict[str, tuple[str, int | tuple[int, ...]]] = {
    "exp-2e32-is-one": ("1e4294967296", 1),
    "exp-maxint64-is-tenth": ("1e9223372036854775807", 1),
    "exp-maxint32": ("1e2147483647", (0, 3)),  # upstream: true, after minutes (inf.Dec)
    "exp-2e31-wraps-negative": ("1e2147483648", (1, 3)),  # upstream: false, after minutes
}
for _n, (_v, _sim) in _WRAPPED.items():
    register(
        _Case(
            f"numbers.quantity-{_n}",
            "numbers",
            ENGINE,
            (lambda v: lambda d: _wrapped(d, v))(_v),
            (validate(exit=(0, 1)), simulate(pod_batch=True, exit=_sim)),
            note=f"capacity {_v}: upstream truncates the exponent to int32 (simulate exit {_sim})",
        )
    )

# ---- int64 fields -----------------------------------------------------------------------------------

INT64_BAD = {"2e63": 2**63, "neg-2e63-1": -(2**63) - 1, "2e64": 2**64, "1e30": 10**30}


def _int_field(d: Path, where: str, value: int) -> list[str]:
    u = uid(d)
    dev = {"name": "gpu-0", "attributes": {"index": {"int": 0}, "case": {"string": u}}}
    sl = {
        "apiVersion": V1,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{u}-s", "generation": 1},
        "spec": {
            "driver": DRIVER,
            "nodeName": f"{u}-node",
            "pool": {"name": f"{u}-pool", "generation": 1, "resourceSliceCount": 1},
            "devices": [dev],
        },
    }
    req = request("r", f"{u}-gpu", count=1)
    cl = claim(f"{u}-claim", [req])
    if where == "attribute-int":
        dev["attributes"]["index"]["int"] = value
    elif where == "pool-generation":
        sl["spec"]["pool"]["generation"] = value
    elif where == "resource-slice-count":
        sl["spec"]["pool"]["resourceSliceCount"] = value
    elif where == "metadata-generation":
        sl["metadata"]["generation"] = value
    elif where == "request-count":
        req["exactly"]["count"] = value
    elif where == "subrequest-count":
        cl["spec"]["devices"]["requests"] = [
            {
                "name": "r",
                "firstAvailable": [
                    {
                        "name": "a",
                        "deviceClassName": f"{u}-gpu",
                        "allocationMode": "ExactCount",
                        "count": value,
                    }
                ],
            }
        ]
    elif where == "toleration-seconds":
        req["exactly"]["tolerations"] = [
            {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": value}
        ]
    elif where == "deletion-grace":
        cl["metadata"]["deletionGracePeriodSeconds"] = value
    else:
        raise ValueError(where)
    # JSON: exactly these integers (YAML would round -2^63-1 through a float64, as kubectl's go-yaml does)
    return [write_json_list(d, "case.json", [node(f"{u}-node"), own_class(u), sl, cl])]


INT_WHERE = (
    "attribute-int",
    "pool-generation",
    "resource-slice-count",
    "metadata-generation",
    "request-count",
    "subrequest-count",
    "toleration-seconds",
    "deletion-grace",
)
for _w in INT_WHERE:
    for _n, _v in INT64_BAD.items():
        if _n not in ("2e63", "neg-2e63-1") and _w not in (
            "attribute-int",
            "request-count",
            "pool-generation",
        ):
            continue
        register(
            _Case(
                f"numbers.int64-{_n}-in-{_w}",
                "numbers",
                ENGINE,
                (lambda w, v: lambda d: _int_field(d, w, v))(_w, _v),
                (validate(exit=1),)
                + ((simulate(pod_batch=True, exit=1),) if _n == "2e63" else ())
                + ((strip(exit=(0, 1)),) if _w in ("attribute-int", "request-count") else ()),
                note=f"{_v} in the int64 field {_w}",
            )
        )
register(
    _Case(
        "numbers.int64-max-attribute-control",
        "numbers",
        INPUT_IO,
        lambda d: _int_field(d, "attribute-int", 2**63 - 1),
        (validate(exit=0), simulate(pod_batch=True, exit=0)),
        note="control: 2^63-1 is a valid int attribute",
    )
)

# ---- CEL arithmetic at the edges ----------------------------------------------------------------------

CEL_NUMBERS = {
    "int-overflow-add": (f"({D}.index + 1) + 9223372036854775807 > 0", OK, 1),
    "int-overflow-mul": ("9223372036854775807 * 2 > 0", OK, 1),
    "int-min-negate": ("-(-9223372036854775807 - 1) > 0", OK, 1),
    "int-literal-overflow": ("9223372036854775808 > 0", REJECT, 1),
    "int-min-literal": ("-9223372036854775808 < 0", OK, 0),
    "int-div-zero": (f"1 / ({D}.index - {D}.index) == 1", OK, 1),
    "int-mod-min": ("(-9223372036854775807 - 1) % -1 == 0", OK, (0, 1)),
    "double-to-int-overflow": ("int(1e19) > 0", REJECT, 1),
    "uint-negative": ("uint(-1) > 0u", REJECT, 1),
    "quantity-1e9999-compare": (f"{C}.memory.compareTo(quantity('1e9999')) < 0", OK, 0),
    "quantity-1e9999-asinteger": ("quantity('1e9999').asInteger() > 0", OK, 1),
    "quantity-1e9999-float": ("quantity('1e9999').asApproximateFloat() > 0.0", OK, 0),
    "quantity-1e9999-isinteger": ("quantity('1e9999').isInteger()", OK, (0, 1)),
    "quantity-1e9999-add": ("quantity('1e9999').add(quantity('1e9999')).isGreaterThan(quantity('1'))", OK, 0),
    "quantity-1e9999-sub": ("quantity('-1e9999').sub(quantity('1e9999')).isLessThan(quantity('0'))", OK, 0),
    "quantity-tiny-sign": ("quantity('1e-9999').isGreaterThan(quantity('0'))", OK, (0, 1)),
    "quantity-maxint-add": ("quantity('9223372036854775807').add(1).isGreaterThan(quantity('1'))", OK, 0),
    "quantity-exp-overflow-literal": ("quantity('1e9223372036854775808').isInteger()", OK, 1),
    "quantity-abc-literal": ("quantity('abc').isInteger()", OK, 1),
    "quantity-sub-int-overflow": ("quantity('-9223372036854775808').sub(1).isLessThan(quantity('0'))", OK, 0),
    "isquantity-huge": ("isQuantity('1e9223372036854775808') == false", OK, 0),
    "semver-huge-major": ("semver('99999999999999999999999.0.0').major() > 0", OK, 1),
    "lists-range-huge": ("lists.range(9223372036854775807).size() > 0", REJECT, 1),
}
for _n, (_e, _ok, _sim) in CEL_NUMBERS.items():
    cel_case("numbers", _n, _e, _ok, _sim, CEL_EVAL, note=f"CEL number edge: {_e}")
