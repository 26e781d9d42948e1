"""The `request` of an `admission.k8s.io/v1` AdmissionReview, read defensively.

A body that is no AdmissionReview (not a mapping, wrong apiVersion/kind, no `request`, no `uid`) raises
`BadReview`: there is nobody to answer (the server replies 400). Anything else in the request that is
malformed (an unknown operation, `kind` not a group/version/kind, `object` not a mapping, ...) is a
`MalformedRequest`: the review is answered, with a denial that says what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webhook.model.errors import DraguardError
from webhook.model.text import one_line

REVIEW_API_VERSION = "admission.k8s.io/v1"
REVIEW_KIND = "AdmissionReview"
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
MAX_UID_CHARS = 256  # a UID is a UUID (36); anything much longer is not from an API server


class BadReview(DraguardError):
    """The body is no AdmissionReview that can be answered (the server answers 400 with this message)."""


class MalformedRequest(DraguardError):
    """A field of an answerable request is malformed (answered with a denial naming the field)."""


@dataclass(frozen=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version} {self.kind}"


@dataclass(frozen=True)
class Request:
    """The fields of `request` that admission reads (object and oldObject as sent, not copied)."""

    uid: str
    kind: GroupVersionKind
    resource: str
    sub_resource: str
    request_kind: GroupVersionKind | None
    name: str
    namespace: str | None
    operation: str
    username: str
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    dry_run: bool
    user_extra: tuple[tuple[str, tuple[str, ...]], ...] = ()  # userInfo.extra, its string values

    def extra(self, key: str) -> tuple[str, ...]:
        """The values of one userInfo.extra key (e.g. a bound token's node name)."""
        return next((values for k, values in self.user_extra if k == key), ())


def _short(value: Any) -> str:
    text = repr(value)
    return one_line(text if len(text) <= 80 else text[:77] + "...")


def uid_of(review: Any) -> str:
    """The request's uid, or BadReview: checks the envelope only (apiVersion, kind, request, uid)."""
    if not isinstance(review, dict):
        raise BadReview(f"expected an AdmissionReview object, got {type(review).__name__}")
    api_version, kind = review.get("apiVersion"), review.get("kind")
    if kind != REVIEW_KIND:
        raise BadReview(f"expected kind {REVIEW_KIND}, got {_short(kind)}")
    if api_version != REVIEW_API_VERSION:
        raise BadReview(
            f"expected apiVersion {REVIEW_API_VERSION}, got {_short(api_version)} "
            f"(set admissionReviewVersions: [v1] in the webhook configuration)"
        )
    request = review.get("request")
    if not isinstance(request, dict):
        raise BadReview("the AdmissionReview has no request object")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadReview("request.uid is missing or not a string: the answer must repeat it")
    if len(uid) > MAX_UID_CHARS or one_line(uid) != uid:
        raise BadReview(f"request.uid is not a UID: {_short(uid)}")
    return uid


def _gvk(value: Any, field: str, required: bool) -> GroupVersionKind | None:
    if value is None and not required:
        return None
    if not isinstance(value, dict):
        raise MalformedRequest(
            f"request.{field} must be an object {{group, version, kind}}, got {_short(value)}"
        )
    parts = [value.get(k, "") for k in ("group", "version", "kind")]
    if not all(isinstance(p, str) for p in parts) or not parts[1] or not parts[2]:
        raise MalformedRequest(f"request.{field} must name a version and a kind, got {_short(value)}")
    return GroupVersionKind(*parts)


def _optional_str(request: dict[str, Any], key: str) -> str:
    value = request.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedRequest(f"request.{key} must be a string, got {_short(value)}")
    return value


def _object(request: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = request.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise MalformedRequest(f"request.{key} must be an object or null, got {type(value).__name__}")
    return value


def parse_request(review: dict[str, Any]) -> Request:
    """The request of an envelope `uid_of` accepted; MalformedRequest names the first bad field."""
    request = review["request"]
    operation = request.get("operation")
    if operation not in OPERATIONS:
        raise MalformedRequest(
            f"request.operation must be one of {', '.join(OPERATIONS)}, got {_short(operation)}"
        )
    resource = request.get("resource")
    resource_name = resource.get("resource", "") if isinstance(resource, dict) else ""
    if resource is not None and not isinstance(resource_name, str):
        raise MalformedRequest(f"request.resource.resource must be a string, got {_short(resource_name)}")
    dry_run = request.get("dryRun", False)
    if dry_run is None:
        dry_run = False
    if not isinstance(dry_run, bool):
        raise MalformedRequest(f"request.dryRun must be true or false, got {_short(dry_run)}")
    user = request.get("userInfo")
    username = user.get("username", "") if isinstance(user, dict) else ""
    extra = user.get("extra") if isinstance(user, dict) else None
    namespace = _optional_str(request, "namespace")
    kind = _gvk(request.get("kind"), "kind", True)
    assert kind is not None
    return Request(
        uid=request["uid"],
        kind=kind,
        resource=resource_name,
        sub_resource=_optional_str(request, "subResource"),
        request_kind=_gvk(request.get("requestKind"), "requestKind", False),
        name=_optional_str(request, "name"),
        namespace=namespace or None,
        operation=operation,
        username=username if isinstance(username, str) else "",
        object=_object(request, "object"),
        old_object=_object(request, "oldObject"),
        dry_run=dry_run,
        user_extra=_extra(extra),
    )


def _extra(extra: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """userInfo.extra as sent (a map of string lists); anything else in it is left out."""
    if not isinstance(extra, dict):
        return ()
    return tuple(
        (k, tuple(x for x in v if isinstance(x, str)))
        for k, v in sorted(extra.items())
        if isinstance(k, str) and isinstance(v, list)
    )
