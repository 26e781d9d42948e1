"""v1 defaulting of DRA objects, as the API server applies it to `resource.k8s.io/v1` input before
validation (port of the behaviour of `pkg/apis/resource/v1` defaulters; no upstream code copied).

Defaults applied:
- ExactDeviceRequest and DeviceSubRequest: `allocationMode` "" → `ExactCount`; with `ExactCount`, a
  missing or zero `count` becomes 1 (claims: `spec`, templates: `spec.spec`).
- DeviceToleration: `operator` "" → `Equal` (request and subrequest tolerations, and the tolerations
  copied into `status.allocation.devices.results[]` of a claim).
- DeviceTaint: `timeAdded` is stamped with the current time (seconds) when missing, in ResourceSlice
  device taints and DeviceTaintRule `spec.taint`. The stamp is the only time-dependent default, so it is
  applied only when the caller passes `now=` (the mutating webhook does; offline validation does not, to
  keep its output reproducible). Validation never depends on it.
"""

from __future__ import annotations

from typing import Any

EXACT_COUNT = "ExactCount"
EQUAL = "Equal"


def apply_defaults(obj: dict[str, Any], *, now: str | None = None) -> None:
    """Default `obj` in place like the v1 API server does before validation.

    `now` (RFC 3339, e.g. "2026-09-03T10:00:00Z"): when given, missing DeviceTaint `timeAdded` values
    are set to it. Objects of other kinds, and malformed parts, are left alone (never raises)."""
    if not isinstance(obj, dict):
        return
    kind = obj.get("kind")
    spec = obj.get("spec")
    if kind == "ResourceClaim":
        _default_claim_spec(spec)
        status = obj.get("status")
        if isinstance(status, dict):
            _default_result_tolerations(status.get("allocation"))
    elif kind == "ResourceClaimTemplate":
        if isinstance(spec, dict):
            _default_claim_spec(spec.get("spec"))
    elif kind == "ResourceSlice":
        if now is not None and isinstance(spec, dict):
            for device in _dicts(spec.get("devices")):
                for taint in _dicts(device.get("taints")):
                    _stamp(taint, now)
    elif kind == "DeviceTaintRule":
        if now is not None and isinstance(spec, dict) and isinstance(spec.get("taint"), dict):
            _stamp(spec["taint"], now)


def default_request(req: dict[str, Any]) -> None:
    """allocationMode/count defaults of one ExactDeviceRequest or DeviceSubRequest (in place)."""
    mode = req.get("allocationMode")
    if mode is None or mode == "":
        req["allocationMode"] = mode = EXACT_COUNT
    if mode == EXACT_COUNT:
        count = req.get("count")
        # Go's int64 zero value: absent, null and 0 all mean "not specified".
        if count is None or (isinstance(count, int) and not isinstance(count, bool) and count == 0):
            req["count"] = 1
    _default_tolerations(req.get("tolerations"))


def _default_claim_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return
    for request in _dicts(devices.get("requests")):
        exactly = request.get("exactly")
        if isinstance(exactly, dict):
            default_request(exactly)
        for sub in _dicts(request.get("firstAvailable")):
            default_request(sub)


def _default_result_tolerations(allocation: Any) -> None:
    if not isinstance(allocation, dict):
        return
    devices = allocation.get("devices")
    if not isinstance(devices, dict):
        return
    for result in _dicts(devices.get("results")):
        _default_tolerations(result.get("tolerations"))


def _default_tolerations(tolerations: Any) -> None:
    for tol in _dicts(tolerations):
        if tol.get("operator") in (None, ""):
            tol["operator"] = EQUAL


def _stamp(taint: dict[str, Any], now: str) -> None:
    if taint.get("timeAdded") in (None, ""):
        taint["timeAdded"] = now


def _dicts(items: Any) -> list[dict[str, Any]]:
    """The dict entries of a list (anything else: none)."""
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, dict)]
