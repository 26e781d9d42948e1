"""Cross-slice pool rules: counter-set references, completeness, generations, duplicates; pools are keyed
by (driver, pool name), and a partial pool turns unresolvable references into `pool.unchecked`."""

from __future__ import annotations

import pickle

import yaml

from webhook.config.context import Context
from webhook.rules import pools
from webhook.state.inventory import Inventory, SliceRec, extract_record

COUNTERS = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: counters}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 2, resourceSliceCount: 2}
  nodeName: node-1
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: 8Gi}, sms: {value: 100}}
"""

DEVICES = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: devices}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 2, resourceSliceCount: 2}
  nodeName: node-1
  devices:
  - name: half
    consumesCounters:
    - counterSet: gpu-0
      counters: {memory: {value: 4Gi}}
  - name: whole
    consumesCounters:
    - counterSet: gpu-0
      counters: {memory: {value: 8Gi}, sms: {value: 100}}
"""


def inventory(*texts: str) -> Inventory:
    docs = [d for t in texts for d in yaml.safe_load_all(t) if d]
    return Inventory([extract_record(d, i) for i, d in enumerate(docs)])


def run(fn, inv: Inventory) -> list[tuple[int, str, str]]:
    return [(f.index, str(f.field), f.message) for f in fn(inv, Context())]


ALL = (
    pools.counter_set_ref,
    pools.unchecked,
    pools.counter_exceeds_set,
    pools.completeness,
    pools.generation,
    pools.duplicate_device,
    pools.duplicate_counter_set,
)


def everything(inv: Inventory) -> dict[str, list[tuple[int, str, str]]]:
    return {fn.rule.id: run(fn, inv) for fn in ALL if run(fn, inv)}  # type: ignore[attr-defined]


def test_rule_ids_and_severities() -> None:
    got = {fn.rule.id: fn.rule.severity.value for fn in ALL}  # type: ignore[attr-defined]
    assert got == {
        "pool.counter-set-ref": "error",
        "pool.unchecked": "info",
        "pool.counter-exceeds-set": "warning",
        "pool.completeness": "warning",
        "pool.generation": "warning",
        "pool.duplicate-device": "error",
        "pool.duplicate-counter-set": "error",
    }


def test_valid_complete_pool_has_no_findings() -> None:
    assert everything(inventory(COUNTERS, "---\n" + DEVICES)) == {}


def test_records_are_compact_and_picklable() -> None:
    rec = extract_record(yaml.safe_load(DEVICES), 7)
    assert isinstance(rec, SliceRec)
    assert not rec.detail  # validate's records: pool facts only, no per-device detail for the allocator
    assert (rec.driver, rec.pool, rec.generation, rec.slice_count, rec.placement) == (
        "gpu.example.com",
        "node-1",
        2,
        2,
        "node-1",
    )
    use = rec.devices[1].consumes[0]
    assert use.texts == (("memory", "8Gi"), ("sms", "100"))  # as written, for messages
    assert use.counters == (("memory", 8 * 2**30 * 10**9), ("sms", 100 * 10**9))  # exact, in nano-units
    back = pickle.loads(pickle.dumps(rec))
    assert [(d.name, d.id, d.consumes) for d in back.devices] == [
        (d.name, d.id, d.consumes) for d in rec.devices
    ]
    assert (back.name, back.pool_id, back.counter_sets, back.set_texts) == (
        rec.name,
        rec.pool_id,
        rec.counter_sets,
        rec.set_texts,
    )
    assert extract_record({"kind": "ConfigMap"}, 0) is None


def test_unknown_counter_set_in_complete_pool() -> None:
    devices = DEVICES.replace(
        "counterSet: gpu-0\n      counters: {memory: {value: 4Gi}}",
        "counterSet: gpu-1\n      counters: {memory: {value: 4Gi}}",
    )
    got = run(pools.counter_set_ref, inventory(COUNTERS, devices))
    assert [(i, p) for i, p, _ in got] == [(1, "spec.devices[0].consumesCounters[0].counterSet")]
    assert got[0][2].startswith(
        'Invalid value: "gpu-1": no slice of pool "node-1" of driver gpu.example.com at generation 2'
    )
    assert "invalid" in got[0][2]
    assert run(pools.unchecked, inventory(COUNTERS, devices)) == []


def test_unknown_counter_name_is_an_error_even_in_a_partial_pool() -> None:
    devices = DEVICES.replace("counters: {memory: {value: 4Gi}}", "counters: {mem: {value: 4Gi}}")
    three = COUNTERS.replace("resourceSliceCount: 2", "resourceSliceCount: 3")
    devices3 = devices.replace("resourceSliceCount: 2", "resourceSliceCount: 3")
    got = run(pools.counter_set_ref, inventory(three, devices3))
    assert [(i, p) for i, p, _ in got] == [(1, "spec.devices[0].consumesCounters[0].counters[mem]")]
    assert "has no such counter (it defines: memory, sms)" in got[0][2]


def test_partial_pool_reference_is_unchecked_not_an_error() -> None:
    only_devices = inventory(DEVICES)  # the counter-set slice is missing from the input
    assert run(pools.counter_set_ref, only_devices) == []
    got = run(pools.unchecked, only_devices)
    assert [(i, p) for i, p, _ in got] == [
        (0, "spec.devices[0].consumesCounters[0].counterSet"),
        (0, "spec.devices[1].consumesCounters[0].counterSet"),
    ]
    assert "the input holds 1 of 2 slices at generation 2" in got[0][2]
    completeness = run(pools.completeness, only_devices)
    assert [(i, p) for i, p, _ in completeness] == [(0, "spec.pool.resourceSliceCount")]
    assert "holds 1 of 2 slices" in completeness[0][2]


def test_counter_set_only_in_older_generation() -> None:
    old_counters = COUNTERS.replace("generation: 2", "generation: 1")
    one = DEVICES.replace("resourceSliceCount: 2", "resourceSliceCount: 1")
    found = everything(inventory(old_counters, one))
    errors = found["pool.counter-set-ref"]
    assert {p for _, p, _ in errors} == {
        "spec.devices[0].consumesCounters[0].counterSet",
        "spec.devices[1].consumesCounters[0].counterSet",
    }
    assert 'only slice "counters" of the older generation 1 has it' in errors[0][2]
    assert found["pool.generation"] == [
        (0, "spec.pool.generation", found["pool.generation"][0][2]),
    ]
    assert "the scheduler ignores this slice" in found["pool.generation"][0][2]


def test_two_drivers_sharing_a_pool_name_do_not_mix() -> None:
    other = DEVICES.replace("driver: gpu.example.com", "driver: nic.example.com").replace(
        "resourceSliceCount: 2", "resourceSliceCount: 1"
    )
    found = everything(inventory(COUNTERS, DEVICES, other))
    # nic.example.com's pool "node-1" has no counter set gpu-0 even though gpu.example.com's has
    assert [(i, p) for i, p, _ in found["pool.counter-set-ref"]] == [
        (2, "spec.devices[0].consumesCounters[0].counterSet"),
        (2, "spec.devices[1].consumesCounters[0].counterSet"),
    ]
    assert "driver nic.example.com" in found["pool.counter-set-ref"][0][2]
    assert "pool.duplicate-device" not in found  # same device names, different drivers


def test_single_device_exceeding_its_set() -> None:
    devices = DEVICES.replace("counters: {memory: {value: 4Gi}}", "counters: {memory: {value: 9Gi}}")
    got = run(pools.counter_exceeds_set, inventory(COUNTERS, devices))
    assert [(i, p) for i, p, _ in got] == [(1, "spec.devices[0].consumesCounters[0].counters[memory]")]
    assert got[0][2] == (
        'device "half" consumes 9Gi of counter "memory" but counter set "gpu-0" of pool "node-1" of driver '
        "gpu.example.com only has 8Gi: this device can never be allocated"
    )
    # the sum over devices may exceed the set (that is how exclusivity is modelled): 4Gi + 8Gi > 8Gi is fine
    assert run(pools.counter_exceeds_set, inventory(COUNTERS, DEVICES)) == []


def test_more_slices_than_resource_slice_count() -> None:
    extra = (
        DEVICES.replace("name: devices", "name: devices-2")
        .replace("name: half", "name: h2")
        .replace("name: whole", "name: w2")
    )
    got = run(pools.completeness, inventory(COUNTERS, DEVICES, extra))
    assert [(i, p) for i, p, _ in got] == [(0, "spec.pool.resourceSliceCount")]
    assert "has 3 slices at generation 2 but resourceSliceCount is 2" in got[0][2]


def test_resource_slice_count_disagreement() -> None:
    devices = DEVICES.replace("resourceSliceCount: 2", "resourceSliceCount: 3")
    extra = COUNTERS.replace("name: counters", "name: more").replace("name: gpu-0", "name: gpu-9")
    got = run(pools.generation, inventory(COUNTERS, devices, extra))
    assert [(i, p) for i, p, _ in got] == [(1, "spec.pool.resourceSliceCount")]
    assert 'resourceSliceCount 3 differs from 2 in slice "counters"' in got[0][2]


def test_duplicate_device_across_slices() -> None:
    second = DEVICES.replace("name: devices", "name: devices-b").replace("name: whole", "name: other")
    counters = COUNTERS.replace("resourceSliceCount: 2", "resourceSliceCount: 3")
    inv = inventory(
        counters,
        DEVICES.replace("resourceSliceCount: 2", "resourceSliceCount: 3"),
        second.replace("resourceSliceCount: 2", "resourceSliceCount: 3"),
    )
    got = run(pools.duplicate_device, inv)
    assert [(i, p) for i, p, _ in got] == [(2, "spec.devices[0].name")]
    assert got[0][2].startswith('Duplicate value: "half": slice "devices" of pool "node-1"')
    # the same slice listed twice in the input is not two slices
    assert run(pools.duplicate_device, inventory(COUNTERS, DEVICES, DEVICES)) == []
    # within one slice it is the API server's error, not this rule's
    one = DEVICES.replace("name: whole", "name: half")
    assert run(pools.duplicate_device, inventory(COUNTERS, one)) == []


def test_duplicate_counter_set_across_slices() -> None:
    again = COUNTERS.replace("name: counters", "name: counters-b")
    three = [t.replace("resourceSliceCount: 2", "resourceSliceCount: 3") for t in (COUNTERS, DEVICES, again)]
    got = run(pools.duplicate_counter_set, inventory(*three))
    assert [(i, p) for i, p, _ in got] == [(2, "spec.sharedCounters[0].name")]
    assert 'Duplicate value: "gpu-0": slice "counters"' in got[0][2]


def test_multi_document_yaml_and_malformed_slices() -> None:
    text = (
        COUNTERS + "---\n" + DEVICES + "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec: {}\n"
    )
    inv = inventory(text)
    assert inv.record(2) is None  # no driver/pool: nothing to check across slices
    assert everything(inv) == {}
