"""What a rule may know besides the object: the target profile (version + feature gates), the old
object on updates, in the webhook the namespace's labels, the API server's `--runtime-config` (which
resource.k8s.io versions it serves), and the deadline of the run or request (costly rules call
`ctx.check_deadline()` between units of work: selector compilations); offline, whether the input is the
whole cluster and what the run's objects hold for the lint rules; and how the objects were written (the
API server's field validation: Strict manifests, Warn stored state)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from webhook.config.driverschemas import NONE as NO_EXTRA_SCHEMAS
from webhook.config.driverschemas import DriverSchemas
from webhook.config.profile import Profile, load_profile
from webhook.convert.served import DEFAULT as DEFAULT_RUNTIME_CONFIG
from webhook.convert.served import RuntimeConfig
from webhook.model.budget import Deadline

# How an object was written to the API server (its `fieldValidation`): "Strict" rejects an unknown or
# duplicate field (kubectl's default: manifests), "Warn" drops an unknown field with a warning and stores
# the object (the API server's default: client-go, so drivers' ResourceSlices; stored state).
FieldValidation = Literal["Strict", "Warn"]

# The kinds `simulate` takes as the cluster (besides Nodes); a ResourceClaim is the cluster's once allocated.
CLUSTER_KINDS = frozenset({"ResourceSlice", "DeviceClass", "DeviceTaintRule"})


@dataclass
class Context:
    profile: Profile = field(default_factory=lambda: load_profile("1.37"))
    old: dict[str, Any] | None = None  # the stored object on UPDATE; None on CREATE / offline
    namespace_labels: Mapping[str, str] | None = None  # None = unknown (offline): namespace rules skip
    operation: str = "CREATE"  # "CREATE" | "UPDATE" (a status write is an UPDATE: status is validated)
    # Objects read back from a cluster (simulate's state input): their status is what the cluster stored,
    # kept and validated. False (manifests, admission CREATE): status is reset on CREATE and not validated.
    as_stored: bool = False
    lint: bool = True  # offline: strict where upstream enforcement is unconfirmed; webhook: permissive
    deadline: Deadline | None = None  # of the run or request: validation stops when it passes
    runtime_config: RuntimeConfig = DEFAULT_RUNTIME_CONFIG  # default: v1 served, beta/alpha versions off
    # offline: the input holds the whole cluster (`--cluster DIR`), so a reference to an object it
    # lacks is a real problem, not an object kept elsewhere
    whole_cluster: bool = False
    facts: Any = (
        None  # offline cross-object rules: what the run's objects hold (webhook.rules.facts.RunFacts)
    )
    # "Warn": the input is stored state (`--cluster`, `serve --state`: webhook.validate.clusterinput.stored_context)
    field_validation: FieldValidation = "Strict"
    # the driver configuration schemas in force: the bundled ones, and what --driver-schemas or the policy adds
    driver_schemas: DriverSchemas = NO_EXTRA_SCHEMAS

    def field_validation_of(self, obj: dict[str, Any]) -> FieldValidation:
        """How `obj` was written: "Warn" for stored state, and for the cluster's objects of an input read
        as stored (`as_stored`: simulate's slices, classes, taint rules and allocated claims — a driver
        or a controller wrote them with client-go); "Strict" for manifests a person applies."""
        if self.field_validation == "Warn":
            return "Warn"
        if self.as_stored and _cluster_object(obj):
            return "Warn"
        return "Strict"

    def check_deadline(self) -> None:
        """Raise `DeadlinePassed` if the deadline has passed (no deadline: never)."""
        if self.deadline is not None:
            self.deadline.check()

    def enabled(self, gate: str) -> bool:
        """Whether a feature gate is on in the target profile."""
        return self.profile.enabled(gate)


def _cluster_object(obj: dict[str, Any]) -> bool:
    kind = obj.get("kind")
    if kind in CLUSTER_KINDS:
        return True
    status = obj.get("status")
    return kind == "ResourceClaim" and isinstance(status, dict) and bool(status.get("allocation"))
