"""A Kubernetes API server stand-in: a real HTTP(S) process on 127.0.0.1 that speaks the list/watch/write
wire protocol for the kinds draguard reads and writes, and a control API the tests drive it with.

    python3 -m tests.standin.apiserver --port 0 --ready-file F [--tls-cert C --tls-key K]
                                       [--admission-config FILE [--admission-module tests.standin.admission]]

Served resources (see RESOURCES): resource.k8s.io/v1 resourceslices, deviceclasses, resourceclaims (+ status),
resourceclaimtemplates, devicetaintrules (+ status); core v1 nodes (+ status), namespaces (+ status),
pods (+ status); draguard.io/v1alpha1 draguardpolicies (+ status: draguard's CRD, not checked against its
schema here); wgpolicyk8s.io/v1alpha2 policyreports and clusterpolicyreports (what the background audit writes);
rbac.authorization.k8s.io/v1 clusterroles, clusterrolebindings, roles, rolebindings (`audit rbac`). The namespaces default, kube-system, kube-public and kube-node-lease exist from the start.

Wire behaviour (as the real API server, admission.md §6):
- one global resourceVersion counter (like etcd's revision): every write takes the next one;
- LIST: items sorted by namespace/name, `limit`/`continue` pages served from one snapshot taken by the first
  page (all pages carry its `metadata.resourceVersion`), `remainingItemCount`; items carry no kind/apiVersion
  (as in a typed list); an expired continue token or an Exact list below the retained history → 410 Expired;
- WATCH (`?watch=1`): HTTP/1.1 chunked stream of newline-delimited `{"type","object"}` events. RV unset or "0"
  → synthetic ADDED for every object, then changes; RV "n" → every change after n, or an ERROR event with a
  410 Expired Status when n is older than the retained history. `allowWatchBookmarks=true` → BOOKMARK events
  (object: kind, apiVersion, metadata.resourceVersion only) every `bookmarkIntervalSeconds`;
  `sendInitialEvents=true` ends the initial ADDEDs with the `k8s.io/initial-events-end` BOOKMARK;
  `timeoutSeconds` ends the stream cleanly (unset: random in [1800, 3600) s);
- writes: POST (create, `generateName`), PUT (update, `metadata.resourceVersion` precondition → 409 Conflict),
  PATCH (merge-patch+json, json-patch+json, strategic-merge-patch+json treated as a merge patch — a patch
  that sets `metadata.resourceVersion` makes it a precondition (409 Conflict), as the API server does —, and
  apply-patch+yaml server-side apply: create-or-update of one object, `fieldManager` required; the applied
  configuration is merged into the stored object, lists replaced, no field-ownership conflicts), DELETE;
  `/status` subresources take only the status, the main resource keeps it; `dryRun=All`; a write that changes
  nothing keeps the resourceVersion; every stored object carries `metadata.managedFields`; errors are Status
  bodies (400 BadRequest, 404 NotFound, 409 AlreadyExists/Conflict, 410 Expired, 415, 422 Invalid, 429, 500).
  Namespaced writes need the namespace to exist (NamespaceLifecycle).
- users: a bearer token is taken as the user name (groups system:authenticated, and system:serviceaccounts(:ns)
  for service-account names); no Authorization header → system:admin in system:masters.

Admission: with `--admission-config FILE`, module `--admission-module` (default tests.standin.admission) is
imported and its `load(Path) -> AdmissionHook` called once; every API write (not control writes) then calls
`hook(AdmissionRequest)`, which returns the object to store (possibly mutated) or a `Denial`, and may append
to `request.warnings` (sent as `Warning: 299 - "..."` headers). See AdmissionRequest/Denial below.

Control API (JSON bodies, not logged, never failed, never admitted):
    GET  /_control/state                  resourceVersion, history floor, object counts, open watches
    GET  /_control/watches                the open watch streams (resource, namespace, cursor)
    POST /_control/seed | /_control/put   {"items": [obj...]} or {"object": obj}: create-or-replace each
    POST /_control/delete                 {"items": [{"apiVersion","kind","namespace"?,"name"}...]} or one ref
    POST /_control/expire                 forget all history (every RV before now → 410), continue tokens too;
                                          {"drop": true} also drops the watch connections
    POST /_control/drop-watches           {"graceful": false}: reset every watch connection (true: end cleanly)
    POST /_control/bookmark               a BOOKMARK now on every watch that allows them
    POST /_control/config                 {"listDelaySeconds", "bookmarkIntervalSeconds", "stallWatches",
                                           "historyLimit"}: stalled watches send nothing until unstalled
    POST /_control/fail                   {"count": N, "code": 500|429|..., "path": substring?, "method"?,
                                           "retryAfter"?}: the next N matching requests fail with that code;
                                          {"clear": true} forgets every such rule
    GET  /_control/requests               the request log (an entry per request from its start: status 0 and
                                          end null while it runs); DELETE clears it
"""

from __future__ import annotations

import argparse
import base64
import bisect
import copy
import importlib
import itertools
import json
import os
import random
import re
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import traceback
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    status: bool  # has a /status subresource

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:  # "resourceslices.resource.k8s.io", "pods"
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified_kind(self) -> str:  # "ResourceSlice.resource.k8s.io", "Pod"
        return f"{self.kind}.{self.group}" if self.group else self.kind


DRA = "resource.k8s.io"
RESOURCES = [
    Resource(DRA, "v1", "resourceslices", "ResourceSlice", False, False),
    Resource(DRA, "v1", "deviceclasses", "DeviceClass", False, False),
    Resource(DRA, "v1", "resourceclaims", "ResourceClaim", True, True),
    Resource(DRA, "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True, False),
    Resource(DRA, "v1", "devicetaintrules", "DeviceTaintRule", False, True),
    # what a 1.36 cluster serves instead (a collection of its own here: this stand-in does not convert)
    Resource(DRA, "v1beta2", "devicetaintrules", "DeviceTaintRule", False, True),
    Resource("", "v1", "nodes", "Node", False, True),
    Resource("", "v1", "namespaces", "Namespace", False, True),
    Resource("", "v1", "pods", "Pod", True, True),
    Resource("draguard.io", "v1alpha1", "draguardpolicies", "DraguardPolicy", False, True),
    # what `serve --audit-interval` writes (the wg-policy CRDs, schemas/policyreport/)
    Resource("wgpolicyk8s.io", "v1alpha2", "policyreports", "PolicyReport", True, False),
    Resource("wgpolicyk8s.io", "v1alpha2", "clusterpolicyreports", "ClusterPolicyReport", False, False),
    # what `draguard audit rbac` lists (ValidatingAdmissionPolicies are not served: it lists them if it can)
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, False),
    Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False, False),
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", True, False),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, False),
]
BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_KIND = {(r.api_version, r.kind): r for r in RESOURCES}
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


# ---------------------------------------------------------------------------------------------------------
# admission hook point


@dataclass
class AdmissionRequest:
    """One API write as the admission chain sees it (fields named as in an AdmissionReview request)."""

    uid: str
    operation: str  # CREATE | UPDATE | DELETE
    kind: dict[str, str]  # {"group", "version", "kind"}
    resource: dict[str, str]  # {"group", "version", "resource"}
    sub_resource: str  # "" or "status"
    name: str
    namespace: str  # "" for cluster-scoped objects
    object: dict[str, Any] | None  # the object to be stored (None for DELETE)
    old_object: dict[str, Any] | None  # the stored object (None for CREATE)
    dry_run: bool
    user_info: dict[str, Any]  # {"username", "groups"}
    options: dict[str, Any]  # CreateOptions / UpdateOptions / PatchOptions / DeleteOptions
    warnings: list[str] = field(default_factory=list)  # the hook appends; sent as Warning headers


@dataclass
class Denial:
    """The admission chain's refusal: the Status the API server answers with."""

    code: int
    message: str
    reason: str = ""  # e.g. "Forbidden", "InternalError"
    details: dict[str, Any] | None = None  # a webhook's status.details, passed through as the API server does


AdmissionHook = Callable[[AdmissionRequest], "dict[str, Any] | Denial"]


# ---------------------------------------------------------------------------------------------------------
# errors


class ApiError(Exception):
    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details = details
        self.headers = headers or {}
        # admission warnings: the API server's warning recorder writes them as headers at once, so a
        # denied request's response carries them too (kubectl prints them above the error)
        self.warnings = warnings or []

    def status(self) -> dict[str, Any]:
        s: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            s["details"] = self.details
        return s


def _details(res: Resource, name: str, **more: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "kind": res.plural}
    if res.group:
        d["group"] = res.group
    d.update(more)
    return d


def not_found(res: Resource, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{res.qualified} "{name}" not found', _details(res, name))


def already_exists(res: Resource, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{res.qualified} "{name}" already exists', _details(res, name))


def conflict(res: Resource, name: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {res.qualified} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        _details(res, name),
    )


def invalid(res: Resource, name: str, path: str, kind: str, detail: str) -> ApiError:
    """422 Invalid with one cause, as field.ErrorList formats it."""
    text = f"{path}: {kind}: {detail}" if kind != "Invalid value" else f"{path}: {detail}"
    cause = {"reason": f"Field{kind.replace(' ', '')}", "message": f"{kind}: {detail}", "field": path}
    return ApiError(
        422,
        "Invalid",
        f'{res.qualified_kind} "{name}" is invalid: {text}',
        _details(res, name, kind=res.kind, causes=[cause]),
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


# ---------------------------------------------------------------------------------------------------------
# the store


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


@dataclass
class Stored:
    obj: dict[str, Any]  # never mutated once stored
    tail: bytes  # JSON of obj without kind/apiVersion (a list item)

    def wire(self, res: Resource) -> bytes:
        """The object with kind/apiVersion first (a watch event's object, a GET answer)."""
        head = b'{"kind":"%s","apiVersion":"%s"' % (res.kind.encode(), res.api_version.encode())
        return head + (b"," + self.tail[1:] if len(self.tail) > 2 else b"}")


def _stored(obj: dict[str, Any]) -> Stored:
    body = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
    return Stored(obj, _dumps(body))


class Kind:
    """One resource's objects and its event history (rv, namespace, event line)."""

    def __init__(self, res: Resource) -> None:
        self.res = res
        self.objects: dict[tuple[str, str], Stored] = {}
        self.hist_rv: list[int] = []
        self.hist: list[tuple[str, bytes]] = []  # (namespace, b'{"type":..,"object":..}\n')
        self.floor = 0  # events with rv <= floor are gone


class ContinueSnapshot:
    def __init__(self, rv: int, items: list[Stored]) -> None:
        self.rv, self.items = rv, items


class Store:
    def __init__(self, history_limit: int = 200_000) -> None:
        self.cond = threading.Condition()
        self.rv = 1
        self.floor = 0  # global: a watch or Exact list below it → 410
        self.kinds = {r: Kind(r) for r in RESOURCES}
        self.history_limit = history_limit
        self.snapshots: OrderedDict[str, ContinueSnapshot] = OrderedDict()
        self.drop_gen = 0  # incremented to drop every watch
        self.drop_graceful = False
        self.bookmark_gen = 0  # incremented to send a bookmark now
        self.stall = False
        for ns in SYSTEM_NAMESPACES:
            self.put(
                BY_KIND[("v1", "Namespace")],
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            )

    # -- reads (callers hold self.cond) --
    def get(self, res: Resource, ns: str, name: str) -> Stored | None:
        return self.kinds[res].objects.get((ns, name))

    def servable(self, res: Resource, rv: int) -> bool:
        return rv >= max(self.floor, self.kinds[res].floor)

    # -- writes --
    def commit(self, res: Resource, ns: str, name: str, obj: dict[str, Any] | None) -> Stored | None:
        """Store obj (None: delete) under the next resourceVersion and record the event; None when there was
        nothing to delete. Holds the lock."""
        with self.cond:
            kind = self.kinds[res]
            old = kind.objects.get((ns, name))
            self.rv += 1
            if obj is None:
                if old is None:
                    return None
                gone = copy.deepcopy(old.obj)
                gone["metadata"]["resourceVersion"] = str(self.rv)
                stored = _stored(gone)
                del kind.objects[(ns, name)]
                etype = "DELETED"
            else:
                obj["metadata"]["resourceVersion"] = str(self.rv)
                stored = _stored(obj)
                kind.objects[(ns, name)] = stored
                etype = "MODIFIED" if old is not None else "ADDED"
            line = b'{"type":"%s","object":%s}\n' % (etype.encode(), stored.wire(res))
            kind.hist_rv.append(self.rv)
            kind.hist.append((ns, line))
            if len(kind.hist) > self.history_limit:
                cut = len(kind.hist) - self.history_limit // 2
                kind.floor = kind.hist_rv[cut - 1]
                del kind.hist_rv[:cut], kind.hist[:cut]
            self.cond.notify_all()
            return stored  # for a delete: the object as deleted (its last resourceVersion)

    def put(self, res: Resource, obj: dict[str, Any], manager: str = "standin-control") -> dict[str, Any]:
        """Create or replace without admission (the control API): fills the server-set metadata."""
        meta = obj.setdefault("metadata", {})
        ns = meta.get("namespace", "") if res.namespaced else ""
        if res.namespaced:
            meta["namespace"] = ns = ns or "default"
        with self.cond:
            old = self.get(res, ns, meta["name"])
            new = finish_write(res, obj, old.obj if old else None, manager, "Update")
            self.commit(res, ns, meta["name"], new)
            return new

    def expire(self) -> None:
        with self.cond:
            self.rv += 1
            self.floor = self.rv
            for kind in self.kinds.values():
                kind.hist_rv.clear()
                kind.hist.clear()
            self.snapshots.clear()
            self.cond.notify_all()

    def snapshot(self, rv: int, items: list[Stored]) -> str:
        token_id = uuid.uuid4().hex
        self.snapshots[token_id] = ContinueSnapshot(rv, items)
        while len(self.snapshots) > 256:
            self.snapshots.popitem(last=False)
        return token_id


def finish_write(
    res: Resource, obj: dict[str, Any], old: dict[str, Any] | None, manager: str, operation: str
) -> dict[str, Any]:
    """The server-set fields of a write: uid/creationTimestamp/generation, managedFields, the namespace's
    kubernetes.io/metadata.name label. `obj` is a fresh copy the caller owns."""
    obj["apiVersion"], obj["kind"] = res.api_version, res.kind
    meta = obj.setdefault("metadata", {})
    if old is None:
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = _now()
        meta["generation"] = 1
    else:
        om = old["metadata"]
        meta["uid"], meta["creationTimestamp"] = om["uid"], om["creationTimestamp"]
        changed = obj.get("spec") != old.get("spec")
        meta["generation"] = om.get("generation", 1) + (1 if changed else 0)
    if res.kind == "Namespace":
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    managed = [
        m for m in (old or {}).get("metadata", {}).get("managedFields", []) if m.get("manager") != manager
    ]
    top: dict[str, Any] = {f"f:{k}": {} for k in obj if k not in ("apiVersion", "kind", "metadata")}
    managed.append(
        {
            "manager": manager,
            "operation": operation,
            "apiVersion": res.api_version,
            "time": _now(),
            "fieldsType": "FieldsV1",
            "fieldsV1": top,
        }
    )
    meta["managedFields"] = managed
    return obj


def _same_content(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal but for resourceVersion and managedFields (a no-op write keeps the object)."""

    def strip(o: dict[str, Any]) -> dict[str, Any]:
        m = {k: v for k, v in o.get("metadata", {}).items() if k not in ("resourceVersion", "managedFields")}
        return {**o, "metadata": m}

    return strip(a) == strip(b)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def apply_merge(target: Any, applied: Any) -> Any:
    """Server-side apply, simplified: maps merge key by key, everything else (lists included) replaced."""
    if isinstance(target, dict) and isinstance(applied, dict):
        out = dict(target)
        for k, v in applied.items():
            out[k] = apply_merge(target.get(k), v)
        return out
    return copy.deepcopy(applied)


# ---------------------------------------------------------------------------------------------------------
# selectors


def _selector(text: str, what: str) -> list[tuple[str, str, str | None]]:
    """'a=b,c!=d,e' → [(key, op, value)]; only the equality forms."""
    out: list[tuple[str, str, str | None]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = re.fullmatch(r"([^=!\s]+)\s*(==|=|!=)\s*([^=!\s]*)", part)
        if m:
            out.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
        elif what == "label" and re.fullmatch(r"!?[A-Za-z0-9./_-]+", part):
            out.append((part.lstrip("!"), "!exists" if part.startswith("!") else "exists", None))
        else:
            raise bad_request(f"unable to parse requirement: {part!r} (the stand-in knows =, ==, !=, exists)")
    return out


def _field_value(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for p in path.split("."):
        cur = cur.get(p) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


def _matches(obj: dict[str, Any], labels: list[Any], fields: list[Any]) -> bool:
    have = obj.get("metadata", {}).get("labels") or {}
    for key, op, value in labels:
        if (op == "exists" and key not in have) or (op == "!exists" and key in have):
            return False
        if (op == "=" and have.get(key) != value) or (op == "!=" and have.get(key) == value):
            return False
    for path, op, value in fields:
        if (_field_value(obj, path) == value) != (op == "="):
            return False
    return True


# ---------------------------------------------------------------------------------------------------------
# the server


class Settings:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.list_delay = 0.0
        self.bookmark_interval = 5.0
        self.fail_rules: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.watches: dict[int, dict[str, Any]] = {}
        self.watch_ids = itertools.count(1)

    def take_failure(self, method: str, path: str) -> dict[str, Any] | None:
        with self.lock:
            for rule in self.fail_rules:
                if rule.get("method") and rule["method"].upper() != method:
                    continue
                if rule.get("path") and rule["path"] not in path:
                    continue
                rule["count"] -= 1
                if rule["count"] <= 0:
                    self.fail_rules.remove(rule)
                return rule
        return None

    def log(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(entry)
            if len(self.requests) > 100_000:
                del self.requests[:50_000]


class StandIn(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self, port: int, admission: AdmissionHook | None = None, history_limit: int = 200_000
    ) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.store = Store(history_limit)
        self.settings = Settings()
        self.admission = admission
        self.tls: ssl.SSLContext | None = None

    def finish_request(self, request: Any, client_address: Any) -> None:
        """The TLS handshake runs in the connection's own thread, never in the accepting one."""
        if self.tls is not None:
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return
        super().finish_request(request, client_address)


@dataclass
class Target:
    res: Resource
    namespace: str  # "" for cluster-scoped or all namespaces
    name: str
    sub: str
    watch_path: bool


def parse_path(path: str) -> Target | None:
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch_path = bool(rest) and rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    if not rest:
        return None
    ns = ""
    if rest[0] == "namespaces" and len(rest) >= 3 and (group, version, rest[2]) in BY_PATH:
        ns, rest = rest[1], rest[2:]
    res = BY_PATH.get((group, version, rest[0]))
    if res is None or len(rest) > 3 or (ns and not res.namespaced):
        return None
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if sub and (sub != "status" or not res.status):
        return None
    if res.namespaced and name and not ns:
        return None
    return Target(res, ns, name, sub, watch_path)


def _user(auth: str | None) -> dict[str, Any]:
    if not auth or not auth.lower().startswith("bearer "):
        return {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]}
    name = auth[7:].strip()
    groups = ["system:authenticated"]
    m = re.fullmatch(r"system:serviceaccount:([^:]+):[^:]+", name)
    if m:
        groups += ["system:serviceaccounts", f"system:serviceaccounts:{m.group(1)}"]
    return {"username": name, "groups": groups}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StandIn
    server_version = "standin-apiserver"

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle delay per answer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (BaseHTTPRequestHandler's name)
        pass

    # -- plumbing --
    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(
        self, code: int, body: bytes, headers: dict[str, str] | None = None, warnings: list[str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        for w in warnings or []:
            self.send_header("Warning", '299 - "' + w.replace('"', "'") + '"')
        self.end_headers()
        self.wfile.write(body)
        self._status = code

    def _send_obj(self, code: int, obj: Any, warnings: list[str] | None = None) -> None:
        body = obj if isinstance(obj, bytes) else _dumps(obj)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for w in warnings or []:
            self.send_header("Warning", '299 - "' + w.replace('"', "'") + '"')
        self.end_headers()
        self.wfile.write(body)
        self._status = code

    def _handle(self, method: str) -> None:
        self._status = 0
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        if url.path.startswith("/_control/"):
            try:
                self._control(method, url.path[len("/_control/") :])
            except ApiError as e:
                self._send(e.code, _dumps(e.status()))
            return
        entry = {  # logged when the request starts (a watch is in the log while it runs), completed at its end
            "method": method,
            "path": url.path,
            "query": query,
            "status": 0,
            "user": _user(self.headers.get("Authorization"))["username"],
            "contentType": self.headers.get("Content-Type", ""),
            "start": time.time(),
            "end": None,
        }
        self.server.settings.log(entry)
        try:
            rule = self.server.settings.take_failure(method, url.path)
            if rule is not None:
                code = int(rule.get("code", 500))
                reason = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}.get(
                    code, HTTPStatus(code).phrase.replace(" ", "")
                )
                headers = {"Retry-After": str(rule.get("retryAfter", 1))} if code == 429 else {}
                self._body()
                raise ApiError(
                    code, reason, rule.get("message", f"stand-in: injected {code}"), headers=headers
                )
            self._api(method, url.path, query)
        except ApiError as e:
            self._send(e.code, _dumps(e.status()), e.headers, e.warnings)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # a bug here or in the admission hook: a 500 Status, as the API server
            traceback.print_exc()
            if self._status == 0:
                self._send(500, _dumps(ApiError(500, "InternalError", f"stand-in: {e!r}").status()))
        finally:
            with self.server.settings.lock:
                entry["status"], entry["end"] = self._status, time.time()

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._handle("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")

    # -- the API --
    def _api(self, method: str, path: str, query: dict[str, str]) -> None:
        if path in ("/healthz", "/readyz", "/livez"):
            self._send(200, b"ok")
            return
        if path == "/version":
            self._send_obj(200, {"major": "1", "minor": "37", "gitVersion": "v1.37.0-standin"})
            return
        t = parse_path(path)
        if t is None:
            self._body()
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        watch = t.watch_path or query.get("watch", "").lower() in ("1", "true")
        if method == "GET" and watch and not t.name:
            self._watch(t, query)
        elif method == "GET" and not t.name:
            self._list(t, query)
        elif method == "GET":
            with self.server.store.cond:
                stored = self.server.store.get(t.res, t.namespace, t.name)
            if stored is None:
                raise not_found(t.res, t.name)
            self._send_obj(200, stored.wire(t.res))
        elif method == "POST" and not t.name and not t.sub:
            self._create(t, query)
        elif method in ("PUT", "PATCH") and t.name:
            self._update(method, t, query)
        elif method == "DELETE" and t.name and not t.sub:
            self._delete(t, query)
        else:
            self._body()
            raise ApiError(
                405, "MethodNotAllowed", f"the server does not allow this method on {t.res.qualified}"
            )

    def _list(self, t: Target, query: dict[str, str]) -> None:
        store, settings = self.server.store, self.server.settings
        if settings.list_delay:
            time.sleep(settings.list_delay)
        labels = _selector(query.get("labelSelector", ""), "label")
        fields = _selector(query.get("fieldSelector", ""), "field")
        limit = int(query.get("limit") or 0)
        token = query.get("continue", "")
        rv_param, rv_match = query.get("resourceVersion", ""), query.get("resourceVersionMatch", "")
        with store.cond:
            if token:
                try:
                    decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
                    snap_id, offset = decoded["id"], int(decoded["offset"])
                except (ValueError, KeyError, TypeError) as e:
                    raise bad_request(f"continue key is not valid: {e}") from None
                snap = store.snapshots.get(snap_id)
                if snap is None:
                    raise expired(
                        "The provided continue parameter is too old to display a consistent list result. "
                        "You can start a new list without the continue parameter."
                    )
                rv, items = snap.rv, snap.items
            else:
                if rv_match and not rv_param:
                    raise bad_request("resourceVersionMatch is forbidden unless resourceVersion is provided")
                if rv_param not in ("", "0"):
                    want = int(rv_param) if rv_param.isdigit() else -1
                    if want < 0:
                        raise bad_request(f"invalid resourceVersion {rv_param!r}")
                    if want > store.rv:
                        raise ApiError(
                            504,
                            "Timeout",
                            f"Too large resource version: {want}, current: {store.rv}",
                            {
                                "causes": [
                                    {
                                        "reason": "ResourceVersionTooLarge",
                                        "message": "Too large resource version",
                                    }
                                ],
                                "retryAfterSeconds": 1,
                            },
                        )
                    exact = rv_match == "Exact" or (not rv_match and limit > 0)
                    if exact and not store.servable(t.res, want):
                        raise expired(f"too old resource version: {want} ({store.floor})")
                objects = store.kinds[t.res].objects
                keys = sorted(k for k in objects if not t.namespace or k[0] == t.namespace)
                items = [objects[k] for k in keys]
                if labels or fields:
                    items = [s for s in items if _matches(s.obj, labels, fields)]
                rv, offset = store.rv, 0
            page = items[offset : offset + limit] if limit else items[offset:]
            rest = len(items) - offset - len(page)
            meta: dict[str, Any] = {"resourceVersion": str(rv)}
            if rest > 0:
                snap_id = decoded["id"] if token else store.snapshot(rv, items)
                meta["continue"] = base64.urlsafe_b64encode(
                    _dumps({"id": snap_id, "offset": offset + len(page), "rv": rv})
                ).decode()
                meta["remainingItemCount"] = rest
        head = _dumps({"kind": f"{t.res.kind}List", "apiVersion": t.res.api_version, "metadata": meta})
        body = head[:-1] + b',"items":[' + b",".join(s.tail for s in page) + b"]}"
        self._send_obj(200, body)

    def _watch(self, t: Target, query: dict[str, str]) -> None:
        store, settings = self.server.store, self.server.settings
        labels = _selector(query.get("labelSelector", ""), "label")
        fields = _selector(query.get("fieldSelector", ""), "field")
        bookmarks = query.get("allowWatchBookmarks", "").lower() in ("1", "true")
        initial_end = query.get("sendInitialEvents", "").lower() in ("1", "true")
        timeout = (
            float(query["timeoutSeconds"]) if query.get("timeoutSeconds") else random.uniform(1800, 3600)
        )
        deadline = time.monotonic() + timeout
        rv_param = query.get("resourceVersion", "")
        kind = store.kinds[t.res]
        res = t.res

        def keep(ns: str, line: bytes) -> bool:
            if t.namespace and ns != t.namespace:
                return False
            if labels or fields:
                return _matches(json.loads(line)["object"], labels, fields)
            return True

        def bookmark(rv: int, end_of_initial: bool = False) -> bytes:
            meta: dict[str, Any] = {"resourceVersion": str(rv)}
            if end_of_initial:
                meta["annotations"] = {"k8s.io/initial-events-end": "true"}
            obj = {"kind": res.kind, "apiVersion": res.api_version, "metadata": meta}
            return _dumps({"type": "BOOKMARK", "object": obj}) + b"\n"

        first: list[bytes] = []
        with store.cond:
            if rv_param in ("", "0"):
                keys = sorted(k for k in kind.objects if not t.namespace or k[0] == t.namespace)
                for k in keys:
                    s = kind.objects[k]
                    if not (labels or fields) or _matches(s.obj, labels, fields):
                        first.append(b'{"type":"ADDED","object":%s}\n' % s.wire(res))
                cursor = store.rv
                if initial_end and bookmarks:
                    first.append(bookmark(cursor, True))
                gone = False
            else:
                cursor = int(rv_param) if rv_param.isdigit() else -1
                if cursor < 0:
                    raise bad_request(f"invalid resourceVersion {rv_param!r}")
                gone = not store.servable(res, cursor)
            drop_gen, bm_gen = store.drop_gen, store.bookmark_gen
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._status = 200
        if gone:
            status = expired(f"too old resource version: {cursor} ({max(store.floor, kind.floor)})").status()
            self._chunk(_dumps({"type": "ERROR", "object": status}) + b"\n")
            self._chunk(b"")
            return
        wid = next(settings.watch_ids)
        with settings.lock:
            settings.watches[wid] = {
                "resource": res.plural,
                "namespace": t.namespace,
                "cursor": cursor,
                "bookmarks": bookmarks,
                "since": time.time(),
            }
        try:
            if first:
                self._chunk(b"".join(first))
            next_bookmark = time.monotonic() + settings.bookmark_interval
            while True:
                out: list[bytes] = []
                end = ""  # why the stream ends: drop | graceful | timeout | expired (decided under the lock)
                with store.cond:  # nothing is written to the socket while holding the store's lock
                    while True:
                        now = time.monotonic()
                        if store.drop_gen != drop_gen:
                            end = "graceful" if store.drop_graceful else "drop"
                            break
                        if now >= deadline:
                            end = "timeout"
                            break
                        if store.stall:
                            store.cond.wait(min(0.5, deadline - now))
                            continue
                        if not store.servable(res, cursor):  # expired under a live watch
                            end = "expired"
                            floor = store.floor
                            break
                        i = bisect.bisect_right(kind.hist_rv, cursor)
                        if i < len(kind.hist_rv):
                            out = [line for ns, line in kind.hist[i:] if keep(ns, line)]
                            cursor = kind.hist_rv[-1]
                        if bookmarks and (store.bookmark_gen != bm_gen or now >= next_bookmark):
                            bm_gen = store.bookmark_gen
                            cursor = store.rv  # every event of this resource up to now is in `out`
                            out.append(bookmark(cursor))
                            next_bookmark = now + settings.bookmark_interval
                        elif not bookmarks and now >= next_bookmark:
                            next_bookmark = now + settings.bookmark_interval
                        if out:
                            break
                        store.cond.wait(max(0.01, min(next_bookmark, deadline) - now))
                if end == "drop":
                    self._reset()
                    return
                if end == "expired":
                    status = expired(f"too old resource version: {cursor} ({floor})").status()
                    self._chunk(_dumps({"type": "ERROR", "object": status}) + b"\n")
                if end:
                    self._chunk(b"")
                    return
                with settings.lock:
                    settings.watches[wid]["cursor"] = cursor
                self._chunk(b"".join(out))
        except OSError:
            self.close_connection = True
        finally:
            with settings.lock:
                settings.watches.pop(wid, None)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        if not data:
            self.wfile.flush()

    def _reset(self) -> None:
        """Drop the connection without ending the chunked stream (the client sees a broken response)."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- writes --
    def _read_object(self, t: Target, content_type: str) -> Any:
        raw = self._body()
        try:
            if "yaml" in content_type:
                return yaml.safe_load(raw.decode() or "{}")
            return json.loads(raw or b"null")
        except (ValueError, yaml.YAMLError) as e:
            raise bad_request(f"the body of the request was in an unknown format: {e}") from None

    def _check_body(self, t: Target, obj: Any, name: str) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise bad_request("the body of the request was not an object")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if (api_version, kind) != (t.res.api_version, t.res.kind):
            raise bad_request(
                f"the API version in the data ({api_version}) / kind ({kind}) does not match the expected "
                f"API version ({t.res.api_version}) / kind ({t.res.kind})"
            )
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if t.res.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != t.namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = t.namespace
        if name and meta.get("name", name) != name:
            raise bad_request("the name of the object does not match the name on the URL")
        return obj

    def _validate_name(self, t: Target, obj: dict[str, Any]) -> None:
        name = obj["metadata"].get("name", "")
        pattern = DNS1123_LABEL if t.res.kind in ("Namespace",) else DNS1123_SUBDOMAIN
        if not name:
            raise invalid(t.res, "", "metadata.name", "Required value", "name or generateName is required")
        if len(name) > 253 or not pattern.match(name):
            raise invalid(
                t.res,
                name,
                "metadata.name",
                "Invalid value",
                f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower case '
                "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            )

    def _namespace_exists(self, t: Target) -> None:
        if t.res.namespaced:
            ns_res = BY_KIND[("v1", "Namespace")]
            with self.server.store.cond:
                if self.server.store.get(ns_res, "", t.namespace) is None:
                    raise not_found(ns_res, t.namespace)

    def _admit(
        self,
        t: Target,
        op: str,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        query: dict[str, str],
        options_kind: str,
        warnings: list[str],
    ) -> dict[str, Any] | None:
        hook = self.server.admission
        if hook is None:
            return obj
        meta = (obj or old or {}).get("metadata", {})
        options: dict[str, Any] = {"kind": options_kind, "apiVersion": "meta.k8s.io/v1"}
        if query.get("fieldManager"):
            options["fieldManager"] = query["fieldManager"]
        if query.get("dryRun"):
            options["dryRun"] = [query["dryRun"]]
        req = AdmissionRequest(
            uid=str(uuid.uuid4()),
            operation=op,
            kind={"group": t.res.group, "version": t.res.version, "kind": t.res.kind},
            resource={"group": t.res.group, "version": t.res.version, "resource": t.res.plural},
            sub_resource=t.sub,
            name=meta.get("name", ""),
            namespace=t.namespace if t.res.namespaced else "",
            object=copy.deepcopy(obj) if obj is not None else None,
            old_object=copy.deepcopy(old) if old is not None else None,
            dry_run=query.get("dryRun") == "All",
            user_info=_user(self.headers.get("Authorization")),
            options=options,
        )
        answer = hook(req)
        warnings.extend(req.warnings)
        if isinstance(answer, Denial):
            raise ApiError(
                answer.code,
                answer.reason or HTTPStatus(answer.code).phrase.replace(" ", ""),
                answer.message,
                answer.details if answer.details is not None else _details(t.res, req.name),
                warnings=list(warnings),
            )
        return answer

    def _write(
        self,
        t: Target,
        query: dict[str, str],
        compute: Callable[[dict[str, Any] | None], tuple[str, dict[str, Any] | None]],
        options_kind: str,
    ) -> None:
        """compute(stored or None) → (operation, new object or None for delete); admitted, then committed
        if nothing was written in between (else recomputed, as GuaranteedUpdate retries)."""
        store = self.server.store
        dry_run = query.get("dryRun") == "All"
        for _ in range(10):
            warnings: list[str] = []
            with store.cond:
                cur = store.get(t.res, t.namespace, t.name) if t.name else None
            old = cur.obj if cur else None
            op, new = compute(old)
            if new is not None:
                key_name = new["metadata"]["name"]
                if old is None and t.name == "":
                    with store.cond:
                        cur = store.get(t.res, t.namespace, key_name)
                    if cur is not None:
                        raise already_exists(t.res, key_name)
                if old is not None and _same_content(new, old):
                    self._send_obj(200, cur.wire(t.res) if cur else b"{}")
                    return
            admitted = self._admit(t, op, new, old, query, options_kind, warnings)
            if op != "DELETE" and admitted is not None:
                new = admitted
            if dry_run:
                self._send_obj(201 if op == "CREATE" else 200, new if new is not None else old, warnings)
                return
            name = new["metadata"]["name"] if new is not None else t.name
            with store.cond:
                now = store.get(t.res, t.namespace, name)
                if (now.obj if now else None) is not old:
                    if op == "CREATE" and now is not None and t.name == "":
                        raise already_exists(t.res, name)
                    continue
                stored = store.commit(t.res, t.namespace, name, new)
            if op == "DELETE" and t.res.kind in (
                "ResourceSlice",
                "DeviceClass",
                "ResourceClaim",
                "ResourceClaimTemplate",
                "DeviceTaintRule",
                "Pod",
            ):
                # these registries answer with the deleted object (as their OpenAPI and the client expect)
                assert stored is not None
                self._send_obj(200, stored.wire(t.res), warnings)
            elif op == "DELETE":
                assert old is not None
                status = {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": _details(t.res, name, uid=old["metadata"]["uid"]),
                }
                self._send_obj(200, status, warnings)
            else:
                assert stored is not None
                self._send_obj(201 if op == "CREATE" else 200, stored.wire(t.res), warnings)
            return
        raise conflict(t.res, t.name)

    def _create(self, t: Target, query: dict[str, str]) -> None:
        obj = self._check_body(t, self._read_object(t, self.headers.get("Content-Type", "")), "")
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        self._validate_name(t, obj)
        self._namespace_exists(t)
        manager = query.get("fieldManager") or "unknown"
        for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
            meta.pop(k, None)
        if t.res.status and t.res.kind in ("ResourceClaim", "DeviceTaintRule", "DraguardPolicy"):
            obj.pop("status", None)  # status is reset on create

        def compute(old: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
            return "CREATE", finish_write(t.res, copy.deepcopy(obj), None, manager, "Update")

        self._write(t, query, compute, "CreateOptions")

    def _update(self, method: str, t: Target, query: dict[str, str]) -> None:
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip()
        body = self._read_object(t, content_type)
        manager = query.get("fieldManager") or "unknown"
        apply = method == "PATCH" and content_type == "application/apply-patch+yaml"
        if method == "PUT":
            body = self._check_body(t, body, t.name)
        elif apply:
            if not query.get("fieldManager"):
                raise invalid(t.res, t.name, "fieldManager", "Required value", "is required for apply patch")
            body = self._check_body(t, body, t.name)
            body["metadata"].setdefault("name", t.name)
        elif content_type not in (
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/json-patch+json",
        ):
            raise ApiError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format: {content_type}",
            )
        if apply:
            self._namespace_exists(t)

        def compute(old: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
            if old is None:
                if not apply:
                    raise not_found(t.res, t.name)
                if t.sub:
                    raise not_found(t.res, t.name)
                new = copy.deepcopy(body)
                self._validate_name(t, new)
                for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
                    new["metadata"].pop(k, None)
                return "CREATE", finish_write(t.res, new, None, manager, "Apply")
            if method == "PUT":
                want_rv = body["metadata"].get("resourceVersion")
                if want_rv and want_rv != old["metadata"]["resourceVersion"]:
                    raise conflict(t.res, t.name)
                new = copy.deepcopy(body)
            elif apply:
                new = apply_merge(old, body)
            elif content_type == "application/json-patch+json":
                import jsonpatch  # a test dependency

                try:
                    new = jsonpatch.apply_patch(old, body)
                except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                    raise ApiError(
                        422, "Invalid", f"the server rejected our request due to an error in our request: {e}"
                    ) from None
            else:
                new = merge_patch(old, body)
            want_rv = body.get("metadata", {}).get("resourceVersion") if isinstance(body, dict) else None
            if method == "PATCH" and not apply and want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise conflict(t.res, t.name)  # a patch's resourceVersion is a precondition
            new = copy.deepcopy(new)
            new["apiVersion"], new["kind"] = t.res.api_version, t.res.kind
            meta = new.setdefault("metadata", {})
            if meta.get("name") != t.name:
                raise bad_request("the name of the object does not match the name on the URL")
            if t.res.status:
                if t.sub == "status":  # only the status changes
                    new = {**copy.deepcopy(old), "status": new.get("status")}
                    if new["status"] is None:
                        del new["status"]
                elif "status" in old:
                    new["status"] = copy.deepcopy(old["status"])
                else:
                    new.pop("status", None)
            for k in ("uid", "creationTimestamp"):
                if k in old["metadata"]:
                    new["metadata"][k] = old["metadata"][k]
            new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            new["metadata"]["managedFields"] = old["metadata"].get("managedFields", [])
            if _same_content(new, old):
                return "UPDATE", new
            return "UPDATE", finish_write(t.res, new, old, manager, "Apply" if apply else "Update")

        self._write(t, query, compute, "PatchOptions" if method == "PATCH" else "UpdateOptions")

    def _delete(self, t: Target, query: dict[str, str]) -> None:
        self._body()

        def compute(old: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
            if old is None:
                raise not_found(t.res, t.name)
            return "DELETE", None

        self._write(t, query, compute, "DeleteOptions")

    # -- the control API --
    def _control(self, method: str, what: str) -> None:
        store, settings = self.server.store, self.server.settings
        body = self._body()
        data = json.loads(body) if body else {}
        if method == "GET" and what == "state":
            with store.cond:
                counts = {r.kind: len(k.objects) for r, k in store.kinds.items()}
                answer = {"resourceVersion": store.rv, "floor": store.floor, "counts": counts}
            with settings.lock:
                answer["watches"] = len(settings.watches)
            self._send_obj(200, answer)
        elif method == "GET" and what == "watches":
            with settings.lock:
                self._send_obj(200, {"items": list(settings.watches.values())})
        elif method == "POST" and what in ("seed", "put"):
            items = data.get("items") or [data["object"]]
            for obj in items:
                res = BY_KIND.get((obj.get("apiVersion"), obj.get("kind")))
                if res is None:
                    raise bad_request(f"no resource for {obj.get('apiVersion')} {obj.get('kind')}")
                store.put(res, obj)  # freshly parsed from the request: stored as it is
            self._send_obj(200, {"resourceVersion": store.rv})
        elif method == "POST" and what == "delete":
            refs = data.get("items") or [data]
            deleted = 0
            for ref in refs:
                res = BY_KIND.get((ref.get("apiVersion"), ref.get("kind")))
                if res is None:
                    raise bad_request(f"no resource for {ref.get('apiVersion')} {ref.get('kind')}")
                meta = ref.get("metadata", ref)
                ns = (meta.get("namespace") or "default") if res.namespaced else ""
                with store.cond:
                    if store.get(res, ns, meta["name"]) is not None:
                        store.commit(res, ns, meta["name"], None)
                        deleted += 1
            self._send_obj(200, {"resourceVersion": store.rv, "deleted": deleted})
        elif method == "POST" and what == "expire":
            store.expire()
            if data.get("drop"):
                self._drop(False)
            self._send_obj(200, {"resourceVersion": store.rv})
        elif method == "POST" and what == "drop-watches":
            self._drop(bool(data.get("graceful")))
            self._send_obj(200, {"resourceVersion": store.rv})
        elif method == "POST" and what == "bookmark":
            with store.cond:
                store.bookmark_gen += 1
                store.cond.notify_all()
            self._send_obj(200, {"resourceVersion": store.rv})
        elif method == "POST" and what == "config":
            with store.cond:
                if "listDelaySeconds" in data:
                    settings.list_delay = float(data["listDelaySeconds"])
                if "bookmarkIntervalSeconds" in data:
                    settings.bookmark_interval = float(data["bookmarkIntervalSeconds"])
                if "stallWatches" in data:
                    store.stall = bool(data["stallWatches"])
                if "historyLimit" in data:
                    store.history_limit = int(data["historyLimit"])
                store.cond.notify_all()
            self._send_obj(200, {"ok": True})
        elif method == "POST" and what == "fail" and data.get("clear"):
            with settings.lock:
                settings.fail_rules.clear()
            self._send_obj(200, {"ok": True})
        elif method == "POST" and what == "fail":
            rule = {"count": int(data.get("count", 1)), "code": int(data.get("code", 500))}
            for k in ("path", "method", "retryAfter", "message"):
                if k in data:
                    rule[k] = data[k]
            with settings.lock:
                settings.fail_rules.append(rule)
            self._send_obj(200, {"ok": True})
        elif what == "requests" and method in ("GET", "DELETE"):
            with settings.lock:
                items = [dict(r) for r in settings.requests]
                if method == "DELETE":
                    settings.requests.clear()
            self._send_obj(200, {"items": items})
        else:
            raise ApiError(404, "NotFound", f"no control endpoint {method} /_control/{what}")

    def _drop(self, graceful: bool) -> None:
        store = self.server.store
        with store.cond:
            store.drop_gen += 1
            store.drop_graceful = graceful
            store.cond.notify_all()


def load_admission(module: str, config: Path) -> AdmissionHook:
    """`module.load(config)` → the admission hook (module default: tests.standin.admission)."""
    hook: AdmissionHook = importlib.import_module(module).load(config)
    return hook


def _write_ready(path: Path, port: int) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{port}\n")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m tests.standin.apiserver", description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--ready-file", type=Path, help="the port is written here once the server listens")
    p.add_argument("--tls-cert", type=Path)
    p.add_argument("--tls-key", type=Path)
    p.add_argument("--admission-config", type=Path, help="passed to the admission module's load()")
    p.add_argument("--admission-module", default="tests.standin.admission")
    p.add_argument("--history-limit", type=int, default=200_000, help="events kept per resource")
    p.add_argument("--bookmark-interval", type=float, default=5.0, help="seconds between BOOKMARK events")
    args = p.parse_args(argv)
    # stop() sends SIGINT; a shell without job control starts background jobs with SIGINT ignored, and
    # the ignoring is inherited: answer it anyway (its own process, so this is this program's choice)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if bool(args.tls_cert) != bool(args.tls_key):
        p.error("--tls-cert and --tls-key go together")
    hook = load_admission(args.admission_module, args.admission_config) if args.admission_config else None
    server = StandIn(args.port, hook, args.history_limit)
    server.settings.bookmark_interval = args.bookmark_interval
    scheme = "http"
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(args.tls_cert), str(args.tls_key))
        server.tls = ctx
        scheme = "https"
    port = server.server_address[1]
    print(f"standin apiserver listening on {scheme}://127.0.0.1:{port}", flush=True)
    if args.ready_file:
        _write_ready(args.ready_file, port)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    # run as the importable module so an admission module's `Denial` is this module's class
    from tests.standin import apiserver

    sys.exit(apiserver.main())
