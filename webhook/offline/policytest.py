"""`draguard test`: run policy test files (`webhook.offline.testfile`) and compare what draguard does with
what each file expects.

A rule's result comes from the run `draguard validate --policy P --cluster C RESOURCES` makes
(`validate_paths`): on the named object, a finding of the rule is `fail` (error), `warn` or `info`;
none is `pass` when the rule ran on the object, `skip` when it did not — the policy turns it off, the rule
does not apply to the object's kind, a `draguard.io/ignore` annotation silenced it, or (a `feasibility.*`
rule) the object's feasibility was not decided (no devices in the input and no `cluster`, or the open
world left claims undecided: the run's `feasibility.open-world` finding). `admission.feasibility` is
the webhook's own verdict: the validating endpoint's review of a CREATE of the object on the cluster
(`cluster` and `resources` as the state), under the policy's feasibility mode for its kind and
namespace: `fail` denied, `warn` warned, `pass` feasible, `skip` mode off or not checked.

A `patchedResource` is compared with the object after the mutating endpoint's patch for a CREATE of it
(`review()` on the same state, as a dry run): whatever the mutating webhook changes is tested.
"""

from __future__ import annotations

import base64
import difflib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import yaml

from webhook.admission.config import AdmissionConfig
from webhook.admission.patch import PatchError, apply_ops
from webhook.admission.review import review_with_info
from webhook.config.context import Context
from webhook.config.policy import Policy, PolicySpec, combine
from webhook.config.policyfile import load_policy_specs
from webhook.config.profile import DEFAULT_VERSION, Profile, load_profile
from webhook.io.files import InputFileError, discover_all, read_text
from webhook.io.yamlload import YamlError, load_documents
from webhook.model.catalogue import RULES
from webhook.model.didyoumean import closest
from webhook.model.errors import UsageError
from webhook.model.plain import deep_copy
from webhook.model.report import ObjectResult, Report
from webhook.model.violation import Severity, Violation
from webhook.offline.run import Feasibility, validate_paths

if TYPE_CHECKING:
    from webhook.state.store import Snapshot
from webhook.offline.testfile import (
    CLUSTER_SCOPED,
    Expectation,
    Expected,
    ResourceRef,
    TestFile,
    TestFileError,
    discover_tests,
    load_test_file,
)
from webhook.validate import RunOptions

ADMISSION_FEASIBILITY = "admission.feasibility"
PATCHED = "patchedResource"  # the `rule` a patched-resource case reports under
_RESULT = {Severity.ERROR: "fail", Severity.WARNING: "warn", Severity.INFO: "info"}
_PLURALS = {
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "DeviceTaintRule": "devicetaintrules",
    "Pod": "pods",
}


@dataclass(frozen=True)
class TestOptions:
    """What every test file runs with: the target version and feature gates (`--k8s-version`,
    `--feature-gates`) and the bound of each file read."""

    __test__ = False  # not a pytest class

    version: str = DEFAULT_VERSION
    gates: tuple[tuple[str, bool], ...] = ()
    max_bytes: int = 8 << 20


@dataclass(frozen=True)
class Case:
    """One expectation for one resource: what was expected, what happened, and why."""

    resource: str  # as written in the test file
    rule: str  # a rule id, or `patchedResource`
    expected: str  # pass | fail | warn | info | skip, or the patched file as written
    actual: str
    ok: bool
    line: int  # of the expectation in the test file
    detail: list[str] = field(default_factory=list)  # the findings behind the actual result
    diff: str = ""  # expected vs actual patched object (unified, YAML)


@dataclass
class FileRun:
    path: str
    name: str
    cases: list[Case] = field(default_factory=list)
    error: TestFileError | None = None  # the file could not be run (exit 2)

    @property
    def failed(self) -> int:
        return sum(1 for c in self.cases if not c.ok)


@dataclass
class TestRun:
    __test__ = False  # not a pytest class

    files: list[FileRun] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(1 for f in self.files for c in f.cases if c.ok)

    @property
    def failed(self) -> int:
        return sum(f.failed for f in self.files)

    @property
    def errors(self) -> list[TestFileError]:
        return [f.error for f in self.files if f.error is not None]


def run_tests(paths: Sequence[str], options: TestOptions) -> TestRun:
    """Every test file under `paths`, each run on its own. No test file found is a usage error; a file
    that cannot be run is reported in its `FileRun.error` and the others still run."""
    files = discover_tests(paths)
    if not files:
        raise UsageError(
            f"no test files under {', '.join(paths)}: a test file is named draguard-test.yaml or "
            "*.draguard-test.yaml (or give its path)"
        )
    profile = load_profile(options.version, dict(options.gates))
    out = TestRun()
    for path in files:
        try:
            test = load_test_file(path, RULES)
        except TestFileError as e:
            out.files.append(FileRun(path, "", error=e))
            continue
        run = FileRun(path, test.name)
        try:
            run.cases = _run_file(test, options, profile)
        except TestFileError as e:
            run.error = e
        out.files.append(run)
    return out


def _policy(test: TestFile, profile: Profile) -> Policy:
    specs: list[PolicySpec] = []
    for i, path in enumerate(test.policies):
        try:
            specs += load_policy_specs(path, RULES, profile)
        except UsageError as e:
            raise test.error(f"policies[{i}]", str(e).removeprefix("--policy ")) from None
    names = [s.name for s in specs if s.name]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise test.error("policies", f"DraguardPolicy {twice[0]!r} is defined in more than one policy file")
    return combine(specs)


def _key(o: ObjectResult) -> tuple[str, str, str]:
    kind = o.kind or ""
    return (kind, "" if kind in CLUSTER_SCOPED else (o.namespace or "default"), o.name or "")


def _label(key: tuple[str, str, str]) -> str:
    return "/".join(p for p in key if p)


class _Run:
    """One test file's run: the validate report, and (made when first needed) the state the webhook's
    endpoints review its objects on."""

    def __init__(self, test: TestFile, options: TestOptions, profile: Profile) -> None:
        self.test = test
        self.options = options
        self.profile = profile
        self.policy = _policy(test, profile)
        run_options = RunOptions(
            version=options.version,
            gates=options.gates,
            policy=self.policy,
            max_bytes=options.max_bytes,
            cluster=test.cluster,
        )
        self.report: Report = validate_paths(test.resources, run_options, Feasibility(), jobs=1)
        self.objects: dict[tuple[str, str, str], ObjectResult] = {}
        for o in self.report.objects:
            if o.kind and o.name and not _under(o.source, test.cluster):
                self.objects.setdefault(_key(o), o)
        self.decided = self._feasibility_decided()
        self._raw: dict[tuple[str, str, str], dict[str, Any]] | None = None
        self._snapshot: Snapshot | None = None

    def _feasibility_decided(self) -> bool:
        """Whether the run decided the feasibility of every claim and Pod it holds (see the module
        docstring): a `feasibility.*` rule without a finding then passes."""
        open_world = any(
            v.rule == "feasibility.open-world" for o in self.report.objects for v in o.violations
        )
        devices = any(o.kind == "ResourceSlice" for o in self.report.objects)
        return not open_world and (bool(self.test.cluster) or devices)

    def object(self, ref: ResourceRef, where: str) -> ObjectResult:
        found = self.objects.get(ref.key)
        if found is not None:
            return found
        labels = [_label(k) for k in self.objects]
        near = closest(ref.text, labels)
        hint = f" (did you mean {near!r}?)" if near else f" (they are: {', '.join(sorted(labels)[:10])})"
        unread = [(o, v) for o in self.report.objects if not o.kind for v in o.violations]
        if unread:
            o, v = unread[0]
            hint += f"; {o.source}:{v.line or o.line}: {v.rule}: {v.message}"
        raise self.test.error(where, f"Not found: {ref.text!r} is not among the objects of resources{hint}")

    # -- the state the webhook reviews on ------------------------------------------------------------

    def raw(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        """The objects of `resources` as written (the first of a name), by key."""
        if self._raw is None:
            self._raw = {}
            for obj in self._read(self.test.resources):
                self._raw.setdefault(_object_key(obj), obj)
        return self._raw

    def _read(self, paths: Iterable[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for path in discover_all(paths).files:
            try:
                text = read_text(path, self.options.max_bytes)
            except InputFileError:
                continue  # the validate run reports it
            out += _objects_of(text)
        return out

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            from webhook.simulate.load import stored_objects
            from webhook.state import StateStore

            objs = self._read(self.test.cluster) + list(self.raw().values())
            store = StateStore(self.profile)
            store.replace_all(stored_objects(objs, Context(self.profile, lint=False), self.policy))
            self._snapshot = store.publish()
        return self._snapshot

    def review(self, obj: dict[str, Any], endpoint: Literal["validate", "mutate"]) -> tuple[Any, Any]:
        config = AdmissionConfig(
            endpoint=endpoint, profile=self.profile, policy=self.policy, deadline_seconds=10.0
        )
        return review_with_info(_admission_review(obj), self.snapshot(), config)


def _under(source: str, paths: Iterable[str]) -> bool:
    here = os.path.normpath(source)
    return any(here == p or here.startswith(p.rstrip(os.sep) + os.sep) for p in map(os.path.normpath, paths))


def _object_key(obj: dict[str, Any]) -> tuple[str, str, str]:
    kind = obj.get("kind")
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns, name = meta.get("namespace"), meta.get("name")
    kind = kind if isinstance(kind, str) else ""
    namespace = "" if kind in CLUSTER_SCOPED else (ns if isinstance(ns, str) and ns else "default")
    return (kind, namespace, name if isinstance(name, str) else "")


def _objects_of(text: str, errors: list[YamlError] | None = None) -> list[dict[str, Any]]:
    """The objects of a YAML stream (the items of a List too); what is not an object is left out, and a
    document that is not YAML is added to `errors` when given."""
    out: list[dict[str, Any]] = []
    for d in load_documents(text):
        if isinstance(d, YamlError):
            if errors is not None:
                errors.append(d)
            continue
        if not isinstance(d.data, dict):
            continue
        items = d.data.get("items") if str(d.data.get("kind", "")).endswith("List") else None
        for obj in items if isinstance(items, list) else [d.data]:
            if isinstance(obj, dict) and isinstance(obj.get("kind"), str):
                out.append(obj)
    return out


def _admission_review(obj: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview of a dry-run CREATE of `obj`, as the API server sends it."""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    kind = str(obj.get("kind", ""))
    _, namespace, name = _object_key(obj)
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": _PLURALS.get(kind, kind.lower() + "s")}
    request: dict[str, Any] = {
        "uid": "draguard-test",
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": name,
        "operation": "CREATE",
        "userInfo": {"username": "draguard-test"},
        "object": deep_copy(obj),
        "oldObject": None,
        "dryRun": True,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    }
    if namespace:
        request["namespace"] = namespace
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


# -- the cases -----------------------------------------------------------------------------------


def _run_file(test: TestFile, options: TestOptions, profile: Profile) -> list[Case]:
    run = _Run(test, options, profile)
    cases: list[Case] = []
    for e in test.results:
        for ref, where in zip(e.resources, e.resource_fields, strict=True):
            obj = run.object(ref, where)
            if e.rule is not None and e.result is not None:
                if e.rule == ADMISSION_FEASIBILITY:
                    actual, detail = _admission_feasibility(run, ref)
                else:
                    actual, detail = _rule_result(run, e.rule, obj)
                cases.append(Case(ref.text, e.rule, e.result, actual, actual == e.result, e.line, detail))
            if e.patched is not None:
                cases.append(_patched(run, e, ref))
    return cases


def _shown(v: Violation) -> str:
    where = f"{v.field}: " if v.field else ""
    return f"{v.severity.value} {v.rule}: {where}{v.message}"


def _rule_result(run: _Run, rule: str, obj: ObjectResult) -> tuple[Expected, list[str]]:
    found = [v for v in obj.violations if v.rule == rule]
    if found:
        worst = min(found, key=lambda v: list(_RESULT).index(v.severity))
        return _RESULT[worst.severity], [_shown(v) for v in found]  # type: ignore[return-value]
    if any(v.rule == rule for v in obj.suppressed):
        return "skip", [f"silenced by the object's draguard.io/ignore annotation ({rule})"]
    if run.policy is not None and not run.policy.enabled(rule):
        return "skip", [f"the policy turns {rule} off"]
    kinds = RULES[rule].kinds
    if kinds and obj.kind not in kinds:
        return "skip", [f"{rule} does not apply to a {obj.kind} (only {', '.join(kinds)})"]
    if rule.startswith("feasibility.") and not run.decided:
        return "skip", [
            "feasibility not decided for every claim and Pod: give the devices (ResourceSlices and "
            "DeviceClasses) in resources or cluster"
        ]
    return "pass", []


def _admission_feasibility(run: _Run, ref: ResourceRef) -> tuple[Expected, list[str]]:
    kind, namespace, _ = ref.key
    mode = run.policy.feasibility.mode(kind, namespace)
    if kind not in RULES[ADMISSION_FEASIBILITY].kinds:
        return "skip", [f"{ADMISSION_FEASIBILITY} does not apply to a {kind}"]
    if mode == "off":
        return "skip", [f"feasibility mode off for {kind} in namespace {namespace}"]
    response, info = run.review(run.raw()[ref.key], "validate")
    answer = response["response"]
    said = [f"warning: {w}" for w in answer.get("warnings", [])]
    if not answer["allowed"]:
        said.insert(0, f"denied: {answer.get('status', {}).get('message', '')}")
    if info.verdict is None:
        return "skip", ["the webhook did not check feasibility", *said]
    if info.verdict in ("feasible", "skipped"):
        return "pass", [f"verdict {info.verdict} (mode {mode})"]
    if not answer["allowed"] and info.verdict == "unsatisfiable":
        return "fail", [f"verdict {info.verdict} (mode {mode})", *said]
    return "warn", [f"verdict {info.verdict} (mode {mode})", *said]


def _patched(run: _Run, e: Expectation, ref: ResourceRef) -> Case:
    assert e.patched is not None and e.patched_text is not None
    field_ = f"results[{e.index}].patchedResource"
    try:
        text = read_text(e.patched, run.options.max_bytes)
    except InputFileError as err:
        raise run.test.error(field_, str(err)) from None
    errors: list[YamlError] = []
    candidates = _objects_of(text, errors)
    expected = next((o for o in candidates if _object_key(o) == ref.key), None)
    if expected is None and len(candidates) == 1 and not errors:
        expected = candidates[0]
    if expected is None:
        if errors:  # the object may be in the document that does not parse: say where and why
            first = errors[0]
            raise run.test.error(
                field_, f"{e.patched}:{first.line}: not valid YAML: {first.message} (fix the file)"
            )
        raise run.test.error(field_, f"{e.patched_text} holds no {ref.text} (nor exactly one object)")
    obj = run.raw()[ref.key]
    response, _ = run.review(obj, "mutate")
    answer = response["response"]

    def case(actual: str, detail: list[str], ok: bool = False, diff: str = "") -> Case:
        return Case(ref.text, PATCHED, e.patched_text or "", actual, ok, e.line, detail, diff)

    if not answer["allowed"]:
        return case("denied", [f"denied: {answer.get('status', {}).get('message', '')}"])
    ops = json.loads(base64.b64decode(answer["patch"])) if answer.get("patch") else []
    try:
        patched = apply_ops(deep_copy(obj), ops)
    except PatchError as err:
        return case("patch-error", [f"the webhook's patch does not apply: {err}"])
    warnings = [f"warning: {w}" for w in answer.get("warnings", [])]
    actual = "patched" if ops else "not patched"
    if patched == expected:
        return case(actual, warnings, ok=True)
    return case(actual, warnings, diff=_diff(expected, patched, e.patched_text or ""))


def _diff(expected: Any, actual: Any, name: str) -> str:
    def text(doc: Any) -> list[str]:
        return yaml.safe_dump(doc, sort_keys=True, default_flow_style=False).splitlines(keepends=True)

    return "".join(difflib.unified_diff(text(expected), text(actual), f"expected ({name})", "actual", n=3))
