"""`AdmissionConfig`: everything `review()` needs besides the request and the cluster snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webhook.admission.extended import MODES, default_mode
from webhook.admission.templates_writer import TemplateWriter
from webhook.admission.wire import Endpoint, FailureMode
from webhook.config.context import Context
from webhook.config.driverschemas import NONE as NO_EXTRA_SCHEMAS
from webhook.config.driverschemas import DriverSchemas, with_extra
from webhook.config.policy import Policy
from webhook.config.profile import DEFAULT_VERSION, Profile, load_profile
from webhook.model.budget import Budget, Deadline, check_seconds

ENDPOINTS = ("validate", "mutate")
FAILURE_MODES = ("open", "closed")


def _default_profile() -> Profile:
    return load_profile(DEFAULT_VERSION)


@dataclass(frozen=True)
class AdmissionConfig:
    """How one endpoint answers.

    - `endpoint`: "validate" (rules, cross-object invariants, feasibility) or "mutate" (version-skew
      stripping as a JSON Patch).
    - `profile`: target Kubernetes version and feature gates; `policy`: rule severities and the
      feasibility modes per kind and namespace.
    - `deadline_seconds`: each request's own deadline (the server may pass an earlier one from the
      API server's `?timeout=`); keep it well below the webhook's `timeoutSeconds` (default 10 s).
    - `feasibility_budget`: steps and seconds of one allocator run (a request may run two: now, and on
      the empty cluster); the request deadline bounds them too, minus `reserve_seconds` for the answer.
    - `failure_mode`: on an internal error, "open" admits with a warning, "closed" denies (500).
    - `max_warnings` / `max_warning_chars`: caps of `response.warnings` (see `response.cap_warnings`).
    - `extended_resources`: `native` (check the DeviceClass mapping of a Pod's extended resources),
      `translate` (rewrite them into ResourceClaims on the mutating endpoint) or `off`; None: `native`
      when the profile's DRAExtendedResource gate is on, else `off` (see `webhook.admission.extended`).
    - `templates`: the writer of the ResourceClaimTemplates `translate` refers Pods to (required by the
      mutating endpoint in that mode; `webhook.admission.templates_writer`).
    """

    endpoint: Endpoint = "validate"
    profile: Profile = field(default_factory=_default_profile)
    policy: Policy = field(default_factory=Policy)  # None is taken as the default policy
    deadline_seconds: float = 2.0
    feasibility_budget: Budget = field(default_factory=lambda: Budget(steps=100_000, seconds=0.75))
    reserve_seconds: float = 0.05
    failure_mode: FailureMode = "open"
    max_warnings: int = 20
    max_warning_chars: int = 4096
    extended_resources: str | None = None
    templates: TemplateWriter | None = None

    def __post_init__(self) -> None:
        if self.policy is None:
            object.__setattr__(self, "policy", Policy())
        if self.extended_resources is None:
            object.__setattr__(self, "extended_resources", default_mode(self.profile))
        if self.extended_resources not in MODES:
            raise ValueError(
                f"extended_resources must be one of {', '.join(MODES)}, not {self.extended_resources!r}"
            )
        if self.extended_resources == "translate" and self.endpoint == "mutate" and self.templates is None:
            raise ValueError("extended_resources translate needs a template writer on the mutating endpoint")
        if self.endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {', '.join(ENDPOINTS)}, not {self.endpoint!r}")
        if self.failure_mode not in FAILURE_MODES:
            raise ValueError(
                f"failure_mode must be one of {', '.join(FAILURE_MODES)}, not {self.failure_mode!r}"
            )
        check_seconds(self.deadline_seconds, "deadline seconds")
        check_seconds(self.reserve_seconds, "reserve seconds")
        if self.max_warnings < 1 or self.max_warning_chars < 256:
            raise ValueError("max_warnings must be >= 1 and max_warning_chars >= 256")

    @property
    def driver_schemas(self) -> DriverSchemas:
        """The driver configuration schemas in force: the bundled ones and the policy's."""
        return with_extra(NO_EXTRA_SCHEMAS, self.policy.driver_schemas)

    def context(
        self,
        old: dict[str, Any] | None = None,
        operation: str = "CREATE",
        namespace_labels: Mapping[str, str] | None = None,
        deadline: Deadline | None = None,
    ) -> Context:
        """A rule context as the webhook runs rules: permissive where upstream enforcement is unconfirmed;
        the namespace's labels when the state holds the Namespace (None: unknown, those rules skip)."""
        return Context(
            profile=self.profile,
            old=old,
            operation=operation,
            lint=False,
            namespace_labels=namespace_labels,
            deadline=deadline,
            driver_schemas=self.driver_schemas,
        )
