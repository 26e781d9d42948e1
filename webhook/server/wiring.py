"""Where the server meets the state store and the admission core (docs/webhook.md): built here, once."""

from __future__ import annotations

from webhook.admission import AdmissionConfig, BadReview, ReviewInfo, review_with_info
from webhook.admission.wire import Endpoint
from webhook.config.policy import Policy, PolicySpec, combine
from webhook.config.profile import Profile, load_profile
from webhook.model.budget import Budget
from webhook.server.options import ServeOptions
from webhook.state.store import StateStore

__all__ = [
    "BadReview",
    "ReviewInfo",
    "load_serve_policy",
    "load_serve_policy_specs",
    "make_config",
    "make_store",
    "review_with_info",
    "serve_profile",
]


def serve_profile(options: ServeOptions) -> Profile:
    return load_profile(options.k8s_version, dict(options.feature_gates))


def load_serve_policy_specs(options: ServeOptions) -> list[PolicySpec]:
    """What the policy file sets, per policy in it, and the `--driver-schemas` directory's schemas as one
    more (UsageError when either is unreadable or invalid)."""
    specs: list[PolicySpec] = []
    if options.policy:
        from webhook.config.policyfile import load_policy_specs
        from webhook.model.catalogue import RULES

        specs = load_policy_specs(options.policy, RULES, serve_profile(options))
    if options.driver_schemas:
        from webhook.config.driverschemas import load_dir

        specs.append(PolicySpec(driver_schemas=load_dir(options.driver_schemas)))
    return specs


def load_serve_policy(options: ServeOptions) -> Policy | None:
    """The policy file's policy (UsageError when it is unreadable or invalid); None without one."""
    return combine(load_serve_policy_specs(options)) if options.policy or options.driver_schemas else None


def make_config(
    options: ServeOptions, endpoint: Endpoint, profile: Profile, policy: Policy | None
) -> AdmissionConfig:
    templates = None
    if options.extended_resources == "translate" and endpoint == "mutate":
        from webhook.admission.templates_writer import ApiTemplateWriter
        from webhook.state.live.client import load_api_client

        kubeconfig = options.kubeconfig  # None: in-cluster, else $KUBECONFIG (as the live state)
        templates = ApiTemplateWriter(
            lambda: load_api_client(kubeconfig), field_manager=options.field_manager
        )
    return AdmissionConfig(
        endpoint=endpoint,
        profile=profile,
        policy=policy if policy is not None else Policy(),
        deadline_seconds=options.deadline_seconds,
        feasibility_budget=Budget(steps=options.budget_steps, seconds=options.budget_seconds),
        failure_mode=options.failure_mode,
        extended_resources=options.extended_resources,
        templates=templates,
    )


def make_store(profile: Profile) -> StateStore:
    """This process's store: written by its loader thread only, read through `snapshot()`."""
    return StateStore(profile, where="the state directory")
