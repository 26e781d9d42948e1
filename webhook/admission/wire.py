"""What admission speaks: the `admission.k8s.io/v1` AdmissionReview response as TypedDicts, and the
closed sets of the admission core as Literals (operations, endpoints, decisions, failure modes).

The request side is read defensively into `webhook.admission.request.Request` (a body from the network
is checked field by field, not trusted to have a shape); what draguard writes has exactly these shapes."""

# (no `from __future__ import annotations`: NotRequired must be seen when the TypedDicts are made, for
# their __required_keys__)
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NotRequired, Protocol, TypedDict

if TYPE_CHECKING:
    from webhook.state.view import StateView

__all__ = [
    "AdmissionResponse",
    "AdmissionReviewResponse",
    "ClusterSnapshot",
    "Decision",
    "ENDPOINTS",
    "Endpoint",
    "ExtendedMode",
    "FailureMode",
    "Operation",
    "Status",
    "StatusCause",
    "StatusDetails",
]

Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
Endpoint = Literal["validate", "mutate"]  # /validate: rules and feasibility; /mutate: skew, translate
ENDPOINTS: tuple[Endpoint, ...] = ("validate", "mutate")
Decision = Literal["allowed", "denied", "error"]  # error: draguard failed, the failure mode answered
FailureMode = Literal["open", "closed"]  # on an internal error: admit with a warning, or deny (500)
ExtendedMode = Literal["native", "translate", "off"]  # a Pod's extended resources served by DeviceClasses


class StatusCause(TypedDict):
    """metav1.StatusCause: one field error of a denial."""

    reason: str  # FieldValueInvalid, FieldValueRequired, ... (webhook.admission.response.cause_type)
    message: str
    field: NotRequired[str]


class StatusDetails(TypedDict):
    kind: str
    causes: list[StatusCause]
    group: NotRequired[str]
    name: NotRequired[str]


class Status(TypedDict):
    """metav1.Status of a denial: 422 Invalid with its causes, or a plain failure (400, 500)."""

    metadata: NotRequired[dict[str, Any]]
    status: Literal["Failure"]
    message: str
    reason: str
    code: int
    details: NotRequired[StatusDetails]


class AdmissionResponse(TypedDict):
    uid: str
    allowed: bool
    status: NotRequired[Status]
    warnings: NotRequired[list[str]]
    patchType: NotRequired[Literal["JSONPatch"]]
    patch: NotRequired[str]  # base64 of the JSON Patch
    auditAnnotations: NotRequired[dict[str, str]]


class AdmissionReviewResponse(TypedDict):
    apiVersion: Literal["admission.k8s.io/v1"]
    kind: Literal["AdmissionReview"]
    response: AdmissionResponse


class ClusterSnapshot(Protocol):
    """What admission reads of the cluster: one published version (`webhook.state.Snapshot`)."""

    @property
    def state(self) -> "StateView": ...  # what the engine allocates on, and the cross-object index

    def objects(self, kind: str) -> Mapping[tuple[str, str], dict[str, Any]]: ...  # stored, by (ns, name)
