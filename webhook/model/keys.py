"""How a cluster state names an object: `ObjectKey(kind, namespace, name)`, the namespace "" for
cluster-scoped kinds whatever the metadata says."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["BUILTIN_KINDS", "DRA_KINDS", "NAMESPACED", "ObjectKey", "builtin_kind", "object_key"]

# the resource.k8s.io kinds draguard validates
DRA_KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")
NAMESPACED = frozenset({"ResourceClaim", "ResourceClaimTemplate", "Pod"})  # of the kinds a state holds

# The kinds a Kubernetes 1.37 API server serves itself, in any of its API groups (aggregated APIs and custom
# resources aside). A document of one of these kinds is a Kubernetes manifest even when its apiVersion is
# missing; another kind without an apiVersion is some other tool's configuration (a kustomization.yaml may
# leave it out, kube-state-metrics' CustomResourceStateMetrics has none).
BUILTIN_KINDS = frozenset(
    {
        # core
        *("Binding", "ComponentStatus", "ConfigMap", "Endpoints", "Event", "LimitRange", "Namespace"),
        *("Node", "PersistentVolume", "PersistentVolumeClaim", "Pod", "PodTemplate", "ResourceQuota"),
        *("ReplicationController", "Secret", "Service", "ServiceAccount"),
        # apps, batch, autoscaling, policy
        *("ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet", "CronJob", "Job"),
        *("HorizontalPodAutoscaler", "PodDisruptionBudget", "Eviction", "Scale"),
        # admissionregistration, apiextensions, apiregistration
        *("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
        *("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"),
        *(
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
            "CustomResourceDefinition",
            "APIService",
        ),
        # authentication, authorization, certificates, coordination
        *("TokenReview", "TokenRequest", "SelfSubjectReview", "SubjectAccessReview"),
        *("SelfSubjectAccessReview", "LocalSubjectAccessReview", "SelfSubjectRulesReview"),
        *(
            "CertificateSigningRequest",
            "ClusterTrustBundle",
            "PodCertificateRequest",
            "Lease",
            "LeaseCandidate",
        ),
        # discovery, flowcontrol, networking, node, rbac, scheduling, storage, storagemigration, internal
        *("EndpointSlice", "FlowSchema", "PriorityLevelConfiguration", "Ingress", "IngressClass"),
        *("NetworkPolicy", "IPAddress", "ServiceCIDR", "RuntimeClass", "PriorityClass", "Workload"),
        *("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
        *("CSIDriver", "CSINode", "CSIStorageCapacity", "StorageClass", "VolumeAttachment"),
        *("VolumeAttributesClass", "StorageVersionMigration", "StorageVersion"),
        *DRA_KINDS,
    }
)


def builtin_kind(kind: str) -> bool:
    """Whether `kind` is one the API server serves itself (module's BUILTIN_KINDS), or a list of one, or
    the generic `List`."""
    return kind in BUILTIN_KINDS or kind == "List" or (kind.endswith("List") and kind[:-4] in BUILTIN_KINDS)


class ObjectKey(NamedTuple):
    kind: str
    namespace: str  # "" for a cluster-scoped kind
    name: str


def object_key(obj: dict[str, Any]) -> ObjectKey:
    """The key of `obj` ("" for what is missing or not a string)."""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns = meta.get("namespace")
    name = meta.get("name")
    return ObjectKey(
        kind if isinstance(kind, str) else "",
        ns if kind in NAMESPACED and isinstance(ns, str) else "",
        name if isinstance(name, str) else "",
    )
