"""What `allocate()` returns: per-device results, per-claim allocations, the overall outcome, budgets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from webhook.model.budget import Budget, Deadline

__all__ = ["Budget", "ClaimResult", "Deadline", "DeviceResult", "ErrorKind", "Outcome"]

# What an allocation error is about: the claim itself (`invalid`: a CEL runtime error, a disabled
# feature), or the cluster at this moment (`waits`: its DeviceClass does not exist yet, a pool is being
# republished), which ends when the cluster changes, not the claim.
ErrorKind = Literal["invalid", "waits"]


@dataclass
class DeviceResult:
    """One entry of status.allocation.devices.results."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    consumed_capacity: dict[str, str] | None = None  # quantities as canonical strings
    share_id: str | None = None
    tolerations: list[dict[str, Any]] | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None
    skip_node_operations: list[str] | None = None

    def to_api(self) -> dict[str, Any]:
        """The result as the API server stores it (unset fields omitted)."""
        out: dict[str, Any] = {
            "request": self.request,
            "driver": self.driver,
            "pool": self.pool,
            "device": self.device,
        }
        if self.admin_access is not None:
            out["adminAccess"] = self.admin_access
        if self.tolerations:
            out["tolerations"] = self.tolerations
        if self.binding_conditions:
            out["bindingConditions"] = self.binding_conditions
        if self.binding_failure_conditions:
            out["bindingFailureConditions"] = self.binding_failure_conditions
        if self.share_id is not None:
            out["shareID"] = self.share_id
        if self.consumed_capacity is not None:
            out["consumedCapacity"] = self.consumed_capacity
        if self.skip_node_operations:
            out["skipNodeOperations"] = self.skip_node_operations
        return out


@dataclass
class ClaimResult:
    namespace: str | None
    name: str | None
    results: list[DeviceResult]
    allocation: dict[str, Any]  # status.allocation: devices.results, devices.config, nodeSelector


@dataclass
class Outcome:
    feasible: bool | None  # None = undecided (budget ran out): never a wrong False
    node: str | None
    claims: list[ClaimResult]
    reason: str
    explanation: list[dict[str, Any]]
    nodes_tried: int = 0
    steps: int = 0
    error: str | None = None  # an upstream allocation error (aborts scheduling of the Pod)
    error_kind: ErrorKind | None = None  # what that error is about (None: no error)
    error_claim: str | None = None  # the one claim ("ns/name") that error is about, if it is one claim's
    internal: str | None = None  # draguard failed (MemoryError, RecursionError, a bug): not an answer
    undecided_by: str | None = None  # what ran out before an answer, and where (the reason says it too)

    @classmethod
    def allocated(
        cls, node: str | None, claims: list[ClaimResult], *, nodes_tried: int = 0, steps: int = 0
    ) -> Outcome:
        """The claims fit: on `node` (None: node-independent devices only), with these results."""
        return cls(True, node, claims, "", [], nodes_tried=nodes_tried, steps=steps)

    @classmethod
    def infeasible(
        cls,
        reason: str,
        explanation: list[dict[str, Any]] | None = None,
        *,
        nodes_tried: int = 0,
        steps: int = 0,
    ) -> Outcome:
        """The claims fit on no node: `reason` in the operator's words, `explanation` per request."""
        return cls(
            False,
            None,
            [],
            reason,
            [] if explanation is None else explanation,
            nodes_tried=nodes_tried,
            steps=steps,
        )

    @classmethod
    def failed(
        cls,
        message: str,
        kind: ErrorKind,
        *,
        claim: str | None = None,
        nodes_tried: int = 0,
        steps: int = 0,
    ) -> Outcome:
        """An allocation error (upstream aborts scheduling the Pod with it): no answer but no."""
        return cls(
            False,
            None,
            [],
            message,
            [],
            nodes_tried=nodes_tried,
            steps=steps,
            error=message,
            error_kind=kind,
            error_claim=claim,
        )

    @classmethod
    def undecided(
        cls, why: str, explanation: list[dict[str, Any]] | None = None, *, steps: int = 0
    ) -> Outcome:
        """No answer within the budget or deadline (`why`: what ran out, and where)."""
        return cls(None, None, [], f"undecided: {why}", explanation or [], steps=steps, undecided_by=why)

    @classmethod
    def crashed(cls, detail: str, *, steps: int = 0) -> Outcome:
        """draguard failed on the claims (`detail`: the exception): no answer."""
        message = f"internal error in the allocator ({detail}): please report it"
        return cls(None, None, [], message, [], steps=steps, internal=detail)
