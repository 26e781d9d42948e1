"""Which fields the API server rejects when absent: the audit of every field the OpenAPI marks required.

The OpenAPI `required` lists say what a client must send, not what the API server enforces: Go decodes
an absent field as its zero value, defaulting runs, and only then does validation (handwritten in
`pkg/apis/*/validation`, declarative `+k8s:required` in `zz_generated.validations.go`) decide. Each
OpenAPI-required field of the kinds draguard checks (Kubernetes 1.35-1.37) has one verdict here:

* `REQUIRED`: validation says `<path>: Required value` when the field is absent; `schema.required`
  reports exactly that (with upstream's detail text, if any).
* `REJECTED`: validation rejects the zero value with another error at the same path and no draguard
  rule checks the field; `schema.required` reports upstream's error text.
* `RULE`: validation rejects the zero value and a draguard rule reports it with upstream's message
  (a DNS-label name, a count that must be > 0, a struct whose own fields are then missing): the schema
  layer stays silent so the object gets exactly upstream's findings. Where the field is a Go value (not
  a pointer), `zero=True` makes the decoder put the zero value in, as Go's decoder does, so the rules
  (and the schema, inside a struct) see what upstream validates.
* `OPTIONAL`: the API server accepts the object without the field (zero value valid, or defaulted).

`python -m webhook.schema.generate` fails on an OpenAPI-required field that has no verdict here, so a
new upstream field cannot slip in unaudited; `tests/schema/test_required_audit.py` checks every verdict
on real objects. Sources: kubernetes/kubernetes `pkg/apis/resource/validation/validation.go` (commit
009801d9), `staging/src/k8s.io/api/resource/v1/zz_generated.validations.go`,
`pkg/apis/core/validation/validation.go`, apimachinery `metav1validation.ValidateCondition` and
`ValidateOwnerReferences`.
"""

from __future__ import annotations

from dataclasses import dataclass

REQUIRED = "required"
REJECTED = "rejected"
RULE = "rule"
OPTIONAL = "optional"


@dataclass(frozen=True)
class Verdict:
    kind: str  # REQUIRED | REJECTED | RULE | OPTIONAL
    reason: str  # the upstream code (function, tag) that decides it
    message: str = "Required value"  # what upstream says when the field is absent (REQUIRED, REJECTED)
    # RULE only: Go decodes the absent field as its zero value ({} / "" / 0) and draguard's rules must
    # see that value to report upstream's error (set by the decoder in webhook.schema.structural).
    zero: bool = False

    @property
    def in_schema(self) -> bool:
        """Listed in the generated schema's `required` (reported by `schema.required`)."""
        return self.kind in (REQUIRED, REJECTED)


def _req(reason: str, detail: str = "") -> Verdict:
    return Verdict(REQUIRED, reason, f"Required value: {detail}" if detail else "Required value")


def _rej(reason: str, message: str) -> Verdict:
    return Verdict(REJECTED, reason, message)


def _rule(reason: str, zero: bool = False) -> Verdict:
    return Verdict(RULE, reason, "", zero)


def _opt(reason: str) -> Verdict:
    return Verdict(OPTIONAL, reason, "")


_DNS_LABEL = 'ValidateDNS1123Label(""): Invalid value (a lowercase RFC 1123 label ...), not Required'
_CSI = "ValidateCSIDriverName: empty -> field.Required"
_POOL = "validatePoolName: empty -> field.Required"
_COND = "metav1validation.ValidateCondition"
_OWNER = "apimachinery ValidateOwnerReferences"
_EMPTY = 'Invalid value: "": must not be empty'

# (schema definition name, JSON field) -> verdict. Definition names follow the Python client's
# (`V1Device`, `ResourceV1ResourceClaim`); see webhook.schema.generate.
AUDIT: dict[tuple[str, str], Verdict] = {
    # --- resource.k8s.io/v1 -------------------------------------------------------------------
    ("V1ResourceSlice", "spec"): _rule(
        "ResourceSliceSpec is a struct: absent = empty spec; validateResourceSliceSpec then reports "
        "spec.driver, spec.pool.name (Required), spec.pool.resourceSliceCount (Invalid 0) and the node "
        "selection (spec: Required)",
        zero=True,
    ),
    ("V1ResourceSliceSpec", "driver"): _req(_CSI),
    ("V1ResourceSliceSpec", "pool"): _rule(
        "ResourcePool is a struct: absent = zero pool; validateResourcePool reports pool.name (Required) "
        "and pool.resourceSliceCount (Invalid 0)",
        zero=True,
    ),
    ("V1ResourcePool", "name"): _req(_POOL),
    ("V1ResourcePool", "generation"): _opt("validateResourcePool rejects only generation < 0: absent = 0"),
    ("V1ResourcePool", "resourceSliceCount"): _rule(
        "validateResourcePool: ResourceSliceCount <= 0 -> Invalid value: 0: must be greater than zero",
        zero=True,
    ),
    ("V1Device", "name"): _rule("validateDeviceName = " + _DNS_LABEL, zero=True),
    ("V1DeviceCapacity", "value"): _opt(
        "Quantity struct: absent = 0; capacity values are not validated (only requestPolicy against them)"
    ),
    ("V1Counter", "value"): _opt("validateDeviceCounter: any parsed quantity is valid; absent = 0"),
    ("V1CounterSet", "name"): _req("validateCounterSet / +k8s:required (RequiredValue)"),
    ("V1CounterSet", "counters"): _req("validateCounterSet / +k8s:required (RequiredMap)"),
    ("V1DeviceCounterConsumption", "counterSet"): _req("validateDeviceCounterConsumption / RequiredValue"),
    ("V1DeviceCounterConsumption", "counters"): _req("validateDeviceCounterConsumption / RequiredMap"),
    ("V1CapacityRequestPolicyRange", "min"): _rule(
        "validateRequestPolicyRange: Required only when a default is set and the device allows multiple "
        "allocations (capacity-policy rule), else a different error or none"
    ),
    ("V1DeviceTaint", "key"): _rule(
        'validateDeviceTaint: metav1validation.ValidateLabelName("") -> Invalid (name part must be non-empty)',
        zero=True,
    ),
    ("V1DeviceTaint", "effect"): _req("validateDeviceTaint / +k8s:required (RequiredValue)"),
    ("V1DeviceTaintRule", "spec"): _rule(
        "DeviceTaintRuleSpec is a struct: absent = empty; spec.taint.key (Invalid) and spec.taint.effect "
        "(Required) are then reported",
        zero=True,
    ),
    ("V1DeviceTaintRuleSpec", "taint"): _rule(
        "DeviceTaint is a struct: absent = empty taint; taint.key (Invalid) and taint.effect (Required)",
        zero=True,
    ),
    ("V1DeviceClass", "spec"): _opt(
        "DeviceClassSpec is a struct; an empty spec is valid (1.35/1.36 OpenAPI)"
    ),
    ("V1CELDeviceSelector", "expression"): _rule(
        "validateCELExpression compiles the empty expression: the CEL rule reports the compile error",
        zero=True,
    ),
    ("V1OpaqueDeviceConfiguration", "driver"): _req(_CSI + " / RequiredValue"),
    ("V1OpaqueDeviceConfiguration", "parameters"): _req("validateRawExtension: no raw bytes -> Required"),
    ("ResourceV1ResourceClaim", "spec"): _opt(
        "ResourceClaimSpec is a struct; a claim without requests is valid (1.35/1.36 OpenAPI)"
    ),
    ("V1ResourceClaimTemplate", "spec"): _opt("an empty template spec is valid (1.35/1.36 OpenAPI)"),
    ("V1ResourceClaimTemplateSpec", "spec"): _opt("an empty claim spec is valid (1.35/1.36 OpenAPI)"),
    ("V1DeviceRequest", "name"): _rule("validateRequestName = " + _DNS_LABEL, zero=True),
    ("V1ExactDeviceRequest", "deviceClassName"): _req("validateDeviceClass: empty -> field.Required"),
    ("V1DeviceSubRequest", "name"): _rule("validateRequestName = " + _DNS_LABEL, zero=True),
    ("V1DeviceSubRequest", "deviceClassName"): _req("validateDeviceClass / RequiredValue"),
    ("V1DeviceDerivedAttribute", "name"): _req("+k8s:required (RequiredValue, enforced declaratively)"),
    ("V1DeviceDerivedAttribute", "expression"): _req("+k8s:required (RequiredValue, enforced declaratively)"),
    ("V1AllocatedDeviceStatus", "driver"): _req(_CSI),
    ("V1AllocatedDeviceStatus", "pool"): _req(_POOL),
    ("V1AllocatedDeviceStatus", "device"): _rule("validateDeviceName = " + _DNS_LABEL, zero=True),
    ("V1DeviceRequestAllocationResult", "request"): _rule(
        'validateRequestNameRef(""): Invalid (DNS label, not a request of the claim)', zero=True
    ),
    ("V1DeviceRequestAllocationResult", "driver"): _req(_CSI + " / RequiredValue"),
    ("V1DeviceRequestAllocationResult", "pool"): _req(_POOL + " / RequiredValue"),
    ("V1DeviceRequestAllocationResult", "device"): _rule("validateDeviceName = " + _DNS_LABEL, zero=True),
    ("V1DeviceAllocationConfiguration", "source"): _req("validateAllocationConfigSource / RequiredValue"),
    ("V1ResourceClaimConsumerReference", "resource"): _req("validateResourceClaimUserReference"),
    ("V1ResourceClaimConsumerReference", "name"): _req("validateResourceClaimUserReference"),
    ("V1ResourceClaimConsumerReference", "uid"): _req("validateResourceClaimUserReference"),
    # --- meta/v1 --------------------------------------------------------------------------------
    ("V1Condition", "type"): _rule(_COND + ': ValidateLabelName("") -> Invalid (condition rules)'),
    ("V1Condition", "status"): _rule(_COND + ': NotSupported "" (condition rules)'),
    ("V1Condition", "lastTransitionTime"): _req(_COND, "must be set"),
    ("V1Condition", "reason"): _req(_COND, "must be set"),
    ("V1Condition", "message"): _opt(_COND + ": only the length of message is checked"),
    ("V1OwnerReference", "apiVersion"): _rej(_OWNER, 'Invalid value: "": version must not be empty'),
    ("V1OwnerReference", "kind"): _rej(_OWNER, _EMPTY),
    ("V1OwnerReference", "name"): _rej(_OWNER, _EMPTY),
    ("V1OwnerReference", "uid"): _rej(_OWNER, _EMPTY),
    ("V1LabelSelectorRequirement", "key"): _rej(
        'metav1validation.ValidateLabelSelectorRequirement: ValidateLabelName("")',
        'Invalid value: "": name part must be non-empty',
    ),
    ("V1LabelSelectorRequirement", "operator"): _rej(
        "ValidateLabelSelectorRequirement: unknown operator",
        'Invalid value: "": not a valid selector operator',
    ),
    # --- core/v1 NodeSelector (ResourceSlice, claim allocation, Pod affinity) --------------------
    ("V1NodeSelector", "nodeSelectorTerms"): _req(
        "ValidateNodeSelector: no terms -> field.Required", "must have at least one node selector term"
    ),
    ("V1NodeSelectorRequirement", "key"): _rule(
        "ValidateNodeSelectorRequirement: ValidateLabelName -> Invalid"
    ),
    ("V1NodeSelectorRequirement", "operator"): _rule(
        'ValidateNodeSelectorRequirement: "" -> Invalid: not a valid selector operator'
    ),
}

# --- core/v1 Pod -----------------------------------------------------------------------------------
# Pod spec fields (validated on CREATE). Status fields (`*Status`, conditions, IPs) are reset by the
# API server on CREATE and written by the kubelet and scheduler through /status; their verdicts
# follow ValidatePodStatusUpdate.
_POD = "pkg/apis/core/validation"
AUDIT.update(
    {
        ("V1PodSpec", "containers"): _req(_POD + " validateContainers: no containers -> Required"),
        ("V1Container", "name"): _req(_POD + " validateContainerCommon: empty name -> Required"),
        ("V1EphemeralContainer", "name"): _req(_POD + " validateEphemeralContainers: empty name -> Required"),
        ("V1ContainerPort", "containerPort"): _req(_POD + " validateContainerPorts: 0 -> Required"),
        ("V1EnvVar", "name"): _req(_POD + " ValidateEnv: empty name -> Required"),
        ("V1ConfigMapKeySelector", "key"): _req(_POD + " validateConfigMapKeySelector"),
        ("V1SecretKeySelector", "key"): _req(_POD + " validateSecretKeySelector"),
        ("V1FileKeySelector", "key"): _req(_POD + " validateFileKeySelector"),
        ("V1FileKeySelector", "path"): _req(_POD + " validateFileKeySelector"),
        ("V1FileKeySelector", "volumeName"): _req(_POD + " validateFileKeySelector"),
        ("V1ObjectFieldSelector", "fieldPath"): _req(_POD + " validateObjectFieldSelector"),
        ("V1ResourceFieldSelector", "resource"): _req(_POD + " validateContainerResourceFieldSelector"),
        ("V1Volume", "name"): _req(_POD + " ValidateVolumes: empty name -> Required"),
        ("V1VolumeMount", "name"): _req(_POD + " ValidateVolumeMounts"),
        ("V1VolumeMount", "mountPath"): _req(_POD + " ValidateVolumeMounts"),
        ("V1VolumeDevice", "name"): _req(_POD + " ValidateVolumeDevices"),
        ("V1VolumeDevice", "devicePath"): _req(_POD + " ValidateVolumeDevices"),
        ("V1KeyToPath", "key"): _req(_POD + " validateKeyToPath"),
        ("V1KeyToPath", "path"): _req(_POD + " validateKeyToPath"),
        ("V1DownwardAPIVolumeFile", "path"): _req(_POD + " validateDownwardAPIVolumeFile"),
        ("V1ServiceAccountTokenProjection", "path"): _req(_POD + " validateProjectionSources"),
        ("V1ClusterTrustBundleProjection", "path"): _req(_POD + " validateProjectionSources"),
        ("V1PodCertificateProjection", "signerName"): _req(_POD + " validatePodCertificateProjection"),
        ("V1PodCertificateProjection", "keyType"): _rej(
            _POD + " validatePodCertificateProjection: unsupported key type",
            'Unsupported value: "": supported values: "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519", '
            '"RSA3072", "RSA4096"',
        ),
        ("V1HostPathVolumeSource", "path"): _req(_POD + " validateHostPathVolumeSource"),
        ("V1NFSVolumeSource", "server"): _req(_POD + " validateNFSVolumeSource"),
        ("V1NFSVolumeSource", "path"): _req(_POD + " validateNFSVolumeSource"),
        ("V1ISCSIVolumeSource", "iqn"): _req(_POD + " validateISCSIVolumeSource"),
        ("V1ISCSIVolumeSource", "targetPortal"): _req(_POD + " validateISCSIVolumeSource"),
        ("V1ISCSIVolumeSource", "lun"): _opt(_POD + " validateISCSIVolumeSource: lun 0..255, absent = 0"),
        ("V1GlusterfsVolumeSource", "endpoints"): _req(_POD + " validateGlusterfsVolumeSource"),
        ("V1GlusterfsVolumeSource", "path"): _req(_POD + " validateGlusterfsVolumeSource"),
        ("V1RBDVolumeSource", "monitors"): _req(_POD + " validateRBDVolumeSource"),
        ("V1RBDVolumeSource", "image"): _req(_POD + " validateRBDVolumeSource"),
        ("V1CinderVolumeSource", "volumeID"): _req(_POD + " validateCinderVolumeSource"),
        ("V1CephFSVolumeSource", "monitors"): _req(_POD + " validateCephFSVolumeSource"),
        ("V1FlexVolumeSource", "driver"): _req(_POD + " validateFlexVolumeSource"),
        ("V1AzureDiskVolumeSource", "diskName"): _req(_POD + " validateAzureDisk"),
        ("V1AzureDiskVolumeSource", "diskURI"): _req(_POD + " validateAzureDisk"),
        ("V1AzureFileVolumeSource", "secretName"): _req(_POD + " validateAzureFile"),
        ("V1AzureFileVolumeSource", "shareName"): _req(_POD + " validateAzureFile"),
        ("V1VsphereVirtualDiskVolumeSource", "volumePath"): _req(_POD + " validateVsphereVolumeSource"),
        ("V1PhotonPersistentDiskVolumeSource", "pdID"): _req(
            _POD + " validatePhotonPersistentDiskVolumeSource"
        ),
        ("V1PortworxVolumeSource", "volumeID"): _req(_POD + " validatePortworxVolumeSource"),
        ("V1ScaleIOVolumeSource", "gateway"): _req(_POD + " validateScaleIOVolumeSource"),
        ("V1ScaleIOVolumeSource", "system"): _req(_POD + " validateScaleIOVolumeSource"),
        ("V1ScaleIOVolumeSource", "secretRef"): _req(_POD + " validateScaleIOVolumeSource"),
        ("V1QuobyteVolumeSource", "registry"): _req(_POD + " validateQuobyteVolumeSource"),
        ("V1QuobyteVolumeSource", "volume"): _req(_POD + " validateQuobyteVolumeSource"),
        ("V1GitRepoVolumeSource", "repository"): _req(_POD + " validateGitRepoVolumeSource"),
        ("V1GCEPersistentDiskVolumeSource", "pdName"): _req(_POD + " validateGCEPDVolumeSource"),
        ("V1AWSElasticBlockStoreVolumeSource", "volumeID"): _req(
            _POD + " validateAWSElasticBlockStoreVolumeSource"
        ),
        ("V1CSIVolumeSource", "driver"): _req(_POD + " validateCSIVolumeSource"),
        ("V1PersistentVolumeClaimVolumeSource", "claimName"): _req(
            _POD + " validatePersistentClaimVolumeSource"
        ),
        ("V1PersistentVolumeClaimTemplate", "spec"): _rej(
            _POD
            + " validateEphemeralVolumeSource: an empty PVC spec fails ValidatePersistentVolumeClaimSpec "
            "(accessModes, resources Required; reported upstream under spec.*, here on spec)",
            "Required value: an ephemeral volume's volumeClaimTemplate needs a spec (accessModes, resources)",
        ),
        ("V1TypedLocalObjectReference", "kind"): _req(_POD + " validateDataSource"),
        ("V1TypedLocalObjectReference", "name"): _req(_POD + " validateDataSource"),
        ("V1TypedObjectReference", "kind"): _req(_POD + " validateDataSourceRef"),
        ("V1TypedObjectReference", "name"): _req(_POD + " validateDataSourceRef"),
        ("V1HTTPHeader", "name"): _rej(
            _POD + ' validateHTTPHeaders: IsHTTPHeaderName("")',
            "Invalid value: \"\": a valid HTTP header must consist of alphanumeric characters or '-' "
            "(e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
        ),
        ("V1HTTPHeader", "value"): _opt(_POD + " validateHTTPHeaders: only the name is validated"),
        ("V1HTTPGetAction", "port"): _rej(
            _POD + " ValidatePortNumOrName(0)", "Invalid value: 0: must be between 1 and 65535, inclusive"
        ),
        ("V1TCPSocketAction", "port"): _rej(
            _POD + " ValidatePortNumOrName(0)", "Invalid value: 0: must be between 1 and 65535, inclusive"
        ),
        ("V1GRPCAction", "port"): _rej(
            _POD + " validateGRPCAction: IsValidPortNum(0)",
            "Invalid value: 0: must be between 1 and 65535, inclusive",
        ),
        ("V1SleepAction", "seconds"): _opt(
            _POD + " validateSleepAction: 0 is valid since PodLifecycleSleepActionAllowZero (GA 1.34)"
        ),
        ("V1Sysctl", "name"): _req(_POD + " validateSysctls: empty name -> Required"),
        ("V1Sysctl", "value"): _opt(_POD + " validateSysctls: the value is not validated"),
        ("V1HostAlias", "ip"): _rej(
            _POD + ' ValidateHostAliases: IsValidIP("")', 'Invalid value: "": must be a valid IP address'
        ),
        ("V1PodOS", "name"): _req(_POD + " validateOS: empty name -> Required"),
        ("V1PodReadinessGate", "conditionType"): _rej(
            _POD + ' validateReadinessGates: IsQualifiedName("")',
            'Invalid value: "": name part must be non-empty',
        ),
        ("V1PodSchedulingGate", "name"): _rej(
            _POD + ' validateSchedulingGates: IsQualifiedName("")',
            'Invalid value: "": name part must be non-empty',
        ),
        ("V1PodResourceClaim", "name"): _rule(_POD + " validatePodResourceClaim: DNS label (pod rules)"),
        ("CoreV1ResourceClaim", "name"): _rule(
            _POD + " validateResourceClaimNames: empty -> Required at claims[i]"
        ),
        ("V1ContainerResizePolicy", "resourceName"): _rej(
            _POD + " validateResizePolicy: unsupported resource",
            'Unsupported value: "": supported values: "cpu", "memory"',
        ),
        ("V1ContainerResizePolicy", "restartPolicy"): _rej(
            _POD + " validateResizePolicy: unsupported policy",
            'Unsupported value: "": supported values: "NotRequired", "RestartContainer"',
        ),
        ("V1ContainerRestartRule", "action"): _rej(
            _POD + " validateContainerRestartRules: unsupported action",
            'Unsupported value: "": supported values: "Restart"',
        ),
        ("V1ContainerRestartRuleOnExitCodes", "operator"): _rej(
            _POD + " validateContainerRestartRules: unsupported operator",
            'Unsupported value: "": supported values: "In", "NotIn"',
        ),
        ("V1AppArmorProfile", "type"): _req(_POD + " validateAppArmorProfileField: empty type -> Required"),
        ("V1SeccompProfile", "type"): _rej(
            _POD + " validateSeccompProfileField: unsupported type",
            'Unsupported value: "": supported values: "Localhost", "RuntimeDefault", "Unconfined"',
        ),
        ("V1LinuxContainerUser", "uid"): _opt("status only (ContainerStatus.user): written by the kubelet"),
        ("V1LinuxContainerUser", "gid"): _opt("status only (ContainerStatus.user): written by the kubelet"),
        ("V1PodAffinityTerm", "topologyKey"): _req(
            _POD + " validatePodAffinityTerm: empty -> Required", "can not be empty"
        ),
        ("V1WeightedPodAffinityTerm", "weight"): _rej(
            _POD + " validateWeightedPodAffinityTerm: 0", "Invalid value: 0: must be in the range 1-100"
        ),
        ("V1WeightedPodAffinityTerm", "podAffinityTerm"): _rule(
            _POD + " PodAffinityTerm is a struct: absent -> podAffinityTerm.topologyKey Required", zero=True
        ),
        ("V1PreferredSchedulingTerm", "weight"): _rej(
            _POD + " validatePreferredSchedulingTerms: 0", "Invalid value: 0: must be in the range 1-100"
        ),
        ("V1PreferredSchedulingTerm", "preference"): _opt(
            _POD + " validatePreferredSchedulingTerms: an empty NodeSelectorTerm is valid"
        ),
        ("V1TopologySpreadConstraint", "maxSkew"): _rej(
            _POD + " validateTopologySpreadConstraints: 0", "Invalid value: 0: must be greater than zero"
        ),
        ("V1TopologySpreadConstraint", "topologyKey"): _req(
            _POD + " ValidateTopologyKey: empty -> Required", "can not be empty"
        ),
        ("V1TopologySpreadConstraint", "whenUnsatisfiable"): _rej(
            _POD + " ValidateWhenUnsatisfiable: unsupported",
            'Unsupported value: "": supported values: "DoNotSchedule", "ScheduleAnyway"',
        ),
        # Pod status (ValidatePodStatusUpdate; reset on CREATE).
        ("V1PodCondition", "type"): _rej(
            _POD + ' validatePodConditions: IsQualifiedName("")',
            'Invalid value: "": name part must be non-empty',
        ),
        ("V1PodCondition", "status"): _opt(_POD + " validatePodConditions: the status is not validated"),
        ("V1ContainerStatus", "name"): _opt(
            _POD + " validateContainerStatus...: kubelet-written, not checked"
        ),
        ("V1ContainerStatus", "image"): _opt(_POD + " kubelet-written, not checked"),
        ("V1ContainerStatus", "imageID"): _opt(_POD + " kubelet-written, not checked"),
        ("V1ContainerStatus", "ready"): _opt("bool: absent = false"),
        ("V1ContainerStatus", "restartCount"): _opt(_POD + " only a negative count is rejected: absent = 0"),
        ("V1ContainerStateTerminated", "exitCode"): _opt("int32: absent = 0 (a valid exit code)"),
        ("V1ImageVolumeStatus", "imageRef"): _opt(_POD + " kubelet-written, not checked"),
        ("V1HostIP", "ip"): _rej(
            _POD + " validateHostIPs: IsValidIP", 'Invalid value: "": must be a valid IP address'
        ),
        ("V1PodIP", "ip"): _rej(
            _POD + " validatePodIPs: IsValidIP", 'Invalid value: "": must be a valid IP address'
        ),
        ("V1ResourceStatus", "name"): _req(_POD + " validateContainerStatusAllocatedResourcesStatus"),
        ("V1ResourceHealth", "resourceID"): _opt(_POD + " kubelet-written, not checked for presence"),
        ("V1VolumeMountStatus", "name"): _opt(_POD + " kubelet-written, not checked"),
        ("V1VolumeMountStatus", "mountPath"): _opt(_POD + " kubelet-written, not checked"),
        ("V1PodResourceClaimStatus", "name"): _rule(
            _POD + " validatePodResourceClaimStatuses: must name a spec.resourceClaims entry"
        ),
        ("V1PodExtendedResourceClaimStatus", "resourceClaimName"): _req(
            _POD + " validatePodExtendedResourceClaimStatus"
        ),
        ("V1PodExtendedResourceClaimStatus", "requestMappings"): _req(
            _POD + " validatePodExtendedResourceClaimStatus: no mappings -> Required"
        ),
        ("V1ContainerExtendedResourceRequest", "containerName"): _req(
            _POD + " validatePodExtendedResourceClaimStatus"
        ),
        ("V1ContainerExtendedResourceRequest", "resourceName"): _req(
            _POD + " validatePodExtendedResourceClaimStatus"
        ),
        ("V1ContainerExtendedResourceRequest", "requestName"): _req(
            _POD + " validatePodExtendedResourceClaimStatus"
        ),
        ("V1NodeAllocatableResourceClaimStatus", "resourceClaimName"): _req(
            _POD + " node-allocatable claim status (alpha): keyed by resourceClaimName"
        ),
        ("V1NodeAllocatableResourceClaimStatus", "resources"): _opt(
            "1.36 alpha status field written by the kubelet; an empty map is not rejected"
        ),
        ("V1NodeAllocatableMappedResources", "name"): _req(_POD + " node-allocatable claim status (alpha)"),
        ("V1NodeAllocatableMappedResources", "quantity"): _opt("Quantity struct: absent = 0"),
        ("V1NodeAllocatableOverheadResources", "name"): _req(_POD + " node-allocatable claim status (alpha)"),
        ("V1PodVolumeHealth", "name"): _opt("1.37 alpha status field written by the kubelet"),
        ("V1VolumeHealthCondition", "reason"): _opt("1.37 alpha status field written by the kubelet"),
        ("V1VolumeHealthCondition", "status"): _opt("1.37 alpha status field written by the kubelet"),
        ("V1EvictionResponder", "name"): _opt("1.37 alpha status field (pod eviction responders)"),
        ("V1EvictionResponder", "priority"): _opt("1.37 alpha status field; int32: absent = 0"),
        ("V1WorkloadReference", "name"): _req(_POD + " validateWorkloadReference (1.35 alpha)"),
        ("V1WorkloadReference", "podGroup"): _req(_POD + " validateWorkloadReference (1.35 alpha)"),
        # Lists: the only required field of a List kind.
        ("V1PodList", "items"): _opt("a List's items is decoded as an empty list"),
        ("V1ResourceSliceList", "items"): _opt("a List's items is decoded as an empty list"),
        ("V1ResourceClaimList", "items"): _opt("a List's items is decoded as an empty list"),
        ("V1ResourceClaimTemplateList", "items"): _opt("a List's items is decoded as an empty list"),
        ("V1DeviceClassList", "items"): _opt("a List's items is decoded as an empty list"),
        ("V1DeviceTaintRuleList", "items"): _opt("a List's items is decoded as an empty list"),
        ("V1ShardInfo", "selector"): _opt("list metadata shard info: written by the API server, never sent"),
    }
)


def verdict(definition: str, field: str) -> Verdict | None:
    """The audited verdict of an OpenAPI-required field (None: not audited)."""
    return AUDIT.get((definition, field))


def zero_filled(definition: str) -> tuple[str, ...]:
    """Fields of `definition` that decode to their zero value when absent (RULE verdicts with `zero`)."""
    return tuple(sorted(f for (d, f), v in AUDIT.items() if d == definition and v.zero))


def absent_message(definition: str, field: str) -> str:
    """What `schema.required` says when the field is absent (upstream's error text)."""
    v = AUDIT.get((definition, field))
    return v.message if v is not None and v.message else "Required value"
