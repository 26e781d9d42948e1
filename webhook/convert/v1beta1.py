"""`resource.k8s.io/v1beta1` ⇄ `resource.k8s.io/v1`, as kube-apiserver converts them (behaviour of
`pkg/apis/resource/v1beta1/conversion.go` and its generated `zz_generated.conversion.go`; no upstream code
copied). The only shapes that differ (every other struct is field-for-field the same):

- Device: v1beta1 keeps everything but `name` under `basic`; v1 has those fields on the device.
  `attributes`, `capacity`, `consumesCounters`, `taints` that are empty become absent (Go copies them
  with `len() > 0` / append loops); a null or absent `basic` gives a device with only its name.
- DeviceRequest: v1beta1 has the ExactDeviceRequest fields (`deviceClassName`, `selectors`,
  `allocationMode`, `count`, `adminAccess`, `tolerations`, `capacity`) directly in the request; v1 has
  them under `exactly`, which is created only when one of them is set in Go's sense
  (`hasAnyMainRequestFieldsSet`: a non-empty string, a non-zero count, a non-nil list, pointer or
  object — so `selectors: []` and `adminAccess: false` count, `count: 0` and `deviceClassName: ""` do
  not). `tolerations: []` becomes absent.
- ResourceSliceSpec: v1beta1 `nodeName` is a string and `allNodes` a bool; v1 has pointers: `""` and
  `false` become absent.

Defaulting differs too (`pkg/apis/resource/v1beta1/defaults.go`): a v1beta1 request's `allocationMode`
and `count` are defaulted only when `deviceClassName` is set; v1 defaults `exactly` always. `defaulted()`
names the requests where that matters.
"""

from __future__ import annotations

import re
from typing import Any

from webhook.model.violation import Finding

MAIN_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)
REQUEST_OWN = ("name", "firstAvailable")
_EMPTY_AS_ABSENT = ("attributes", "capacity", "consumesCounters", "taints")


def _go_zero(key: str, value: Any) -> bool:
    """Whether a main request field holds Go's zero value after JSON decoding (so it is "not set").
    A value of the wrong type is "set": it goes to `exactly`, where validation reports it."""
    if value is None:
        return True
    if key in ("deviceClassName", "allocationMode"):
        return value == ""
    if key == "count":
        return isinstance(value, int) and not isinstance(value, bool) and value == 0
    return False  # selectors, adminAccess, tolerations, capacity: nil only when null/absent


def request_to_v1(req: dict[str, Any]) -> dict[str, Any]:
    """One v1beta1 DeviceRequest as v1 (a new dict; `exactly` takes the place of the first main field).
    Keys unknown to v1beta1 go to `exactly` too, where strict decoding of v1 reports them."""
    main = [k for k in req if k not in REQUEST_OWN]
    is_set = any(k not in MAIN_FIELDS or not _go_zero(k, req[k]) for k in main)
    out: dict[str, Any] = {}
    exactly: dict[str, Any] = {}
    for k, v in req.items():
        if k in REQUEST_OWN:
            out[k] = v
            continue
        if not is_set:
            continue
        if "exactly" not in out:
            out["exactly"] = exactly
        if k == "tolerations" and v == []:
            continue
        if v is not None:
            exactly[k] = v
    return out


def request_from_v1(req: dict[str, Any]) -> dict[str, Any]:
    """One v1 DeviceRequest as v1beta1 (the fields of `exactly` where `exactly` was)."""
    out: dict[str, Any] = {}
    for k, v in req.items():
        if k == "exactly":
            if isinstance(v, dict):
                out.update((kk, vv) for kk, vv in v.items() if kk not in REQUEST_OWN)
            continue
        out[k] = v
    return out


def device_to_v1(dev: dict[str, Any], path: str, findings: list[Finding]) -> dict[str, Any]:
    """One v1beta1 Device as v1. Keys other than `name` and `basic` do not exist in v1beta1: strict
    decoding rejects them (reported in `findings`, left out of the result)."""
    out: dict[str, Any] = {}
    for k, v in dev.items():
        if k == "name":
            out[k] = v
        elif k == "basic":
            if v is None:
                continue
            if not isinstance(v, dict):
                findings.append(
                    Finding(f"{path}.basic", f"Invalid value: {_jsontype(v)}: expected an object")
                )
                continue
            for bk, bv in v.items():
                if bk == "name":  # not a BasicDevice field: strict decoding rejects it
                    findings.append(Finding(f"{path}.basic.name", 'unknown field "name"'))
                    continue
                if bk in _EMPTY_AS_ABSENT and bv in ({}, []):
                    continue
                out[bk] = bv
        else:
            hint = f" (in {_V1BETA1} device fields go under `basic`: {path}.basic.{k})"
            findings.append(Finding(f"{path}.{k}", f'unknown field "{k}"{hint}'))
    return out


def device_from_v1(dev: dict[str, Any]) -> dict[str, Any]:
    """One v1 Device as v1beta1: `name`, and everything else under `basic` (always present, as
    upstream's conversion sets it)."""
    out: dict[str, Any] = {}
    basic: dict[str, Any] = {}
    for k, v in dev.items():
        if k == "name":
            out[k] = v
        else:
            basic[k] = v
    out["basic"] = basic
    return out


_V1BETA1 = "resource.k8s.io/v1beta1"


def to_v1(obj: dict[str, Any]) -> tuple[dict[str, Any], list[Finding]]:
    """A v1beta1 object (already a private copy: changed in place and returned) as v1, with the
    strict-decoding findings of the v1beta1-only shapes (paths in v1beta1 terms)."""
    findings: list[Finding] = []
    kind = obj.get("kind")
    spec = obj.get("spec")
    if kind == "ResourceSlice" and isinstance(spec, dict):
        if "nodeName" in spec and spec["nodeName"] in ("", None):
            del spec["nodeName"]
        if "allNodes" in spec and spec["allNodes"] in (False, None):
            del spec["allNodes"]
        devices = spec.get("devices")
        if isinstance(devices, list):
            spec["devices"] = [
                device_to_v1(d, f"spec.devices[{i}]", findings) if isinstance(d, dict) else d
                for i, d in enumerate(devices)
            ]
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        claim_spec = spec.get("spec") if kind == "ResourceClaimTemplate" and isinstance(spec, dict) else spec
        prefix = "spec.spec" if kind == "ResourceClaimTemplate" else "spec"
        _requests(claim_spec, prefix, findings, to_v1=True)
    return obj, findings


def from_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """A v1 object (a private copy: changed in place and returned) in v1beta1's shapes."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    if kind == "ResourceSlice" and isinstance(spec, dict):
        if spec.get("nodeName") == "":  # a string in v1beta1: "" is omitted
            del spec["nodeName"]
        if spec.get("allNodes") is False:  # a bool in v1beta1: false is omitted
            del spec["allNodes"]
        devices = spec.get("devices")
        if isinstance(devices, list):
            spec["devices"] = [device_from_v1(d) if isinstance(d, dict) else d for d in devices]
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        claim_spec = spec.get("spec") if kind == "ResourceClaimTemplate" and isinstance(spec, dict) else spec
        _requests(claim_spec, "", [], to_v1=False)
    return obj


def _requests(claim_spec: Any, prefix: str, findings: list[Finding], to_v1: bool) -> None:
    if not isinstance(claim_spec, dict) or not isinstance(claim_spec.get("devices"), dict):
        return
    devices = claim_spec["devices"]
    requests = devices.get("requests")
    if not isinstance(requests, list):
        return
    out = []
    for i, r in enumerate(requests):
        if not isinstance(r, dict):
            out.append(r)
        elif to_v1:
            if "exactly" in r:
                findings.append(
                    Finding(
                        f"{prefix}.devices.requests[{i}].exactly",
                        f'unknown field "exactly" (in {_V1BETA1} the fields of `exactly` are set in the '
                        "request itself; `exactly` is resource.k8s.io/v1)",
                    )
                )
                r = {k: v for k, v in r.items() if k != "exactly"}
            out.append(request_to_v1(r))
        else:
            out.append(request_from_v1(r))
    devices["requests"] = out


def undefaulted_requests(beta: dict[str, Any]) -> list[int]:
    """Indices of the requests v1beta1 leaves undefaulted although v1 would default them: an `exactly`
    is created (some main field is set) but `deviceClassName` is empty (defaults.go returns early)."""
    kind = beta.get("kind")
    spec = beta.get("spec")
    claim_spec = spec.get("spec") if kind == "ResourceClaimTemplate" and isinstance(spec, dict) else spec
    if not isinstance(claim_spec, dict) or not isinstance(claim_spec.get("devices"), dict):
        return []
    requests = claim_spec["devices"].get("requests")
    out = []
    for i, r in enumerate(requests if isinstance(requests, list) else []):
        if not isinstance(r, dict):
            continue
        converted = request_to_v1(r)
        if "exactly" in converted and _go_zero("deviceClassName", r.get("deviceClassName")):
            out.append(i)
    return out


_REQUEST_EXACTLY = {
    "ResourceClaim": re.compile(r"^(spec\.devices\.requests\[\d+\])\.exactly(?=$|[.\[])"),
    "ResourceClaimTemplate": re.compile(r"^(spec\.spec\.devices\.requests\[\d+\])\.exactly(?=$|[.\[])"),
}
_DEVICE_FIELD = re.compile(r"^(spec\.devices\[\d+\])\.(?!name(?:$|[.\[]))")


def source_path(kind: str | None, path: str) -> str:
    """A v1 field path of a converted object in the v1beta1 manifest's terms."""
    if kind == "ResourceSlice":
        return _DEVICE_FIELD.sub(r"\1.basic.", path, count=1)
    pattern = _REQUEST_EXACTLY.get(kind or "")
    return pattern.sub(r"\1", path, count=1) if pattern is not None else path


def source_message(kind: str | None, message: str) -> str:
    """A v1 validation message in the v1beta1 manifest's terms (only messages naming `exactly`)."""
    if kind in _REQUEST_EXACTLY and "`exactly`" in message:
        return message.replace("`exactly`", "`deviceClassName` (an exact request)")
    return message


def _jsontype(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    return "object"
