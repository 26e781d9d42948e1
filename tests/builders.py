"""Builders for the Kubernetes objects tests are made of: plain dicts, as `yaml.safe_load` gives them.

The suite's one fixture style: a test builds its objects with these functions (or a local helper that
returns a dict literal, for a shape only it needs), and a test that needs a file writes them with
`dump_yaml` / `write` (`yaml.safe_dump_all`). A test whose subject is the text itself (a line number, a YAML
trick, an unrendered Helm template) keeps a real YAML file under tests/fixtures/, or builds the text by plain
concatenation or a `string.Template`: never YAML or CEL assembled in an f-string with `{{` escapes; and it
reads a finding's line from the text it wrote (`line_of`).

`tests/hostile/k8s.py` adds the hostile corpus's own composites (names unique per case, devices with many
attributes, small clusters) on top of these."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

DRIVER = "gpu.example.com"
V1 = "resource.k8s.io/v1"


def obj(kind: str, name: str, ns: str | None = None, api: str = V1, **fields: Any) -> dict[str, Any]:
    """Any object: apiVersion, kind, metadata (name, namespace if given), then `fields` (spec, status...)."""
    meta: dict[str, Any] = {"name": name}
    if ns is not None:
        meta["namespace"] = ns
    return {"apiVersion": api, "kind": kind, "metadata": meta, **fields}


def node(name: str, **labels: str) -> dict[str, Any]:
    n = obj("Node", name, api="v1")
    if labels:
        n["metadata"]["labels"] = labels
    return n


def cel(expression: str) -> dict[str, Any]:
    """One CEL selector."""
    return {"cel": {"expression": expression}}


def device_class(name: str, *selectors: str, **spec: Any) -> dict[str, Any]:
    """A DeviceClass with `selectors` (CEL expressions; none: no `selectors` field) and more spec fields."""
    s: dict[str, Any] = {"selectors": [cel(e) for e in selectors]} if selectors else {}
    s.update(spec)
    return obj("DeviceClass", name, spec=s)


def resource_slice(
    name: str,
    devices: Sequence[dict[str, Any]] | None,
    *,
    pool: str,
    node: str | None,
    count: int = 1,
    generation: int = 1,
    driver: str = DRIVER,
    **spec: Any,
) -> dict[str, Any]:
    """A ResourceSlice of pool `pool` (`count` slices, `generation`); `node` None: no nodeName (give
    allNodes, nodeSelector or perDeviceNodeSelection in `spec`); `devices` None: no devices field."""
    s: dict[str, Any] = {"driver": driver}
    if node is not None:
        s["nodeName"] = node
    s["pool"] = {"name": pool, "generation": generation, "resourceSliceCount": count}
    if devices is not None:
        s["devices"] = list(devices)
    s.update(spec)
    return obj("ResourceSlice", name, spec=s)


def exactly(cls: str, selectors: Sequence[str] = (), count: int | None = None, **more: Any) -> dict[str, Any]:
    """What a request asks for: its class, selectors (CEL expressions), count and more fields."""
    ex: dict[str, Any] = {"deviceClassName": cls}
    if selectors:
        ex["selectors"] = [cel(e) for e in selectors]
    if count is not None:
        ex["count"] = count
    ex.update(more)
    return ex


def request(
    name: str, cls: str, selectors: Sequence[str] = (), count: int | None = None, **more: Any
) -> dict[str, Any]:
    """A request for exactly what `exactly()` describes."""
    return {"name": name, "exactly": exactly(cls, selectors, count, **more)}


def subrequest(
    name: str, cls: str, selectors: Sequence[str] = (), count: int | None = None, **more: Any
) -> dict[str, Any]:
    """One alternative of a firstAvailable request."""
    return {"name": name, **exactly(cls, selectors, count, **more)}


def first_available(name: str, *alternatives: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(alternatives)}


def claim(
    name: str,
    requests: Sequence[dict[str, Any]],
    constraints: Sequence[dict[str, Any]] = (),
    ns: str | None = "default",
    kind: str = "ResourceClaim",
    *,
    config: Sequence[dict[str, Any]] = (),
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ResourceClaim (or, with `kind`, a ResourceClaimTemplate) of `requests`, `constraints` and
    `config` in namespace `ns` (None: none); `status` as given."""
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    if config:
        devices["config"] = list(config)
    spec: dict[str, Any] = {"devices": devices}
    if kind == "ResourceClaimTemplate":
        spec = {"spec": spec}
    o = obj(kind, name, ns, spec=spec)
    if status is not None:
        o["status"] = status
    return o


def claim_template(
    name: str, requests: Sequence[dict[str, Any]], ns: str | None = "default", **kw: Any
) -> dict[str, Any]:
    return claim(name, requests, ns=ns, kind="ResourceClaimTemplate", **kw)


def result(request: str, pool: str, device: str, driver: str = DRIVER, **more: Any) -> dict[str, Any]:
    """One entry of status.allocation.devices.results."""
    return {"request": request, "driver": driver, "pool": pool, "device": device, **more}


def allocated(*results: dict[str, Any], **allocation: Any) -> dict[str, Any]:
    """A claim's status: allocated to `results` (more allocation fields, e.g. nodeSelector, as given)."""
    return {"allocation": {"devices": {"results": list(results)}, **allocation}}


def pod(name: str, claims: Iterable[str], ns: str = "default", template: bool = False) -> dict[str, Any]:
    """A Pod whose one container uses the claims (or, with `template`, claim templates) named in `claims`."""
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
    """The objects as YAML documents (`yaml.safe_dump_all`, keys in the order built, one line each)."""
    return yaml.dump_all(list(objs), Dumper=_Dumper, sort_keys=False, width=1_000_000)


def dump_flow(objs: Iterable[Any]) -> str:
    """One JSON (= flow YAML) document per object, `---` between: fast to write and to read back."""
    return "".join(f"---\n{json.dumps(o, separators=(',', ':'))}\n" for o in objs)


def write(d: Path, name: str, content: str | bytes | Iterable[Any], flow: bool = False) -> str:
    """`content` (text, bytes, or objects: written with dump_yaml or dump_flow) as d/name; its path."""
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


def line_of(text: str, part: str, start: int = 1) -> int:
    """The 1-based number of the first line of `text` that contains `part`, at or after line `start`: a
    test asserts a finding's line from the text it wrote, never from a layout it assumes."""
    for number, line in enumerate(text.splitlines()[start - 1 :], start):
        if part in line:
            return number
    raise ValueError(f"no line contains {part!r}")
