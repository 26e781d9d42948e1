"""SelectorEvaluator: library functions, missing key/domain semantics, errors and caches."""

from __future__ import annotations

import pytest
import yaml

from webhook.cel.runtime import CelRuntimeError, SelectorEvaluator

DRIVER = "gpu.example.com"
SLICE = yaml.safe_load(
    """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: A100}
      numa: {int: 1}
      healthy: {bool: true}
      driverVersion: {version: 1.10.0}
      uuid: {string: GPU-0a1b}
      pci.example.com/root: {string: "0000:00:01.0"}
      ids: {ints: [1, 2, 3]}
      tags: {strings: [fast, big]}
      versions: {versions: [1.0.0, 2.0.0-rc.1]}
    capacity:
      memory: {value: 40Gi}
      cores: {value: 108}
"""
)
DEVICE = SLICE["spec"]["devices"][0]
LISTLESS = {k: v for k, v in DEVICE.items() if k != "attributes"} | {
    "attributes": {k: v for k, v in DEVICE["attributes"].items() if k not in ("ids", "tags", "versions")}
}
A = "device.attributes['gpu.example.com']"
C = "device.capacity['gpu.example.com']"


def ev(lists: bool = True, consumable: bool = True) -> SelectorEvaluator:
    return SelectorEvaluator(list_attributes=lists, consumable_capacity=consumable)


def run(expr: str, device: dict = DEVICE, lists: bool = True, consumable: bool = True) -> bool:
    return ev(lists, consumable).matches(expr, "k", DRIVER, device)


def error(expr: str, device: dict = DEVICE, lists: bool = True, consumable: bool = True) -> CelRuntimeError:
    with pytest.raises(CelRuntimeError) as info:
        run(expr, device, lists, consumable)
    return info.value


TRUE = [
    # device fields, domains, optionals, bind, strings extension
    f"device.driver == 'gpu.example.com' && {A}.model == 'A100' && {A}.numa == 1 && {A}.healthy",
    "device.attributes['pci.example.com'].root.startsWith('0000:')",
    f"{A}.?missing.orValue(7) == 7 && !has({A}.missing) && has({A}.model)",
    f"cel.bind(g, {A}, g.model == 'A100' && g.numa == 1)",
    f"{A}.uuid.lowerAscii() == 'gpu-0a1b' && {A}.uuid.upperAscii() == 'GPU-0A1B'",
    f"{A}.uuid.indexOf('-') == 3 && {A}.uuid.lastIndexOf('a') == 5 && {A}.uuid.charAt(0) == 'G'",
    f"{A}.uuid.substring(4) == '0a1b' && {A}.uuid.replace('-', '_') == 'GPU_0a1b'",
    "'a,b'.split(',') == ['a', 'b'] && ['a', 'b'].join('-') == 'a-b' && ' x '.trim() == 'x'",
    "strings.quote('a\"b') == '\"a\\\\\"b\"' && '%s-%d'.format(['a', 1]) == 'a-1'",
    f"{A}.model.matches('^A1[0-9]+$') && {A}.model.find('[0-9]+') == '100'",
    "'a1b22'.findAll('[0-9]+') == ['1', '22'] && 'a1b22'.findAll('[0-9]+', 1) == ['1']",
    # semver
    f"{A}.driverVersion.isGreaterThan(semver('1.2.0'))",  # numeric, not string order
    f"{A}.driverVersion.compareTo(semver('1.10.0')) == 0 && {A}.driverVersion == semver('1.10.0+build')",
    f"{A}.driverVersion.isLessThan(semver('1.10.1')) && {A}.driverVersion.major() == 1",
    f"{A}.driverVersion.minor() == 10 && {A}.driverVersion.patch() == 0",
    "semver('v1.2', true) == semver('1.2.0') && isSemver('v01.02.03', true) && !isSemver('v1.2.3')",
    "semver('1.2.3-rc.2').compareTo(semver('1.2.3-rc.10')) == -1 && !isSemver('1.2-rc.1', true)",
    # quantity
    f"{C}.memory == quantity('40960Mi') && {C}.memory.compareTo(quantity('40Gi')) == 0",
    f"{C}.memory.isGreaterThan(quantity('32Gi')) && {C}.cores.isLessThan(quantity('200'))",
    f"{C}.cores.add(quantity('2')) == quantity('110') && {C}.cores.sub(8) == quantity('100')",
    f"{C}.cores.asInteger() == 108 && {C}.cores.isInteger() && sign({C}.cores) == 1",
    "quantity('1.5').asApproximateFloat() == 1.5 && !quantity('1.5').isInteger()",
    "isQuantity('1Gi') && !isQuantity('1GB')",
    # lists, sets
    "[1, 2, 3].isSorted() && [3, 1].sum() == 4 && [3, 1].min() == 1 && [3, 1].max() == 3",
    "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && [1].indexOf(5) == -1",
    "sets.contains([1, 2, 3], [2]) && sets.equivalent([1, 2], [2, 1]) && sets.intersects([1], [1, 5])",
    # list attributes and includes()
    f"{A}.ids.includes(2) && {A}.tags.includes('big') && {A}.model.includes('A100')",
    f"{A}.versions.includes(semver('2.0.0-rc.1')) && {A}.ids.indexOf(3) == 2 && {A}.tags.size() == 2",
    f"{A}.ids.exists(i, i > 2) && {A}.ids.all(i, i > 0)",
    # the Python strings environment (used when the list indexOf/lastIndexOf appear)
    "[1].indexOf(1) == 0 && 'GPU-0a1b'.indexOf('-') == 3 && 'abcb'.lastIndexOf('b') == 3",
    "[1].lastIndexOf(1) == 0 && 'abc'.charAt(3) == '' && 'ABc'.lowerAscii() == 'abc' && 'a'.upperAscii() == 'A'",
    "[1].indexOf(1) == 0 && 'aaa'.replace('a', 'b', 2) == 'bba' && 'a,b,c'.split(',', 2) == ['a', 'b,c']",
    "[1].indexOf(1) == 0 && 'abc'.split('') == ['a', 'b', 'c'] && 'a,b'.split(',', 0) == []",
    "[1].indexOf(1) == 0 && 'abc'.substring(1, 2) == 'b' && ' x '.trim() == 'x' && ['a', 'b'].join() == 'ab'",
    "[1].indexOf(1) == 0 && strings.quote('a\\nb') == '\"a\\\\nb\"' && 'abcb'.lastIndexOf('b', 2) == 1",
    # IP and CIDR
    "ip('10.0.0.1').family() == 4 && isIP('::1') && !isIP('10.0.0.256') && ip('::1').isLoopback()",
    "ip('10.1.2.3').isGlobalUnicast() && ip('169.254.0.1').isLinkLocalUnicast() && ip('0.0.0.0').isUnspecified()",
    "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast() && !isIP('::ffff:1.2.3.4')",
    "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1') && ip('::1') == ip('0:0:0:0:0:0:0:1')",
    "cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsIP(ip('10.0.0.1'))",
    "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')",
    "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')",
    "cidr('10.0.0.0/8').prefixLength() == 8 && isCIDR('::/0') && !isCIDR('10.0.0.0')",
    # consumable capacity field
    "device.allowMultipleAllocations == false",
]


@pytest.mark.parametrize("expr", TRUE)
def test_library_functions(expr: str) -> None:
    assert run(expr) is True


@pytest.mark.parametrize(
    "expr",
    [
        f"{A}.model == 'H100'",
        f"{A}.driverVersion.isLessThan(semver('1.2.0'))",
        f"{C}.memory.isLessThan(quantity('40Gi'))",
        f"{A}.ids.includes(7)",
        "'x' in device.attributes['unknown.example.com']",
    ],
)
def test_false_results(expr: str) -> None:
    assert run(expr) is False


def test_unknown_domain_is_an_empty_map_but_missing_key_is_an_error() -> None:
    assert run("device.attributes['other.example.com'].size() == 0")
    assert run("!has(device.attributes['other.example.com'].x)")
    assert run("device.capacity['other.example.com'].?mem.orValue(quantity('0')) == quantity('0')")
    e = error(f"{A}.missing == 1")
    assert (
        e.detail.startswith("no such key: missing. consider using CEL optional chaining")
        and e.phase == "runtime"
    )
    assert "no such key: x" in str(error("device.attributes['other.example.com'].x == 1"))


def test_whole_map_expressions_see_only_real_domains() -> None:
    e = ev()
    e.matches("device.attributes['seeded.example.com'].size() == 0", "k", DRIVER, DEVICE)  # seeds a domain
    assert e.matches("size(device.attributes) == 2", "k", DRIVER, DEVICE)
    assert not e.matches("'seeded.example.com' in device.attributes", "k", DRIVER, DEVICE)
    assert e.matches("device.attributes.all(d, d != 'seeded.example.com')", "k", DRIVER, DEVICE)


def test_domain_named_later_extends_existing_activations() -> None:
    e = ev()
    assert e.matches(f"{A}.numa == 1", "k", DRIVER, DEVICE)
    assert e.matches("device.attributes['late.example.com'].size() == 0", "k", DRIVER, DEVICE)
    assert e.matches("device.capacity['late.example.com'].size() == 0", "k", DRIVER, DEVICE)


@pytest.mark.parametrize(
    ("expr", "detail"),
    [
        (f"{A}.numa", "CEL result of type int could not be converted to bool"),
        (f"{A}.model", "CEL result of type string could not be converted to bool"),
        (f"{A}.driverVersion < {A}.driverVersion", "no such overload"),
        (f"{A}.driverVersion + {A}.driverVersion", "no such overload"),
        (f"{A}.driverVersion.startsWith('1')", "no such overload"),
        (f"{A}.driverVersion.compareTo({C}.memory) == 0", "no such overload"),
        (f"{A}.model.compareTo(semver('1.0.0')) == 0", "no such overload"),
        ("semver('1.2') == semver('1.2.0')", "No Major.Minor.Patch elements found"),
        ("quantity('1GB') == quantity('1G')", "quantities must match the regular expression"),
        ("[1].min() == 1 && [].max() == 1", "empty list"),
        ("1 / (device.attributes['gpu.example.com'].numa - 1) == 1", "division by zero"),
        ("'abc'.substring(5) == ''", "index out of range: 5"),
        ("[1].indexOf(1) == 0 && 'abc'.substring(5) == ''", "index out of range: 5"),  # Python strings
        ("ip('fe80::1%eth0').family() == 6", "zone"),
    ],
)
def test_runtime_errors(expr: str, detail: str) -> None:
    e = error(expr)
    assert e.phase == "runtime" and detail in e.detail, e.detail
    assert expr[:40] in str(e) and str(e).startswith("CEL runtime error: ")


def test_ordering_on_typed_semver_or_quantity_fails_at_compile_time() -> None:
    e = error("quantity('1') < quantity('2')")
    assert e.phase == "compile"
    assert (
        "found no matching overload for '_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'"
        in e.detail
    )
    assert "applied to '(kubernetes.Quantity, int)'" in error(f"{C}.memory > 5").detail
    assert "'(dyn, kubernetes.Semver)'" in error(f"{A}.driverVersion >= semver('1.0.0')").detail


def test_compile_errors_are_raised_for_every_call() -> None:
    e = ev()
    for _ in range(2):
        with pytest.raises(CelRuntimeError, match="undeclared reference to 'foo'") as info:
            e.matches("foo == 1", "k", DRIVER, DEVICE)
        assert info.value.phase == "compile"


def test_stored_expression_over_the_estimated_cost_still_runs() -> None:
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    expr = f"{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, {ten}.all(e, {ten}.all(f, f > 0))))))"
    e = error(expr)  # 10^6 iterations: k8s's runtime cost limit, here the engine's iteration cap
    assert e.detail == "operation cancelled: actual cost limit exceeded"
    assert run(f"{ten}.all(a, {ten}.all(b, {ten}.all(c, c > 0)))")


def test_gated_fields_and_list_attributes() -> None:
    # The scheduler compiles stored expressions: gated fields and functions exist whatever the gates
    # say (upstream StoredExpressions, TestCELFeatureCombinations); only new objects are checked
    # against the gates (compile_selector).
    assert run("device.allowMultipleAllocations", consumable=False) is False
    # without DRAListTypeAttributes list values are still converted: an expression that does not use
    # `includes()` evaluates normally (upstream allocator tests list-attributes-disabled-*)
    assert run(f"{A}.model == 'A100'", lists=False)
    assert run(f"{A}.model == 'A100'", device=LISTLESS, lists=False)
    assert run(f"{A}.model.includes('A100')", device=LISTLESS, lists=False)
    long_list = {"name": "d", "attributes": {"ids": {"ints": list(range(49))}}}
    assert run(f"{A}.ids.includes(1)", device=long_list)  # found before the 49th value
    assert run(f"{A}.ids.size() == 49", device=long_list)
    assert "longer than 48 values" in error(f"{A}.ids.includes(99)", device=long_list).detail


def test_result_cache_and_forget() -> None:
    e = ev()
    expr = f"{A}.model == 'A100'"
    assert e.matches(expr, ("s", 1, "gpu-0"), DRIVER, DEVICE)
    assert e.evaluations == 1
    assert e.matches(expr, ("s", 1, "gpu-0"), DRIVER, {"name": "ignored, cached"})
    assert e.evaluations == 1
    h100 = {"name": "gpu-0", "attributes": {"model": {"string": "H100"}}}
    assert not e.matches(expr, ("s", 2, "gpu-0"), DRIVER, h100)  # new generation: re-evaluated
    assert e.evaluations == 2
    e.forget([("s", 1, "gpu-0")])
    assert not e.matches(expr, ("s", 1, "gpu-0"), DRIVER, h100)  # dropped: rebuilt from the new content
    assert e.evaluations == 2  # ... but the projection (model = H100) was already known


def test_projection_shares_evaluations_between_identical_devices() -> None:
    e = ev()
    expr = f"{A}.model == 'A100' && {C}.memory.isGreaterThan(quantity('32Gi'))"
    for i in range(50):
        dev = {
            "name": f"gpu-{i}",
            "attributes": {"model": {"string": "A100"}, "uuid": {"string": f"GPU-{i}"}},
        }
        dev["capacity"] = {"memory": {"value": "40Gi" if i % 2 else "40960Mi"}}
        assert e.matches(expr, i, DRIVER, dev)
    assert e.evaluations == 1  # uuid is not read; 40Gi == 40960Mi
    assert e.matches(
        f"{A}.uuid == 'GPU-3'", 3, DRIVER, {"name": "x", "attributes": {"uuid": {"string": "GPU-3"}}}
    )
    assert e.evaluations == 2
    # types are part of the projection: int 1 and bool true differ
    assert e.matches(f"{A}.v == 1", "int", DRIVER, {"name": "a", "attributes": {"v": {"int": 1}}})
    assert not e.matches(f"{A}.v == 1", "bool", DRIVER, {"name": "b", "attributes": {"v": {"bool": True}}})


def test_errors_are_cached_and_shared_too() -> None:
    e = ev()
    for key in ("a", "b", "a"):
        with pytest.raises(CelRuntimeError, match="no such key: missing"):
            e.matches(f"{A}.missing", key, DRIVER, DEVICE)
    assert e.evaluations == 1


def test_bare_ids_belong_to_the_driver_domain() -> None:
    dev = {"name": "d", "attributes": {"model": {"string": "X"}, "other.example.com/model": {"string": "Y"}}}
    assert run(f"{A}.model == 'X' && device.attributes['other.example.com'].model == 'Y'", device=dev)


def test_actual_cost_is_exposed_for_the_allocator_budget() -> None:
    e = ev()
    expr = f"{A}.ids.all(i, i > 0)"  # 3 elements: range 4 + 3 x 5 + result 1
    assert e.matches(expr, "k", DRIVER, DEVICE)
    assert e.last_cost == 20 and e.cost_used == 20
    assert e.matches(expr, "k", DRIVER, DEVICE)  # cached: nothing spent
    assert e.last_cost == 0 and e.cost_used == 20
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    heavy = f"{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, {ten}.all(f, {ten}.all(g, g > 0))))))"
    with pytest.raises(CelRuntimeError, match="actual cost limit exceeded"):
        e.matches(heavy, "k", DRIVER, DEVICE)
    assert 1_000_000 < e.last_cost < 1_000_100 and e.cost_used == 20 + e.last_cost


@pytest.mark.parametrize(
    "device",
    [
        {"name": "d", "attributes": {1: {"int": 1}}},
        {"name": "d", "attributes": {"model": ["x"]}},
        {"name": "d", "attributes": {"model": {"int": 2**70}}},
        {"name": "d", "attributes": {"model": {"version": "1.0"}}},
        {"name": "d", "capacity": {"memory": {"value": "1GB"}}},
        {"name": "d", "capacity": {"memory": [1]}},
        {"name": "d", "attributes": {"model": {}}},
    ],
)
def test_device_values_upstream_refuses_fail_every_selector(device: dict) -> None:
    # upstream converts every value before evaluating: one bad value is an error of the claim
    e = error("true", device=device)
    assert e.phase == "runtime" and e.detail
