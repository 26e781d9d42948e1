"""Run manifests through the whole pipeline and reduce the result to upstream's terms: (field path, error type).

Used by the tables ported from kubernetes/kubernetes `pkg/apis/resource/validation/*_test.go`."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from typing import Any

from webhook.apiserver.defaults import apply_defaults
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.model.violation import Severity
from webhook.validate import object_violations

_TYPES = (
    ("Required value", "Required"),
    ("Invalid value", "Invalid"),
    ("Too long", "TooLong"),
    ("Too many", "TooMany"),
    ("Duplicate value", "Duplicate"),
    ("Unsupported value", "NotSupported"),
    ("Forbidden", "Forbidden"),
)

Errors = Counter[tuple[str, str]]


def error_type(message: str) -> str:
    """The Go `field.ErrorType` a message starts with (`Invalid value: ...` -> `Invalid`)."""
    for prefix, kind in _TYPES:
        if message.startswith(prefix):
            return kind
    return "Other:" + message[:40]


def errors(
    obj: dict[str, Any],
    old: dict[str, Any] | None = None,
    gates: Mapping[str, bool] | None = None,
    namespace_labels: Mapping[str, str] | None = None,
    status: bool = False,
) -> Errors:
    """Error-severity violations of `obj` (an UPDATE of `old` when given) as a multiset of (path, type).
    `status`: the object's status is validated as a /status write stores it (a CREATE resets it).

    `old` is defaulted first, as the API server stores it — and not stripped: it was stored when the
    gates may have been on, and ratcheting must see the fields it uses."""
    profile = load_profile("1.37", gates)
    stored = None
    if old is not None:
        stored = copy.deepcopy(old)
        apply_defaults(stored)
    ctx = Context(
        profile=profile,
        old=stored,
        namespace_labels=namespace_labels,
        operation="UPDATE" if old is not None else "CREATE",
        lint=False,
        as_stored=status,
    )
    found = object_violations(copy.deepcopy(obj), ctx)
    return Counter((v.field, error_type(v.message)) for v in found if v.severity == Severity.ERROR)


def want(*pairs: tuple[str, str]) -> Errors:
    return Counter(pairs)


# Metadata every kind's upstream table accepts (ObjectMeta cases shared by the claim/class/taint tables).
VALID_META = {
    "generate-name": {"generateName": "pvc-"},
    "uid": {"uid": "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"},
    "resource-version": {"resourceVersion": "1"},
    "generation": {"generation": 100},
    "creation-timestamp": {"creationTimestamp": "2026-07-01T00:00:00Z"},
    "deletion-grace-period-seconds": {"deletionGracePeriodSeconds": 10},
    "owner-references": {
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "pod", "name": "foo", "uid": "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"}
        ]
    },
    "finalizers": {"finalizers": ["example.com/foo"]},
    "managed-fields": {
        "managedFields": [
            {"fieldsType": "FieldsV1", "operation": "Apply", "apiVersion": "apps/v1", "manager": "foo"}
        ]
    },
    "good-labels": {"labels": {"apps.kubernetes.io/name": "test"}},
    "good-annotations": {"annotations": {"foo": "bar"}},
}
