"""Reading a policy file (`--policy`): bounded, UTF-8, YAML through the bounded loader; every problem is a
usage error that names the file and line (and, for DraguardPolicy objects, the field path).

Two formats, told apart by their documents: DraguardPolicy objects (`apiVersion: draguard.io/v1alpha1`,
one or more documents, or a `List` of them as `kubectl get draguardpolicies -o yaml` writes it), or the
plain policy file (one document of `rules:` and `feasibility:`, `webhook.config.filepolicy`). Several
objects combine as they do in a cluster (`webhook.config.policy.combine`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webhook.config.fields import FieldError
from webhook.config.filepolicy import spec_from_data
from webhook.config.policy import Policy, PolicySpec, combine
from webhook.config.policyobject import API_VERSION, KIND, check_policy_object, is_policy_object, policy_name
from webhook.config.profile import DEFAULT_VERSION, Profile, load_profile
from webhook.io.fieldlines import locate
from webhook.io.files import InputFileError, UnreadableInput, read_text
from webhook.io.yamlload import RawDocument, YamlError, load_documents
from webhook.model.errors import UsageError

MAX_POLICY_BYTES = 1 << 20
MAX_SHOWN = 20  # errors listed; the rest are counted


def load_policy(path: str, known_rules: Mapping[str, Any], profile: Profile | None = None) -> Policy:
    """The policy a file sets (either format; several objects combined). Not readable, not a regular
    file, over 1 MiB, not UTF-8, not valid YAML, or anything invalid in it is a usage error naming the
    file. `profile` (default: the latest version's) decides which CEL features a tenant's selector may use."""
    return combine(load_policy_specs(path, known_rules, profile))


def load_policy_specs(
    path: str, known_rules: Mapping[str, Any], profile: Profile | None = None
) -> list[PolicySpec]:
    """What each policy of the file sets (one for a plain policy file)."""
    try:
        text = read_text(path, MAX_POLICY_BYTES)
    except InputFileError as e:
        raise UsageError(f"--policy {path}: {e}") from e
    except UnreadableInput as e:
        raise UsageError(f"--policy {e}") from e
    docs: list[RawDocument] = []
    for d in load_documents(text):
        if isinstance(d, YamlError):
            raise UsageError(f"--policy {path}:{d.line}: not valid YAML: {d.message}")
        if d.data is not None:
            docs.append(d)
    if any(_holds_policies(d.data) for d in docs):
        return _object_specs(text, docs, path, known_rules, profile or load_profile(DEFAULT_VERSION))
    for d in docs:
        if isinstance(d.data, dict) and ("apiVersion" in d.data or "kind" in d.data):
            raise UsageError(
                f"--policy {path}:{d.line}: a {d.data.get('kind')!s} ({d.data.get('apiVersion')!s}) is no "
                f"policy: expected {KIND} objects (apiVersion: {API_VERSION}) or a plain policy file "
                "(`rules:`, `feasibility:`)"
            )
    if len(docs) > 1:
        raise UsageError(f"--policy {path}:{docs[1].line}: one YAML document expected, found {len(docs)}")
    return [spec_from_data(docs[0].data if docs else {}, path, known_rules)]


def _holds_policies(data: Any) -> bool:
    if is_policy_object(data):
        return True
    items = data.get("items") if isinstance(data, dict) and data.get("kind") == "List" else None
    return isinstance(items, list) and any(is_policy_object(i) for i in items)


def _objects(doc: RawDocument) -> list[tuple[str, Any]]:
    """(path prefix, object) of a document: itself, or the items of a List."""
    data = doc.data
    if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
        return [(f"items[{i}].", item) for i, item in enumerate(data["items"])]
    return [("", data)]


def _object_specs(
    text: str, docs: list[RawDocument], path: str, known_rules: Mapping[str, Any], profile: Profile
) -> list[PolicySpec]:
    specs: list[PolicySpec] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for doc in docs:
        for issue in doc.issues:  # the API server's strict decoding refuses a repeated field
            problems.append(f"{path}:{issue.line}: {issue.path}: {issue.message}")
        for prefix, obj in _objects(doc):
            name = policy_name(obj) if isinstance(obj, dict) else ""
            what = f"{KIND} {name}" if name else "document"
            if not is_policy_object(obj):
                kind = obj.get("kind") if isinstance(obj, dict) else None
                problems.append(
                    f"{path}:{_line(text, doc, prefix, '')}: {prefix}{kind or 'a document'} is not a {KIND} "
                    f"(apiVersion: {API_VERSION}): a file holds DraguardPolicy objects or a plain policy, not both"
                )
                continue
            result = check_policy_object(obj, known_rules, profile)
            if isinstance(result, list):
                problems.extend(_located(text, doc, prefix, path, what, result))
                continue
            if name in seen:
                line = _line(text, doc, prefix, "metadata.name")
                problems.append(
                    f"{path}:{line}: {what}: metadata.name: Duplicate value: {name!r} (also line {seen[name]})"
                )
                continue
            seen[name] = _line(text, doc, prefix, "metadata.name")
            specs.append(result)
    if problems:
        shown = problems[:MAX_SHOWN]
        more = f"\n  ... and {len(problems) - MAX_SHOWN} more" if len(problems) > MAX_SHOWN else ""
        raise UsageError(
            f"--policy {path}: {len(problems)} error(s); the policy is not used:\n  "
            + "\n  ".join(shown)
            + more
        )
    return specs


def _line(text: str, doc: RawDocument, prefix: str, field: str) -> int:
    lines = locate(text, doc.line, [field or "metadata"], prefix)
    return lines.get(field or "metadata", doc.line)


def _located(
    text: str, doc: RawDocument, prefix: str, path: str, what: str, errors: list[FieldError]
) -> list[str]:
    lines = locate(text, doc.line, [e.field for e in errors if e.field], prefix)
    return [f"{path}:{lines.get(e.field, doc.line)}: {what}: {e}" for e in errors]
