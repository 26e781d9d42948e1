"""The hostile cases' own builders, on top of the suite's (tests/builders.py, re-exported here): names
made unique per case (from the case directory's name) so that many cases can share one `validate` run
without meeting in the cross-object rules, devices with many attributes, small clusters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests import builders
from tests.builders import (  # noqa: F401 (the corpus's modules take them from here)
    DRIVER,
    V1,
    claim,
    dump_flow,
    dump_yaml,
    node,
    pod,
    request,
    resource_slice,
    write,
    write_json_list,
)


def uid(d: Path) -> str:
    """A DNS-label-safe name unique to the case directory."""
    return d.name.replace(".", "-").replace("_", "-").lower()[-50:].strip("-")


def device(name: str, i: int = 0, *, attrs: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    dev: dict[str, Any] = {
        "name": name,
        "attributes": attrs
        if attrs is not None
        else {
            "model": {"string": "X100"},
            "index": {"int": i},
            "ver": {"version": "1.2.3"},
            "ok": {"bool": True},
            "resource.kubernetes.io/pcieRoot": {"string": f"pci{i % 2}"},
        },
        "capacity": {"memory": {"value": "80Gi"}},
    }
    dev.update(extra)
    return dev


def device_class(name: str, expr: str | None = None, **spec: Any) -> dict[str, Any]:
    """The corpus's classes select the driver's devices unless `expr` says otherwise."""
    return builders.device_class(name, expr or f"device.driver == '{DRIVER}'", **spec)


def own_class(u: str) -> dict[str, Any]:
    """DeviceClass `<u>-gpu` selecting only the devices whose `case` attribute is `u` (the case's own)."""
    return device_class(
        f"{u}-gpu", f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].case == '{u}'"
    )


def small_cluster(d: Path, devices: int = 4, cls_expr: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """A node, one slice of `devices` GPUs and a DeviceClass, named for the case; returns the objects and
    the class name."""
    u = uid(d)
    devs = [device(f"gpu-{i}", i) for i in range(devices)]
    for dev in devs:  # the class picks this case's devices only, so cases can share a `simulate` run
        dev["attributes"]["case"] = {"string": u}
    objs = [
        node(f"{u}-node"),
        resource_slice(f"{u}-slice", devs, pool=f"{u}-pool", node=f"{u}-node"),
        device_class(f"{u}-gpu", cls_expr) if cls_expr else own_class(u),
    ]
    return objs, f"{u}-gpu"


def selector_case(d: Path, *exprs: str, count: int | None = None, devices: int = 4) -> list[str]:
    """A small cluster plus one claim whose only request carries `exprs` as selectors (one file)."""
    objs, cls = small_cluster(d, devices)
    objs.append(claim(f"{uid(d)}-claim", [request("r", cls, exprs, count=count)]))
    return [write(d, "case.yaml", objs)]


def many_devices(
    d: Path, n: int, per_slice: int = 128, attrs: Any = None
) -> tuple[list[dict[str, Any]], str]:
    """A node with `n` devices in one pool (slices of `per_slice`), and a DeviceClass for them."""
    u = uid(d)
    slices = -(-n // per_slice)
    objs: list[dict[str, Any]] = [node(f"{u}-node"), device_class(f"{u}-gpu")]
    for s in range(slices):
        devs = []
        for i in range(s * per_slice, min(n, (s + 1) * per_slice)):
            a = attrs(i) if attrs else None
            devs.append(device(f"gpu-{i}", i, attrs=a))
        objs.append(resource_slice(f"{u}-s{s}", devs, pool=f"{u}-pool", node=f"{u}-node", count=slices))
    return objs, f"{u}-gpu"
