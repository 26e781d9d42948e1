"""The API server's admission side for the stand-in (tests/standin/apiserver.py): the rendered
Validating/MutatingWebhookConfigurations, and what kube-apiserver's webhook admission plugins do with them
for one write.

    chain = Admission.from_files([rendered.yaml], services={"draguard-system/draguard": "127.0.0.1:8443"},
                                 namespaces=lambda name: stored_namespace_or_None)
    result = chain.admit(Attributes(operation="CREATE", kind=..., resource=..., object=obj, ...))
    result.status   # None: admitted (result.object is what to store), else the Status the API server answers
    result.warnings, result.calls (every webhook called: outcome, seconds, request sent, answer), result.skipped

Per write (k8s.io/apiserver `admission/plugin/webhook/{generic,mutating,validating}`, admission.md §1–§3):
1. Mutating webhooks in series: configurations sorted by name, webhooks in list order. Each: namespace and
   object selectors, rules (matchPolicy Equivalent: other served versions, the object converted with
   webhook/convert/), matchConditions (CEL, tests/standin/admission_cel.py); an AdmissionReview v1 (a new
   uid per call) POSTed over HTTPS verifying the caBundle (tests/standin/admission_call.py); call failures
   and timeouts → failurePolicy (Fail: 500 InternalError `failed calling webhook "<name>": ...`, Ignore:
   continue and record `failed-open...` audit annotation); a denial stops the chain; JSON Patches applied in
   order, later webhooks see the patched object.
2. Validating webhooks in parallel on the final object: all must allow; the first error collected wins;
   a denial is answered with the webhook's Status (code < 400 → 400, message prefixed
   `admission webhook "<name>" denied the request: `, reason and details passed through).
Warnings of every called webhook are kept (de-duplicated, bounded as the API server's recorder does),
with a denial too. Connections are kept alive per webhook address, as the API server's transport does.
Not modelled: typed decoding and defaulting of a patched object (unknown fields stay), built-in admission
plugins and validation between the phases (the stand-in's own checks do that), the `authorizer` CEL
variable and AdmissionReview v1beta1 (refused loudly when a configuration needs them), reinvocation.

`load(config)` is the stand-in's hook factory (`--admission-config FILE`); see `HookConfig`.
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import os
import ssl
import sys
import threading
import time
import unicodedata
import urllib.request
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.standin import admission_cel as cel
from tests.standin.admission_call import (
    CallFailure,
    Pool,
    Response,
    ServiceResolver,
    apply_patch,
    post,
    verify,
)
from tests.standin.admission_config import Hook, documents, hooks, service_resolver
from tests.standin.admission_match import (
    DRA,
    EXEMPT_KINDS,
    Invocation,
    NamespaceGetter,
    Request,
    StatusFailure,
    forbidden,
    internal_error,
    match_namespace_selector,
    match_object_selector,
    match_rules,
)
from webhook.convert import from_v1, to_v1, version_of

WARNINGS_TOTAL_RUNES = 4096
WARNING_RUNES_WHEN_TRUNCATING = 256


# ---------------------------------------------------------------------------------------------------------
# inputs and outputs


@dataclass
class Attributes:
    """One write as admission sees it (admission.Attributes): the request as the client sent it."""

    operation: str  # CREATE | UPDATE | DELETE | CONNECT
    kind: dict[str, str]  # {"group", "version", "kind"} of the request
    resource: dict[str, str]  # {"group", "version", "resource"}
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None = None
    name: str = ""
    namespace: str = ""  # "" for cluster-scoped writes (a Namespace write gets its own name: see admit)
    sub_resource: str = ""
    dry_run: bool = False
    user_info: dict[str, Any] = field(default_factory=lambda: {"username": "system:admin"})
    options: dict[str, Any] | None = None  # CreateOptions / UpdateOptions / DeleteOptions


@dataclass
class Call:
    """One webhook call: what was sent, what came back, what the API server made of it."""

    webhook: str
    configuration: str
    phase: str  # mutating | validating
    outcome: str  # allowed | patched | denied | failed-open | failed | error
    seconds: float
    request: dict[str, Any]  # the AdmissionReview sent
    response: dict[str, Any] | None = None  # the AdmissionReview answered (None: no usable answer)
    error: str = ""


@dataclass
class Result:
    object: dict[str, Any] | None  # what to store (after mutation, in the request's version)
    status: dict[str, Any] | None = None  # None: admitted; else the Status the API server answers with
    warnings: list[str] = field(default_factory=list)
    audit: dict[str, str] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # webhook → why it was not called

    @property
    def allowed(self) -> bool:
        return self.status is None


# ---------------------------------------------------------------------------------------------------------
# versions (matchPolicy Equivalent)


def in_version(obj: dict[str, Any] | None, kind: dict[str, str]) -> dict[str, Any] | None:
    """`obj` in the version of `kind` (resource.k8s.io objects are converted through v1; others as is)."""
    if obj is None or kind.get("group") != DRA:
        return obj
    have, want = version_of(obj.get("apiVersion")), kind["version"]
    if have == want or have is None:
        return obj
    v1 = obj if have == "v1" else to_v1(obj).obj
    return v1 if want == "v1" else from_v1(v1, f"{DRA}/{want}")


# ---------------------------------------------------------------------------------------------------------
# warnings (apiserver/pkg/endpoints/filters/warning.go recorder)


class Warnings:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recorded: set[str] = set()
        self._all: list[str] = []
        self.shown: list[str] = []
        self._written = 0
        self._truncating = False

    def add(self, text: str) -> None:
        if not text or any(unicodedata.category(ch) == "Cc" for ch in text):
            return  # NewWarningHeader refuses control characters: the warning is dropped
        with self._lock:
            if text in self._recorded or (self._truncating and self._written >= WARNINGS_TOTAL_RUNES):
                return
            self._recorded.add(text)
            if self._written + len(text) > WARNINGS_TOTAL_RUNES and not self._truncating:
                self._truncating = True
                self._written = 0
                self.shown = []
                for earlier in self._all:
                    self._write(earlier)
            self._all.append(text)
            self._write(text)

    def _write(self, text: str) -> None:
        if self._truncating:
            text = text[:WARNING_RUNES_WHEN_TRUNCATING]
            if self._written + len(text) > WARNINGS_TOTAL_RUNES:
                return
        self.shown.append(text)
        self._written += len(text)


# ---------------------------------------------------------------------------------------------------------
# the chain


def denial(webhook: str, result: dict[str, Any] | None) -> dict[str, Any]:
    """webhookerrors.ToStatusErr: the Status a denying webhook's answer becomes."""
    s = copy.deepcopy(result) if isinstance(result, dict) else {}
    s = {"kind": "Status", "apiVersion": "v1", "metadata": s.pop("metadata", {}) or {}, **s}
    code = s.get("code")
    if not isinstance(code, int) or code < 400:
        s["code"] = 400
    if s.get("status") in (None, "", "Success"):
        s["status"] = "Failure"
    denied_by = f'admission webhook "{webhook}" denied the request'
    if s.get("message"):
        s["message"] = f"{denied_by}: {s['message']}"
    elif s.get("reason"):
        s["message"] = f"{denied_by}: {s['reason']}"
    else:
        s["message"] = f"{denied_by} without explanation"
    return s


class Admission:
    """The admission chain over a fixed set of webhook configurations (thread-safe; `admit` per write)."""

    def __init__(
        self,
        docs: Iterable[dict[str, Any]],
        services: dict[str, str] | ServiceResolver,
        namespaces: NamespaceGetter = lambda name: None,
        served: Callable[[str, str], bool] = lambda group, version: version == "v1",
    ) -> None:
        self.mutating, self.validating = hooks(docs)
        self.resolve = service_resolver(services) if isinstance(services, dict) else services
        self.namespaces = namespaces
        self.served = served  # which versions the API server serves (matchPolicy Equivalent's candidates)
        self.pool = Pool()  # kept-alive connections to the webhooks

    @classmethod
    def from_files(cls, paths: Iterable[Path | str], services: dict[str, str], **kw: Any) -> Admission:
        return cls(documents(paths), services, **kw)

    # -- ShouldCallHook --
    def _should_call(
        self, hook: Hook, a: Attributes, req: Request, obj: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> Invocation | str:
        """The invocation, or why the webhook is skipped. Raises StatusFailure."""
        w = hook.webhook
        errors: list[StatusFailure] = []
        try:
            if not match_namespace_selector(w, req, obj, self.namespaces):
                return "namespaceSelector"
        except StatusFailure as e:
            errors.append(e)
        try:
            if not match_object_selector(w, obj, old):
                return "objectSelector"
        except StatusFailure as e:
            errors.append(e)
        inv = match_rules(w, req, a.kind, self.served)
        if inv is None:
            return "rules"
        if errors:
            raise errors[0]
        if hook.conditions:
            variables = {
                "object": in_version(obj, inv.kind),
                "oldObject": in_version(old, inv.kind),
                "request": self._request(a, req, inv),
                "namespaceObject": None,
            }
            m = cel.evaluate(list(hook.conditions), variables, w["failurePolicy"])
            if m.error:
                raise StatusFailure(forbidden(req.resource, a.name, m.error))
            if not m.matches:
                return (
                    f"matchCondition {m.failed}"
                    if m.failed
                    else "matchConditions (error, failurePolicy Ignore)"
                )
        return inv

    @staticmethod
    def _request(a: Attributes, req: Request, inv: Invocation) -> dict[str, Any]:
        """The AdmissionRequest (v1) without uid, object and oldObject (CreateAdmissionRequest)."""
        user = {k: v for k, v in a.user_info.items() if v not in (None, "", [], {})}
        r: dict[str, Any] = {
            "kind": dict(inv.kind),
            "resource": dict(inv.resource),
            "requestKind": dict(a.kind),
            "requestResource": dict(a.resource),
            "name": a.name,
            "namespace": req.namespace,
            "operation": a.operation,
            "userInfo": user,
            "dryRun": a.dry_run,
            "options": a.options,
        }
        if a.sub_resource:
            r["subResource"] = a.sub_resource
            r["requestSubResource"] = a.sub_resource
        return {k: v for k, v in r.items() if v not in ("", None)}

    def _review(
        self,
        a: Attributes,
        req: Request,
        inv: Invocation,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> dict[str, Any]:
        request = {"uid": str(uuid.uuid4()), **self._request(a, req, inv)}
        request["object"] = in_version(obj, inv.kind)
        request["oldObject"] = in_version(old, inv.kind)
        request["dryRun"] = a.dry_run
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}

    def _call(self, hook: Hook, review: dict[str, Any], call: Call) -> Response:
        """POST and verify; raises CallFailure. (A dry run reaches every webhook: v1 configurations only
        hold sideEffects None or NoneOnDryRun, which admission_config checks.)"""
        answer = post(hook.webhook, review, self.resolve, self.pool)
        call.response = answer
        return verify(hook.name, review["request"]["uid"], hook.mutating, answer)

    # -- the write --
    def admit(self, a: Attributes) -> Result:
        a = copy.copy(a)
        if a.resource == {"group": "", "version": "v1", "resource": "namespaces"} and not a.namespace:
            a.namespace = a.name  # the API server sets a Namespace write's namespace to its name
        result = Result(object=a.object)
        if a.kind.get("group") == "admissionregistration.k8s.io" and a.kind.get("kind") in EXEMPT_KINDS:
            return result
        req = Request(a.operation, dict(a.resource), a.sub_resource, a.namespace)
        warnings = Warnings()
        try:
            obj = self._mutate(a, req, result, warnings)
            result.object = in_version(obj, a.kind)
            self._validate(a, req, result.object, result, warnings)
        except StatusFailure as e:
            result.status = e.status
        result.warnings = warnings.shown
        return result

    def _mutate(
        self, a: Attributes, req: Request, result: Result, warnings: Warnings
    ) -> dict[str, Any] | None:
        obj, old = a.object, a.old_object
        for i, hook in enumerate(self.mutating):
            inv = self._should_call(hook, a, req, obj, old)
            if isinstance(inv, str):
                result.skipped[hook.name] = inv
                continue
            review = self._review(a, req, inv, obj, old)
            call = Call(hook.name, hook.configuration, "mutating", "allowed", 0.0, review)
            result.calls.append(call)
            t0 = time.monotonic()
            try:
                r = self._call(hook, review, call)
                self._record(hook, r, result, warnings)
                if not r.allowed:
                    call.outcome = "denied"
                    raise StatusFailure(denial(hook.name, r.result))
                if r.patch:
                    obj = apply_patch(hook.name, review["request"]["object"], r.patch, r.patch_type)
                    call.outcome = "patched"
            except CallFailure as e:
                call.error = str(e)
                if hook.webhook["failurePolicy"] == "Ignore":
                    call.outcome = "failed-open"
                    result.audit[f"failed-open.mutation.webhook.admission.k8s.io/round_0_index_{i}"] = (
                        hook.name
                    )
                    continue
                call.outcome = "failed"
                raise StatusFailure(internal_error(str(e))) from None
            except StatusFailure as e:
                if call.outcome != "denied":
                    call.outcome, call.error = "error", e.status["message"]
                raise
            finally:
                call.seconds = time.monotonic() - t0
        return obj

    def _validate(
        self, a: Attributes, req: Request, obj: dict[str, Any] | None, result: Result, warnings: Warnings
    ) -> None:
        old = a.old_object
        relevant: list[tuple[int, Hook, dict[str, Any]]] = []
        for hook in self.validating:
            inv = self._should_call(hook, a, req, obj, old)
            if isinstance(inv, str):
                result.skipped[hook.name] = inv
                continue
            relevant.append((len(relevant), hook, self._review(a, req, inv, obj, old)))
        if not relevant:
            return
        errors: list[dict[str, Any]] = []
        lock = threading.Lock()

        def one(i: int, hook: Hook, review: dict[str, Any]) -> None:
            call = Call(hook.name, hook.configuration, "validating", "allowed", 0.0, review)
            with lock:
                result.calls.append(call)
            t0 = time.monotonic()
            error: dict[str, Any] | None = None
            try:
                r = self._call(hook, review, call)
                self._record(hook, r, result, warnings)
                if not r.allowed:
                    call.outcome = "denied"
                    error = denial(hook.name, r.result)
            except CallFailure as e:
                call.error = str(e)
                if hook.webhook["failurePolicy"] == "Ignore":
                    call.outcome = "failed-open"
                    with lock:
                        result.audit[f"failed-open.validating.webhook.admission.k8s.io/round_0_index_{i}"] = (
                            hook.name
                        )
                else:
                    call.outcome = "failed"
                    error = internal_error(str(e))
            except StatusFailure as e:
                call.outcome, call.error, error = "error", e.status["message"], e.status
            finally:
                call.seconds = time.monotonic() - t0
            if error is not None:
                with lock:
                    errors.append(error)  # in the order the calls end, as the API server collects them

        if len(relevant) == 1:
            one(*relevant[0])
        else:
            with concurrent.futures.ThreadPoolExecutor(len(relevant)) as pool:
                for f in [pool.submit(one, *r) for r in relevant]:
                    f.result()
        if errors:
            raise StatusFailure(errors[0])

    @staticmethod
    def _record(hook: Hook, r: Response, result: Result, warnings: Warnings) -> None:
        for k, v in r.audit.items():
            result.audit[f"{hook.name}/{k}"] = v
        for w in r.warnings:
            warnings.add(w)


# ---------------------------------------------------------------------------------------------------------
# the stand-in's hook


class HookConfig:
    """The file behind `--admission-config` (YAML), re-read when it changes (a restarted webhook may move):

    configurations: [deploy-rendered.yaml, ...]   # files of rendered YAML (relative to this file)
    services: {draguard-system/draguard: "127.0.0.1:40123"}
    apiserver: https://127.0.0.1:40000            # the stand-in itself: namespaces are read from it
    apiserverCA: standin-ca.crt                   # its CA (HTTPS)
    served: [v1]                                  # resource.k8s.io versions the API server serves
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int, int] | None = None
        self._lock = threading.Lock()
        self._chain: Admission | None = None
        self._apiserver = ""
        self._apiserver_ca: str | None = None

    def chain(self) -> Admission:
        st = os.stat(self.path)
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            if self._chain is None or stamp != self._stamp:
                data = yaml.safe_load(self.path.read_text()) or {}
                base = self.path.parent
                files = [base / p for p in data.get("configurations") or []]
                served = set(data.get("served") or ["v1"])
                self._apiserver = str(data.get("apiserver") or "")
                self._apiserver_ca = str(base / data["apiserverCA"]) if data.get("apiserverCA") else None
                if self._chain is not None:
                    self._chain.pool.close()  # its idle connections (calls in flight finish on theirs)
                self._chain = Admission(
                    documents(files),
                    dict(data.get("services") or {}),
                    self._namespace,
                    lambda group, version: version in served,
                )
                self._stamp = stamp
            return self._chain

    def _namespace(self, name: str) -> dict[str, Any] | None:
        """GET the namespace from the stand-in (upstream's matcher reads its lister, then the API)."""
        if not self._apiserver:
            return None
        ctx = ssl.create_default_context(cafile=self._apiserver_ca) if self._apiserver_ca else None
        try:
            url = f"{self._apiserver}/api/v1/namespaces/{name}"
            with urllib.request.urlopen(url, timeout=10, context=ctx) as r:
                ns: dict[str, Any] = json.loads(r.read())
                return ns
        except OSError:
            return None


def log(request: Any, result: Result) -> None:
    """One line per write and one per webhook call on stderr (the stand-in's log): what the tests and the
    e2e report read to see which path a write took."""
    where = f"{request.namespace}/{request.name}" if request.namespace else request.name
    verdict = (
        "admitted" if result.status is None else f"{result.status['code']} {result.status.get('reason', '')}"
    )
    lines = [
        f"admission: {request.operation} {request.kind.get('kind')} {where} uid={request.uid} -> {verdict}"
    ]
    for c in result.calls:
        lines.append(
            f"admission:   {c.phase} {c.webhook} {c.outcome} {c.seconds:.3f}s uid={request.uid}"
            + (f" error={c.error}" if c.error else "")
        )
    print("\n".join(lines), file=sys.stderr, flush=True)


def load(config: Path) -> Callable[[Any], Any]:
    """The stand-in's hook: `hook(AdmissionRequest) -> object to store | Denial`."""
    from tests.standin.apiserver import Denial  # the stand-in's own class (imported when it runs us)

    source = HookConfig(Path(config))

    def hook(request: Any) -> Any:
        chain = source.chain()
        ns_object = getattr(request, "namespace_object", None)
        if ns_object is not None:  # the stand-in read it under its lock: no GET needed
            chain = copy.copy(chain)
            chain.namespaces = lambda name: (
                ns_object if name == request.namespace else source._namespace(name)
            )
        result = chain.admit(
            Attributes(
                operation=request.operation,
                kind=request.kind,
                resource=request.resource,
                object=request.object,
                old_object=request.old_object,
                name=request.name,
                namespace=request.namespace,
                sub_resource=request.sub_resource,
                dry_run=request.dry_run,
                user_info=request.user_info,
                options=request.options,
            )
        )
        request.warnings.extend(result.warnings)
        log(request, result)
        if result.status is None:
            return result.object
        s = result.status
        return Denial(int(s["code"]), str(s["message"]), str(s.get("reason", "")), s.get("details"))

    return hook
