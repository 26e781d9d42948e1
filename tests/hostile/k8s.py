"""Builders for the DRA objects the hostile cases are made of, and writers for them. Names are made
unique per case (from the case directory's name) so that many cases can share one `validate` run
without meeting in the cross-object rules."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

DRIVER = "gpu.example.com"
V1 = "resource.k8s.io/v1"


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


def resource_slice(
    name: str,
    devices: Sequence[dict[str, Any]],
    *,
    pool: str,
    node: str,
    count: int = 1,
    driver: str = DRIVER,
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "driver": driver,
        "nodeName": node,
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
        "devices": list(devices),
    }
    s.update(spec)
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": s}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def device_class(name: str, expr: str | None = None, **spec: Any) -> dict[str, Any]:
    expr = expr or f"device.driver == '{DRIVER}'"
    s: dict[str, Any] = {"selectors": [{"cel": {"expression": expr}}]}
    s.update(spec)
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": name}, "spec": s}


def request(
    name: str, cls: str, selectors: Sequence[str] = (), count: int | None = None, **exactly: Any
) -> dict[str, Any]:
    ex: dict[str, Any] = {"deviceClassName": cls}
    if selectors:
        ex["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if count is not None:
        ex["count"] = count
    ex.update(exactly)
    return {"name": name, "exactly": ex}


def claim(
    name: str,
    requests: Sequence[dict[str, Any]],
    constraints: Sequence[dict[str, Any]] = (),
    ns: str = "default",
    kind: str = "ResourceClaim",
) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    spec: dict[str, Any] = {"devices": devices}
    if kind == "ResourceClaimTemplate":
        spec = {"spec": spec}
    return {"apiVersion": V1, "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec}


def pod(name: str, claims: Iterable[str], ns: str = "default", template: bool = False) -> dict[str, Any]:
    key = "resourceClaimTemplateName" if template else "resourceClaimName"
    refs = [{"name": f"c{i}", key: c} for i, c in enumerate(claims)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "resourceClaims": refs,
            "containers": [
                {
                    "name": "app",
                    "image": "registry.example.com/app:1",
                    "resources": {"claims": [{"name": r["name"]} for r in refs]},
                }
            ],
        },
    }


# ---- writers ---------------------------------------------------------------------------------------


_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(objs: Iterable[Any]) -> str:
    return yaml.dump_all(list(objs), Dumper=_Dumper, sort_keys=False, width=1_000_000)


def dump_flow(objs: Iterable[Any]) -> str:
    """One JSON (= flow YAML) document per object, `---` between: fast to write and to read back."""
    return "".join(f"---\n{json.dumps(o, separators=(',', ':'))}\n" for o in objs)


def write(d: Path, name: str, content: str | bytes | Iterable[Any], flow: bool = False) -> str:
    p = d / name
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif isinstance(content, str):
        p.write_text(content, encoding="utf-8", errors="surrogatepass")
    else:
        p.write_text(dump_flow(content) if flow else dump_yaml(content), encoding="utf-8")
    return str(p)


def write_json_list(d: Path, name: str, objs: Iterable[Any]) -> str:
    """Objects as one JSON `v1 List` document: numbers and strings exactly as written, no YAML resolution."""
    return write(d, name, json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))


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
