"""Where a simulation's findings go: the input object (a claim, a Pod, or the workload whose Pod template
the Pod comes from) and the field path in it of each request or Pod claim entry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webhook.model.path import Path
from webhook.model.workloads import prefixed
from webhook.simulate.podclaims import key_of


@dataclass
class Subject:
    """An input object a feasibility finding is reported on, and where in it each request lives."""

    source: str
    line: int
    kind: str
    namespace: str | None
    name: str | None
    claim: str = ""  # "ns/name" of the claim as the engine names it ("" for the Pod itself)
    requests: dict[str, str] = field(default_factory=dict)  # request name → field path
    path: str = ""  # where to report when no request is named
    message: str = ""  # what is wrong at `path` itself (else the Pod's reason)


@dataclass(frozen=True)
class Origin:
    """The input object a simulated Pod comes from: the Pod itself (`prefix` ""), or a workload whose
    Pod template (at `prefix`, e.g. `spec.template`) made it. Pod paths become paths in that object."""

    source: str
    line: int
    kind: str
    namespace: str
    name: str
    prefix: str = ""

    def at(self, path: str) -> str:
        """A path in the Pod as a path in this object (the Pod itself: the template, for a workload)."""
        return prefixed(self.prefix, path) if self.prefix else path

    def subject(
        self, claim: str = "", requests: dict[str, str] | None = None, path: str = "", message: str = ""
    ) -> Subject:
        paths = {r: self.at(p) for r, p in (requests or {}).items()}
        return Subject(
            self.source, self.line, self.kind, self.namespace, self.name, claim, paths, self.at(path), message
        )


def claim_key(claim: dict[str, Any]) -> str:
    ns, name = key_of(claim)
    return f"{ns}/{name}"


def request_paths(claim: dict[str, Any]) -> dict[str, str]:
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
    base = Path("spec").child("devices").child("requests")
    return {r.get("name", ""): str(base.index(i)) for i, r in enumerate(requests) if isinstance(r, dict)}


def claim_subject(source: str, line: int, claim: dict[str, Any]) -> Subject:
    """A ResourceClaim of the input, its requests at `spec.devices.requests[i]`."""
    ns, name = key_of(claim)
    return Subject(
        source, line, "ResourceClaim", ns, name, f"{ns}/{name}", request_paths(claim), "spec.devices.requests"
    )
