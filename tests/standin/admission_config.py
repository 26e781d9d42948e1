"""Webhook configurations as the stand-in's admission side reads them: the Validating/Mutating-
WebhookConfigurations among rendered YAML documents, checked as the API server validates them when they
are stored (what a rendered configuration can get wrong), their webhooks defaulted and in the order the API
server runs them, matchConditions compiled; and Service references resolved to local addresses."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.standin import admission_cel as cel
from tests.standin.admission_call import ServiceResolver
from tests.standin.admission_match import defaulted

KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


class ConfigError(ValueError):
    """A webhook configuration the API server would not store, or one the stand-in cannot play."""


@dataclass(frozen=True)
class Hook:
    configuration: str
    webhook: dict[str, Any]  # defaulted
    mutating: bool
    conditions: tuple[cel.Condition, ...]

    @property
    def name(self) -> str:
        return str(self.webhook["name"])


def documents(paths: Iterable[Path | str]) -> list[dict[str, Any]]:
    """Every YAML document of the files (`kubectl kustomize` output: many kinds; a List is opened)."""
    out: list[dict[str, Any]] = []
    for p in paths:
        for doc in yaml.safe_load_all(Path(p).read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "List":
                out.extend(d for d in doc.get("items") or [] if isinstance(d, dict))
            elif isinstance(doc, dict):
                out.append(doc)
    return out


def _check(webhook: dict[str, Any], where: str, mutating: bool) -> None:
    """The API server's validation of a stored webhook, as far as a rendered config can get it wrong."""
    name = webhook.get("name")
    if not isinstance(name, str) or name.count(".") < 2:
        raise ConfigError(
            f"{where}.name: Invalid value: {name!r}: should be a domain with at least three segments"
        )
    cc = webhook.get("clientConfig") or {}
    if bool(cc.get("url")) == bool(cc.get("service")):
        raise ConfigError(f"{where}.clientConfig: Required value: exactly one of url or service is required")
    if webhook.get("sideEffects") not in ("None", "NoneOnDryRun"):
        raise ConfigError(f"{where}.sideEffects: Unsupported value: {webhook.get('sideEffects')!r}")
    versions = [v for v in webhook.get("admissionReviewVersions") or [] if v in ("v1", "v1beta1")]
    if not versions:
        raise ConfigError(
            f"{where}.admissionReviewVersions: Invalid value: must include at least one of v1, v1beta1"
        )
    if versions[0] != "v1":
        raise ConfigError(f"{where}.admissionReviewVersions: the stand-in sends AdmissionReview v1 only")
    if not 1 <= int(webhook.get("timeoutSeconds", 10)) <= 30:
        raise ConfigError(
            f"{where}.timeoutSeconds: Invalid value: the timeout value must be between 1 and 30 seconds"
        )
    if webhook.get("failurePolicy", "Fail") not in ("Fail", "Ignore"):
        raise ConfigError(f"{where}.failurePolicy: Unsupported value: {webhook.get('failurePolicy')!r}")
    if webhook.get("matchPolicy", "Equivalent") not in ("Exact", "Equivalent"):
        raise ConfigError(f"{where}.matchPolicy: Unsupported value: {webhook.get('matchPolicy')!r}")
    if mutating and webhook.get("reinvocationPolicy", "Never") not in ("Never", "IfNeeded"):
        raise ConfigError(
            f"{where}.reinvocationPolicy: Unsupported value: {webhook.get('reinvocationPolicy')!r}"
        )
    for j, rule in enumerate(webhook.get("rules") or []):
        for op in rule.get("operations") or []:
            if op not in ("*", "CREATE", "UPDATE", "DELETE", "CONNECT"):
                raise ConfigError(f"{where}.rules[{j}].operations: Unsupported value: {op!r}")
        if rule.get("scope", "*") not in ("*", "Cluster", "Namespaced"):
            raise ConfigError(f"{where}.rules[{j}].scope: Unsupported value: {rule.get('scope')!r}")


def hooks(docs: Iterable[dict[str, Any]]) -> tuple[list[Hook], list[Hook]]:
    """(mutating, validating) webhooks of the configurations among `docs`, in the order the API server
    runs them: configurations sorted by name, webhooks in list order. Raises ConfigError."""
    configs = [
        d for d in docs if d.get("kind") in KINDS and d.get("apiVersion") == "admissionregistration.k8s.io/v1"
    ]
    out: tuple[list[Hook], list[Hook]] = ([], [])
    for cfg in sorted(configs, key=lambda c: (c["kind"], c["metadata"]["name"])):
        mutating = cfg["kind"] == "MutatingWebhookConfiguration"
        cname = cfg["metadata"]["name"]
        seen: set[str] = set()
        for i, w in enumerate(cfg.get("webhooks") or []):
            where = f"{cfg['kind']} {cname}: webhooks[{i}]"
            _check(w, where, mutating)
            if w["name"] in seen:
                raise ConfigError(f"{where}.name: Duplicate value: {w['name']!r}")
            seen.add(w["name"])
            try:
                conditions = cel.compile_conditions(w.get("matchConditions"))
            except cel.ConditionError as e:
                raise ConfigError(f"{where}.{e}") from None
            out[0 if mutating else 1].append(Hook(cname, defaulted(w, mutating), mutating, tuple(conditions)))
    return out


def service_resolver(services: dict[str, str]) -> ServiceResolver:
    """`{"ns/name": "host:port"}` (or `"ns/name:443"` for one port of the Service) → a resolver."""

    def resolve(namespace: str, name: str, port: int) -> tuple[str, int] | None:
        address = services.get(f"{namespace}/{name}:{port}") or services.get(f"{namespace}/{name}")
        if not address:
            return None
        host, _, p = address.rpartition(":")
        return host, int(p)

    return resolve
