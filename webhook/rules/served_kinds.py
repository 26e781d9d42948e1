"""A kind the target version does not serve (its feature gate off): the API server rejects the object."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from webhook.apiserver.skew import gate_text
from webhook.config.context import Context
from webhook.model.path import Path
from webhook.model.violation import Finding
from webhook.rules.registry import object_rule


@object_rule("skew.kind-disabled")
def kind_disabled(obj: dict[str, Any], ctx: Context) -> Iterator[Finding]:
    gate = "DRADeviceTaintRules"
    if ctx.profile.known(gate) and not ctx.enabled(gate):
        yield Finding(
            Path("kind"),
            f"Forbidden: the DeviceTaintRule API is not served: feature gate {gate_text(gate, ctx)}; "
            "the API server rejects this object (enable the gate on kube-apiserver and kube-scheduler)",
        )
