"""Policy test files (`draguard test`), read strictly: every problem is a `TestFileError` naming the file,
the line and the field path, with what to do (a did-you-mean for a misspelt field or rule id).

    apiVersion: cli.draguard.io/v1alpha1
    kind: Test
    metadata: {name: gpu-limits}
    policies: [policy.yaml]            # DraguardPolicy objects or a plain policy file; none: the defaults
    resources: [resources.yaml]        # the objects under test (files or directories)
    cluster: [cluster/]                # optional: the cluster they meet, as `validate --cluster`
    results:
    - resource: ResourceClaim/team-a/big        # Kind/namespace/name, or Kind/name (cluster-scoped kinds,
      rule: feasibility.infeasible              #   or the namespace `default`); `resources: [...]` for several
      result: fail                              # pass | fail | warn | info | skip
    - resource: ResourceClaim/team-a/small
      patchedResource: patched.yaml             # the object after the mutating webhook (compared whole)

Paths are relative to the test file. Files are found by name (`draguard-test.yaml`, `*.draguard-test.yaml`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from webhook.config.fields import FieldError, Reader, required, unsupported
from webhook.io.fieldlines import locate
from webhook.io.files import InputFileError, UnreadableInput, read_text
from webhook.io.yamlload import RawDocument, YamlError, load_documents
from webhook.model.didyoumean import closest
from webhook.model.errors import UsageError
from webhook.model.path import Path

API_VERSION = "cli.draguard.io/v1alpha1"
KIND = "Test"
FILE_NAME = "draguard-test.yaml"
FILE_SUFFIX = ".draguard-test.yaml"
MAX_TEST_BYTES = 1 << 20
MAX_ITEMS = 1000
MAX_SHOWN = 20

Expected = Literal["pass", "fail", "warn", "info", "skip"]
EXPECTED: tuple[Expected, ...] = get_args(Expected)
FIELDS = ("apiVersion", "kind", "metadata", "policies", "resources", "cluster", "results")
RESULT_FIELDS = ("resource", "resources", "rule", "result", "patchedResource")
# kinds whose objects have no namespace: `Kind/name` names them (webhook.offline.run.CLUSTER_SCOPED)
CLUSTER_SCOPED = frozenset({"ResourceSlice", "DeviceClass", "DeviceTaintRule", "Node", "Namespace"})


class TestFileError(UsageError):
    """A test file that cannot be run as written (exit 2): every problem as `file:line: field: what`."""

    __test__ = False  # not a pytest class

    def __init__(self, path: str, problems: Sequence[str]) -> None:
        self.path = path
        self.problems = list(problems)
        shown = self.problems[:MAX_SHOWN]
        more = len(self.problems) - len(shown)
        tail = f"\n  ... and {more} more" if more > 0 else ""
        head = f"{path}: {len(self.problems)} error(s); the test is not run:\n  "
        super().__init__(head + "\n  ".join(shown) + tail)


@dataclass(frozen=True)
class ResourceRef:
    """`Kind/namespace/name` or `Kind/name` as written, and the object it names."""

    text: str
    kind: str
    namespace: str  # "" for a cluster-scoped kind
    name: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)


@dataclass(frozen=True)
class Expectation:
    """One entry of `results`: for each resource, the rule's result and/or the patched object."""

    index: int  # in `results`
    line: int
    resources: tuple[ResourceRef, ...]
    resource_fields: tuple[
        str, ...
    ]  # where each is written: `results[0].resource`, `results[1].resources[2]`
    rule: str | None
    result: Expected | None
    patched: str | None  # the file, resolved
    patched_text: str | None  # as written


@dataclass(frozen=True)
class TestFile:
    __test__ = False  # not a pytest class

    path: str
    name: str
    policies: tuple[str, ...]  # resolved against the file's directory
    resources: tuple[str, ...]
    cluster: tuple[str, ...]
    results: tuple[Expectation, ...]
    text: str
    doc_line: int
    lines: Mapping[str, int]  # field path -> line, for the errors found while running

    def line_of(self, field: str) -> int:
        """The line of `field`, else of the nearest enclosing field located (`results[3]` for
        `results[3].patchedResource`), else of the document."""
        while field:
            if field in self.lines:
                return self.lines[field]
            cut = max(field.rfind("."), field.rfind("["))
            field = field[:cut] if cut > 0 else ""
        return self.doc_line

    def error(self, field: str, message: str) -> TestFileError:
        """A problem found while running (a resource not among the objects, a bad policy)."""
        return TestFileError(self.path, [f"{self.path}:{self.line_of(field)}: {field}: {message}"])


def is_test_file(name: str) -> bool:
    return name == FILE_NAME or name.endswith(FILE_SUFFIX)


def discover_tests(paths: Iterable[str]) -> list[str]:
    """The test files under `paths`: a file is taken as given, a directory is walked (sorted; hidden and
    symlinked directories are not entered) for files named as test files. A path that does not exist is
    a usage error."""
    found: list[str] = []
    for top in paths:
        if os.path.isfile(top):
            found.append(top)
            continue
        if not os.path.isdir(top):
            raise UsageError(f"{top}: no such file or directory")
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(
                d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(root, d))
            )
            found.extend(os.path.join(root, f) for f in sorted(files) if is_test_file(f))
    return list(dict.fromkeys(found))


def parse_resource(text: str) -> ResourceRef | str:
    """`Kind/ns/name` or `Kind/name` → the reference, or why it is none."""
    parts = text.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        return f"Invalid value: {text!r}: expected Kind/namespace/name or Kind/name"
    if len(parts) == 3:
        kind, namespace, name = parts
        if kind in CLUSTER_SCOPED:
            return f"Invalid value: {text!r}: a {kind} has no namespace: write {kind}/{name}"
        return ResourceRef(text, kind, namespace, name)
    kind, name = parts
    return ResourceRef(text, kind, "" if kind in CLUSTER_SCOPED else "default", name)


def load_test_file(path: str, known_rules: Iterable[str]) -> TestFile:
    """The test file at `path`, checked whole (fields, types, rule ids, the files it names exist)."""
    try:
        text = read_text(path, MAX_TEST_BYTES)
    except InputFileError as e:
        raise TestFileError(path, [f"{path}:1: {e}"]) from e
    except UnreadableInput as e:
        raise TestFileError(path, [f"{path}:1: {e}"]) from e
    docs: list[RawDocument] = []
    for d in load_documents(text):
        if isinstance(d, YamlError):
            raise TestFileError(path, [f"{path}:{d.line}: not valid YAML: {d.message}"])
        if d.data is not None:
            docs.append(d)
    if len(docs) != 1:
        line = docs[1].line if len(docs) > 1 else 1
        raise TestFileError(
            path, [f"{path}:{line}: one YAML document (a {KIND}) expected, found {len(docs)}"]
        )
    doc = docs[0]
    parser = _Parser(path, os.path.dirname(path), frozenset(known_rules))
    test = parser.read(doc.data)
    for issue in doc.issues:
        parser.r.add(FieldError(issue.path, issue.message))
    fields = [e.field for e in parser.r.errors] + list(parser.wanted)
    lines = locate(text, doc.line, [f for f in fields if f])
    if parser.r.errors or test is None:
        raise TestFileError(path, [f"{path}:{lines.get(e.field, doc.line)}: {e}" for e in parser.r.errors])
    name, policies, resources, cluster, results = test
    located = tuple(
        Expectation(
            e.index,
            lines.get(f"results[{e.index}]", doc.line),
            e.resources,
            e.resource_fields,
            e.rule,
            e.result,
            e.patched,
            e.patched_text,
        )
        for e in results
    )
    return TestFile(path, name, policies, resources, cluster, located, text, doc.line, lines)


class _Parser:
    def __init__(self, path: str, base: str, known_rules: frozenset[str]) -> None:
        self.path = path
        self.base = base
        self.known_rules = known_rules
        self.r = Reader()
        self.wanted: list[str] = []  # field paths whose lines the run may need

    def read(
        self, data: Any
    ) -> tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], list[Expectation]] | None:
        r, root = self.r, Path()
        top = r.mapping(data, root, FIELDS, need=("apiVersion", "kind", "resources", "results"))
        if top is None:
            if data is not None and not isinstance(data, dict):
                return None
            r.add(required(root.child("results")))
            return None
        api_version = top.get("apiVersion")
        if api_version is not None and api_version != API_VERSION:
            r.add(unsupported(root.child("apiVersion"), api_version, (API_VERSION,)))
        kind = top.get("kind")
        if kind is not None and kind != KIND:
            r.add(unsupported(root.child("kind"), kind, (KIND,)))
        meta = r.mapping(top.get("metadata"), root.child("metadata"), ("name",))
        name = r.string((meta or {}).get("name"), root.child("metadata", "name")) or ""
        policies = self._files(top.get("policies"), root.child("policies"))
        resources = self._files(top.get("resources"), root.child("resources"))
        cluster = self._files(top.get("cluster"), root.child("cluster"))
        if isinstance(top.get("resources"), list) and not top["resources"]:
            r.add(required(root.child("resources"), "name at least one file of objects under test"))
        results = self._results(top.get("results"), root.child("results"))
        return name, tuple(policies), tuple(resources), tuple(cluster), results

    def _files(self, value: Any, path: Path) -> list[str]:
        listed = self.r.listing(value, path, MAX_ITEMS) or []
        out = []
        for i, item in enumerate(listed):
            text = self.r.string(item, path.index(i))
            if text is None:
                continue
            resolved = self._exists(text, path.index(i))
            if resolved is not None:
                out.append(resolved)
            self.wanted.append(str(path.index(i)))
        return out

    def _exists(self, text: str, path: Path) -> str | None:
        resolved = os.path.normpath(os.path.join(self.base, text))
        if not os.path.exists(resolved):
            self.r.add(
                FieldError(str(path), f"Not found: {text!r}: no such file or directory ({resolved}; paths are "
                           "relative to the test file)", "InvalidValue")
            )  # fmt: skip
            return None
        return resolved

    def _results(self, value: Any, path: Path) -> list[Expectation]:
        listed = self.r.listing(value, path, MAX_ITEMS)
        if listed is None:
            return []
        if not listed:
            self.r.add(required(path, "expect at least one result"))
        out = []
        for i, item in enumerate(listed):
            e = self._result(item, path.index(i), i)
            if e is not None:
                out.append(e)
        return out

    def _result(self, data: Any, path: Path, index: int) -> Expectation | None:
        r = self.r
        before = len(r.errors)
        entry = r.mapping(data, path, RESULT_FIELDS)
        if entry is None:
            if data is None:
                r.add(required(path))
            return None
        self.wanted.append(str(path))
        refs: list[tuple[ResourceRef, str]] = []
        several = "resources" in entry
        if several and "resource" in entry:
            r.add(FieldError(str(path.child("resources")), "Forbidden: give resource or resources, not both"))
        elif several:
            listed = r.listing(entry.get("resources"), path.child("resources"), MAX_ITEMS) or []
            if not listed and isinstance(entry.get("resources"), list):
                r.add(required(path.child("resources"), "name at least one object"))
            for i, item in enumerate(listed):
                refs += self._ref(item, path.child("resources").index(i))
        elif entry.get("resource") is None:
            r.add(required(path.child("resource"), "the object under test: Kind/namespace/name or Kind/name"))
        else:
            refs += self._ref(entry["resource"], path.child("resource"))
        rule = r.string(entry.get("rule"), path.child("rule"))
        if rule is not None and rule not in self.known_rules:
            near = closest(rule, self.known_rules)
            hint = f" (did you mean {near!r}?)" if near else " (`draguard rules` lists them)"
            r.add(
                FieldError(
                    str(path.child("rule")),
                    f"Unsupported value: {rule!r}: no such rule id{hint}",
                    "UnknownRule",
                )
            )
        result = r.choice(entry.get("result"), path.child("result"), EXPECTED)
        if (entry.get("rule") is None) != (entry.get("result") is None):
            missing = "result" if entry.get("result") is None else "rule"
            r.add(required(path.child(missing), "rule and result go together"))
        patched_text = r.string(entry.get("patchedResource"), path.child("patchedResource"))
        patched = self._exists(patched_text, path.child("patchedResource")) if patched_text else None
        if entry.get("rule") is None and entry.get("patchedResource") is None:
            r.add(
                required(
                    path.child("rule"), "expect a rule's result (rule, result), a patchedResource, or both"
                )
            )
        if len(r.errors) > before:
            return None
        return Expectation(
            index,
            0,
            tuple(ref for ref, _ in refs),
            tuple(f for _, f in refs),
            rule,
            result,
            patched,
            patched_text,
        )

    def _ref(self, value: Any, path: Path) -> list[tuple[ResourceRef, str]]:
        text = self.r.string(value, path)
        if text is None:
            return []
        ref = parse_resource(text)
        if isinstance(ref, str):
            self.r.add(FieldError(str(path), ref))
            return []
        self.wanted.append(str(path))
        return [(ref, str(path))]
