"""Hostile CEL selectors (issue §1): optionals passed to library functions we implement (a native crash
under `simulate` today), string/list growth through bind/join/replace/concat, deep nesting, 10 KiB
expressions, thousands of selectors. Compile verdicts are upstream's (cel-go with the Kubernetes DRA
environment, recorded with `draoracle validate`)."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.corpus import CEL_EVAL, CEL_FRONT, Run, register, simulate, validate
from tests.hostile.corpus import Case as _Case
from tests.hostile.k8s import claim, request, selector_case, small_cluster, uid, write

D = "device.attributes['gpu.example.com']"
C = "device.capacity['gpu.example.com']"
OK, REJECT = True, False


def cel_case(
    cls: str,
    name: str,
    exprs: str | list[str],
    compiles: bool,
    sim: int | tuple[int, ...] | None,
    area: str,
    *,
    note: str = "",
    count: int | None = None,
    extra: tuple[Run, ...] = (),
    mem: int | None = None,
) -> None:
    """A claim with the selector(s) on a 4-GPU cluster: `validate` must accept exactly when upstream
    compiles it; `simulate` (when `sim` is given) must end with that exit code, never a crash."""
    es = [exprs] if isinstance(exprs, str) else exprs
    kw = {"mem": mem} if mem else {}
    # acceptance is validation's (feasibility off: whether the claim fits is the simulate run's question)
    accept = validate("--no-feasibility", exit=0, **kw)
    runs = [accept if compiles else validate(exit=1, rules=("claim.selectors",), **kw)]
    if sim is not None:
        runs.append(simulate(exit=sim, pod_batch=True, **kw))
    register(
        _Case(
            f"{cls}.{name}",
            cls,
            area,
            lambda d: selector_case(d, *es, count=count),
            tuple(runs) + extra,
            note=note or es[0][:120],
        )
    )


# ---- optionals into functions implemented in Python: rejected by the checker, never a crash ----------

OPTIONAL_REJECTED = {
    "opt-capacity-compareto": f"{C}.?memory.compareTo(quantity('1Gi')) > 0",
    "opt-compareto-arg": f"quantity('1Gi').compareTo({C}.?memory) > 0",
    "opt-isgreaterthan": "optional.of(quantity('1')).isGreaterThan(quantity('0'))",
    "opt-list-sum": "[optional.of(1)].sum() > 0",
    "opt-list-min": "[optional.of(1), optional.of(2)].min() == optional.of(1)",
    "opt-list-issorted": "[optional.of(1), optional.of(2)].isSorted()",
    "opt-semver-major": f"{D}.?ver.major() == 1",
    "opt-semver-arg": f"semver('1.0.0').isGreaterThan({D}.?ver)",
    "opt-none-isinteger": "optional.none().isInteger()",
    "opt-asinteger": "optional.of(quantity('1')).asInteger() == 1",
    "opt-cidr-containsip": "cidr('10.0.0.0/8').containsIP(optional.of(ip('10.0.0.1')))",
    "opt-ip-family": "optional.of(ip('1.1.1.1')).family() == 4",
    "opt-bind-compareto": f"cel.bind(m, {C}.?memory, m.compareTo(quantity('1')) > 0)",
    "opt-comprehension-compareto": f"[{C}.?memory].all(m, m.compareTo(quantity('1')) > 0)",
    "opt-isquantity": "isQuantity(optional.of('1'))",
    "opt-dyn-isquantity-method": "dyn(optional.of('1Gi')).isQuantity()",
    "opt-dyn-sign": "dyn(optional.of(quantity('1'))).sign() == 1",
    "opt-format-list": "'%s'.format([optional.of(1)]) != ''",
    "opt-dyn-indexof-list": "dyn([1, optional.of(2)]).indexOf(optional.of(2)) == 1",
    "opt-dyn-issorted-mixed": "dyn([quantity('1'), optional.of(2)]).isSorted()",
}
for _n, _e in OPTIONAL_REJECTED.items():
    cel_case("cel", _n, _e, REJECT, 1, CEL_FRONT, note=f"optional into a library function: {_e}")

# Upstream compiles these (dyn hides the optional from the checker); at run time the call has no
# overload. The boundary to the native engine must turn that into an error, never a native crash.
OPTIONAL_DYN = {
    "dyn-opt-capacity-compareto": f"dyn({C}.?memory).compareTo(quantity('1')) > 0",
    "dyn-opt-sum": "dyn(optional.of(1)).sum() > 0",
    "dyn-opt-list-sum": "dyn([optional.of(1)]).sum() > 0",
    "dyn-opt-semver-major": "dyn(optional.of(semver('1.2.3'))).major() == 1",
    "dyn-opt-isinteger": "dyn(optional.of(quantity('1'))).isInteger()",
    "dyn-opt-list-max": "dyn([optional.of(1), optional.of(2)]).max() != dyn(0)",
    "dyn-opt-find": "dyn(optional.of(1)).find('a') == ''",
    "dyn-opt-add": "dyn(optional.of(quantity('1'))).add(1).isInteger()",
    "dyn-opt-isloopback": "dyn(optional.of(ip('1.1.1.1'))).isLoopback()",
    "dyn-opt-cidr-containsip": "dyn(optional.of(cidr('1.0.0.0/8'))).containsIP('1.1.1.1')",
    "dyn-opt-semver-compareto": "dyn(optional.of(semver('1.0.0'))).compareTo(semver('1.0.0')) == 0",
    "dyn-opt-semver-compareto-arg": "semver('1.0.0').compareTo(dyn(optional.of(semver('1.0.0')))) == 0",
    "dyn-opt-attr-islessthan": f"dyn(optional.of({D}.ver)).isLessThan(semver('9.0.0'))",
}
for _n, _e in OPTIONAL_DYN.items():
    cel_case("cel", _n, _e, OK, 1, CEL_EVAL, note=f"dyn-wrapped optional reaches a Python function: {_e}")

cel_case(
    "cel",
    "opt-orvalue-control",
    f"{C}.?memory.orValue(quantity('0')).compareTo(quantity('1Gi')) > 0",
    OK,
    0,
    CEL_FRONT,
    note="control: the optional unwrapped with orValue() is valid and allocates",
)

# ---- growth: string/list sizes that the cost estimate or the runtime must bound ---------------------


def _double(n: int, base: str = "device.driver") -> str:
    s = f"cel.bind(a0, {base}, "
    for i in range(1, n + 1):
        s += f"cel.bind(a{i}, a{i - 1} + a{i - 1}, "
    return s + f"a{n}.size() > 0" + ")" * (n + 1)


def _replace(n: int) -> str:
    s = "a"
    for _ in range(n):
        s = f"a.replace('a', {s})"
    return f"cel.bind(a, 'aaaa', {s}.size() > 0)"


def _listcat(n: int) -> str:
    s = "cel.bind(a0, [1,2,3,4,5,6,7,8], "
    for i in range(1, n + 1):
        s += f"cel.bind(a{i}, " + " + ".join([f"a{i - 1}"] * 8) + ", "
    return s + f"a{n}.size() > 0" + ")" * (n + 1)


L64 = "[" + ",".join(str(i) for i in range(64)) + "]"
L100 = "[" + ",".join(str(i) for i in range(100)) + "]"
_FMT = "'%s%s%s%s'.format([{0}, {0}, {0}, {0}])"

# rejected by upstream's cost estimate
GROWTH_REJECTED = {
    "grow-concat-30": _double(30),
    "grow-concat-20": _double(20),
    "grow-join-tower": "cel.bind(a, [device.driver, device.driver], cel.bind(b, [a.join(''), a.join('')], "
    "cel.bind(c, [b.join(''), b.join('')], c.join('').size() > 0)))",
    "grow-join-4x4": "cel.bind(a, [device.driver, device.driver, device.driver, device.driver], cel.bind(b, "
    "[a.join(''), a.join(''), a.join(''), a.join('')], cel.bind(c, [b.join(''), b.join(''), b.join(''), "
    "b.join('')], cel.bind(e, [c.join(''), c.join(''), c.join(''), c.join('')], [e.join(''), e.join('')]"
    ".join('').size() > 0))))",
    "grow-split-join": "device.driver.split('').join(device.driver).split('').join(device.driver).size() > 0",
    "grow-replace-empty": "cel.bind(a, device.driver, cel.bind(b, a.replace('', a), cel.bind(c, b.replace('', b), "
    "cel.bind(d, c.replace('', c), d.size() > 0))))",
    "grow-map-join-nested": f"{L64}.map(x, {L64}.map(y, device.driver).join('')).join('').size() > 0",
    "grow-map-join-bind": f"cel.bind(s, {L64}.map(x, 'abcdefgh').join(''), cel.bind(t, {L64}.map(x, s).join(''), "
    "t.size() > 0))",
    "grow-comprehension-100-cubed": f"{L100}.all(x, {L100}.all(y, {L100}.all(z, x + y + z >= 0)))",
    "grow-map-100-squared-strings": f"{L100}.map(x, {L100}.map(y, device.driver + string(x) + string(y))).size() > 0",
    "grow-split-map-join": "cel.bind(a, device.driver.split(''), cel.bind(b, a.map(x, a.join('')), "
    "cel.bind(c, b.map(y, b.join('')), c.size() > 0)))",
}
for _n, _e in GROWTH_REJECTED.items():
    cel_case(
        "cel", _n, _e, REJECT, 1, CEL_FRONT, note=f"result size rejected by the cost estimate: {_e[:90]}"
    )

# compiled by upstream (its estimate does not follow these sizes); its runtime cost limit stops the big
# ones. Ours must stop them within the budget and the memory bound: infeasible or undecided, no crash.
GROWTH_RUNTIME = {
    "grow-replace-8": (_replace(8), (0, 1, 3)),  # 4^9 = 262,144 characters: may legitimately finish
    "grow-replace-12": (_replace(12), (1, 3)),  # 67 MB
    "grow-replace-20": (_replace(20), (1, 3)),  # 4^21 characters
    "grow-concat-16": (_double(16), (0, 1, 3)),  # 63 bytes × 65,536 = 4 MB
    "grow-listcat-6": (_listcat(6), (0, 1, 3)),  # 2 M elements
    "grow-listcat-9": (_listcat(9), (1, 3)),  # 1 G elements
    "grow-format-tower": (
        "cel.bind(a, " + _FMT.format("device.driver") + ", cel.bind(b, " + _FMT.format("a") + ", cel.bind(c, "
        "" + _FMT.format("b") + ", c.size() > 0)))",
        (0, 1, 3),
    ),
    "grow-replace-empty-2": (
        "cel.bind(a, device.driver + device.driver + device.driver + device.driver, cel.bind(b, "
        "a.replace('', a), cel.bind(c, b.replace('', b), c.size() > 0)))",
        (0, 1, 3),
    ),
    "grow-nested-all-10-4": (
        "[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, [1,2,3,4,5,6,7,8,9,10].all(z, "
        "[1,2,3,4,5,6,7,8,9,10].all(w, x+y+z+w > 0))))",
        (0, 1, 3),
    ),
    "grow-100-squared": (f"{L100}.all(x, {L100}.all(y, x + y >= 0))", (0, 1, 3)),
}
for _n, (_e, _sim) in GROWTH_RUNTIME.items():
    cel_case(
        "cel", _n, _e, OK, _sim, CEL_EVAL, note=f"compiles upstream, must be bounded at run time: {_e[:80]}"
    )

# ---- nesting: upstream's limits (recursion 250, parser depth), not 32 --------------------------------


def _parens(n: int) -> str:
    return "(" * n + "device.driver == 'gpu.example.com'" + ")" * n


NESTING = {
    "parens-33": (_parens(33), OK, 0),
    "parens-200": (_parens(200), OK, 0),
    "parens-250": (_parens(250), REJECT, 1),
    "parens-1000": (_parens(1000), REJECT, 1),
    "parens-100000": (_parens(100_000), REJECT, None),
    "sum-40": (" + ".join(["1"] * 40) + " == 40", OK, 0),
    "sum-100": (" + ".join(["1"] * 100) + " == 100", OK, None),
    "sum-500": (" + ".join(["1"] * 500) + " == 500", REJECT, None),
    "not-500": ("!" * 500 + "true", OK, None),
    "list-nesting-100": ("[" * 100 + "1" + "]" * 100 + " != []", OK, None),
    "list-nesting-300": ("[" * 300 + "1" + "]" * 300 + " != []", REJECT, None),
    "list-nesting-50000": ("[" * 50_000 + "1" + "]" * 50_000 + " != []", REJECT, None),
    "bind-nesting-100": ("cel.bind(x, 1, " * 100 + "x == 1" + ")" * 100, OK, 0),
    "bind-nesting-300": ("cel.bind(x, 1, " * 300 + "x == 1" + ")" * 300, REJECT, None),
    "comprehension-nesting-100": (
        "[1].all(x0, " + "".join(f"[1].all(x{i}, " for i in range(1, 100)) + "true" + ")" * 100,
        OK,
        0,
    ),
    "method-chain-300": ("device.driver" + ".lowerAscii()" * 300 + " == ''", REJECT, None),
    "ternary-unbalanced": ("true ? " * 300 + "true" + " : false" * 300, REJECT, None),
    "or-chain-300": (" || ".join(f"device.driver == 'd{i}'" for i in range(300)), OK, None),
    "unary-minus-1000": ("-" * 1000 + "1 == 1", OK, None),
}
for _n, (_e, _ok, _sim) in NESTING.items():
    cel_case("cel", _n, _e, _ok, _sim, CEL_FRONT, note=f"nesting ({len(_e)} chars): {_e[:60]}")

# ---- size: the 10 KiB limit, and thousands of selectors ---------------------------------------------


def _or_chain(target: int) -> str:
    parts, size, i = [], 0, 0
    while True:
        p = f"device.driver == 'd{i:05d}.example.com'"
        if size + len(p) + 4 > target:
            break
        parts.append(p)
        size += len(p) + 4
        i += 1
    e = " || ".join(parts)
    return e + " " * (target - len(e))


cel_case(
    "cel", "expr-10240-bytes", _or_chain(10240), OK, (0, 1), CEL_FRONT, note="a selector of exactly 10 KiB"
)
cel_case(
    "cel", "expr-10241-bytes", _or_chain(10241), REJECT, 1, CEL_FRONT, note="a selector one byte over 10 KiB"
)
cel_case("cel", "expr-1mib", _or_chain(1 << 20), REJECT, 1, CEL_FRONT, note="a 1 MiB selector")


def _many_selectors(d: Path, n: int, size: int, requests: int = 1) -> list[str]:
    objs, cls = small_cluster(d)
    u = uid(d)
    reqs = []
    for r in range(requests):
        exprs = [_or_chain(size).replace("d0", f"r{r}s{i}x", 1).rstrip() for i in range(n)]
        reqs.append(request(f"r{r}", cls, exprs))
    objs.append(claim(f"{u}-claim", reqs))
    return [write(d, "case.yaml", objs, flow=True)]


register(
    _Case(
        "cel.selectors-4096-in-one-request",
        "cel",
        CEL_FRONT,
        lambda d: _many_selectors(d, 4096, 60),
        (validate(exit=1, rules=("claim.selectors",)), simulate(exit=1)),
        note="4,096 selectors on one request (upstream allows 32): rejected, each not compiled at leisure",
    )
)
register(
    _Case(
        "cel.selectors-32x32-distinct-2k",
        "cel",
        CEL_EVAL,
        lambda d: _many_selectors(d, 32, 2048, requests=32),
        # acceptance is validation's; whether the claim fits is the simulate run's question
        (validate("--no-feasibility", exit=0), simulate(exit=(0, 1, 3))),
        note="32 requests × 32 distinct 2 KiB selectors (2 MiB claim): compile caches bounded by bytes",
    )
)
