"""Every rule id draguard can report, declared once: its tag, default severity, the kinds it applies to,
the field path it points at and what it checks. The rule functions (webhook/rules/) and the findings the
pipeline emits itself (input.*, feasibility.*, schema.*, admission.*) name their id from here; a module
that emits a finding need not be imported for its id to be known (`--ignore`, policy files, the
`draguard.io/ignore` annotation and `draguard rules` see every id in every command). docs/rules.md's table
is generated from this catalogue (`draguard rules --format markdown`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from webhook.model.violation import Severity
from webhook.model.workloads import WORKLOAD_KINDS

Scope = Literal["object", "inventory"]  # one object at a time, or the records of every object in the input
# api: the API server rejects it; alloc: the allocator cannot or would mishandle; xobj: only visible across
# objects; lint: accepted, but not what was meant; schema: the structural schema; skew: version skew;
# input: about the files, not an object; tenant: a tenant entry of a DraguardPolicy (its mode, not the rule,
# decides the severity: Enforce error, Warn warning, Audit info); driver: the driver rejects it when it
# prepares the devices (its opaque config), after the Pod is scheduled
Tag = Literal["api", "alloc", "xobj", "lint", "schema", "skew", "input", "tenant", "driver"]
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
# the kinds the structural schema check covers (the DRA kinds and Pod, and their Lists)
SCHEMA_KINDS = (
    "DeviceClass",
    "DeviceClassList",
    "DeviceTaintRule",
    "DeviceTaintRuleList",
    "Pod",
    "PodList",
    "ResourceClaim",
    "ResourceClaimList",
    "ResourceClaimTemplate",
    "ResourceClaimTemplateList",
    "ResourceSlice",
    "ResourceSliceList",
)


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    summary: str
    field: str
    severity: Severity
    kinds: tuple[str, ...]
    scope: Scope
    tag: Tag


def rule(
    rule_id: str, tag: Tag, severity: Severity, kinds: tuple[str, ...], field: str, *summary: str
) -> Rule:
    return Rule(rule_id, "".join(summary), field, severity, kinds, "object", tag)


def inventory(
    rule_id: str, tag: Tag, severity: Severity, kinds: tuple[str, ...], field: str, *summary: str
) -> Rule:
    return Rule(rule_id, "".join(summary), field, severity, kinds, "inventory", tag)


_ALL = (
    rule(
        "admission.feasibility",
        "alloc",
        ERROR,
        ("ResourceClaim", "Pod"),
        "spec.devices.requests[i]",
        "the webhook only: a ResourceClaim or Pod being created can never be allocated on the cluster "
        "state (unsatisfiable): denied in mode enforce, else a warning (as are busy and undecided). "
        "Modes per kind and namespace come from the policy file's `feasibility:` section (enforce, "
        "warn, off), not `rules:`",
    ),
    rule(
        "admission.taint-blast-radius",
        "lint",
        ERROR,
        ("DeviceTaintRule",),
        "spec.deviceSelector",
        "the webhook only: a DeviceTaintRule being created or updated taints more devices, or (NoExecute) "
        "evicts more Pods, than the policy's `taints:` limits (maxDevices, maxPods) allow, and does not "
        'carry the acknowledgement annotation (draguard.io/acknowledge-blast-radius: "true"): denied. '
        "Every DeviceTaintRule gets its counts as a warning and the audit annotation taint-blast-radius",
    ),
    rule(
        "admission.node-bound-status",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.devices",
        "the webhook only, with the policy's `rbac: {enforceNodeBoundStatus: true}` (for clusters without "
        "DRAResourceClaimGranularStatusAuthorization): a status update from a node-bound service account "
        "(its token's authentication.kubernetes.io/node-name) that changes status.allocation or "
        "status.reservedFor, or changes status.devices of a claim not allocated to its node: denied",
    ),
    rule(
        "claim-status.admin-access",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.allocation.devices.results[i].adminAccess",
        "a new allocation result with adminAccess: true needs the namespace label "
        "resource.kubernetes.io/admin-access=true",
    ),
    rule(
        "claim-status.config",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.allocation.devices.config[i]",
        "new allocation config: ≤64 entries, source FromClass/FromClaim, request refs exist, opaque "
        "driver and JSON-object parameters ≤10 KiB",
    ),
    rule(
        "claim-status.devices",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.devices[i]",
        "status.devices: unique per driver/pool/device/shareID, each an allocated device, ≤8 valid "
        "conditions, data a JSON object ≤10 KiB",
    ),
    rule(
        "claim-status.network-data",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.devices[i].networkData",
        "networkData: interfaceName ≤256 bytes, hardwareAddress ≤128 bytes, ≤16 unique canonical CIDR ips",
    ),
    rule(
        "claim-status.node-selector",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.allocation.nodeSelector",
        "allocation nodeSelector: at least one term, valid match expressions and metadata.name match fields",
    ),
    rule(
        "claim-status.reserved-for",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.reservedFor",
        "reservedFor: ≤256 entries with resource, name and a unique uid, and only while allocated",
    ),
    rule(
        "claim-status.results",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.allocation.devices.results[i]",
        "new allocation results: ≤32; request refs exist; driver, pool, device, tolerations, binding "
        "conditions, shareID and skipNodeOperations well formed",
    ),
    rule(
        "claim.admin-access",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].adminAccess",
        'adminAccess: true needs the namespace label resource.kubernetes.io/admin-access: "true" '
        "(webhook only, when the state holds the Namespace)",
    ),
    inventory(
        "claim.admin-access-namespace",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].adminAccess",
        "offline: adminAccess: true in a namespace the input defines without the label "
        'resource.kubernetes.io/admin-access: "true" (the API server rejects the claim; the webhook '
        "checks the live namespace: claim.admin-access)",
    ),
    rule(
        "claim.allocation-mode",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.count",
        "allocationMode is ExactCount (count > 0) or All (count unset)",
    ),
    rule(
        "claim.capacity-requests",
        "lint",
        WARNING,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.capacity.requests[<name>]",
        "capacity.requests keys are QualifiedNames and values non-negative quantities (else no device "
        "can match)",
    ),
    rule(
        "claim.config",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.config[i]",
        "At most 32 config entries; request refs exist and are unique; opaque with a driver and "
        "JSON-object parameters",
    ),
    rule(
        "claim.constraints",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.constraints[i]",
        "At most 32 constraints; request refs exist and are unique; exactly one of "
        "matchAttribute/distinctAttribute",
    ),
    rule(
        "claim.derived-attributes",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.derivedAttributes[k].name",
        "derivedAttributes: ≤32, unique fully qualified names used by a constraint, expressions ≤10240 bytes",
    ),
    rule(
        "claim.device-class-name",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.deviceClassName",
        "deviceClassName is required in exactly and in every subrequest and must be a DNS subdomain",
    ),
    rule(
        "claim.first-available",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].firstAvailable[j]",
        "firstAvailable has at most 8 subrequests with unique DNS-label names",
    ),
    rule(
        "claim.requests",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i]",
        "At most 32 requests with unique DNS-label names; each sets exactly one of exactly/firstAvailable",
    ),
    rule(
        "claim.selectors",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.selectors[k].cel.expression",
        "At most 32 selectors per request; each has cel.expression that compiles to bool within the "
        "cost limit",
    ),
    rule(
        "claim.template-metadata",
        "api",
        ERROR,
        ("ResourceClaimTemplate",),
        "spec.metadata",
        "Template spec.metadata may only set labels and annotations, with valid keys and values",
    ),
    rule(
        "claim.tolerations",
        "api",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.tolerations[k]",
        "Toleration key is a label key, value a label value (empty for Exists), operator and effect known",
    ),
    rule(
        "claim.tolerations-max",
        "lint",
        WARNING,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.tolerations",
        "At most 16 tolerations per request (documented limit; the API server does not enforce it)",
    ),
    inventory(
        "claim.unknown-device-class",
        "xobj",
        WARNING,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.deviceClassName | ...firstAvailable[j].deviceClassName",
        "a claim or template requests a DeviceClass that is not in the input (checked only when the "
        "input contains DeviceClasses; offline an info, summed up in one line, unless the input is the "
        "whole cluster (--cluster) or a class of the input has a close name)",
    ),
    rule(
        "class.config",
        "api",
        ERROR,
        ("DeviceClass",),
        "spec.config[i].opaque",
        "At most 32 config entries, each opaque with a driver name and JSON-object parameters",
    ),
    rule(
        "config.driver-schema",
        "driver",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass"),
        "spec.devices.config[i].opaque.parameters | spec.config[i].opaque.parameters",
        "opaque parameters of a driver draguard bundles a schema for (schemas/drivers/: NVIDIA GpuConfig, ",
        "MigDeviceConfig, VfioDeviceConfig, ComputeDomain channel and daemon configs; the dra-example-driver's ",
        "GpuConfig and NetConfig; the SR-IOV driver's VfConfig; DraNet's NetworkConfig, which has no apiVersion or kind) ",
        "do not fit it: a wrong type, an unknown field (these drivers decode strictly), ",
        "an unsupported value (a time-slice interval, a sharing strategy, an MTU below 68), a missing required field. The driver ",
        "fails the Pod at prepare time",
    ),
    rule(
        "config.driver-schema.custom",
        "driver",
        WARNING,
        ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass"),
        "spec.devices.config[i].opaque.parameters | spec.config[i].opaque.parameters",
        "opaque parameters do not fit a schema given by `--driver-schemas DIR` or a policy's `driverSchemas` ",
        "(a warning: how strictly the driver decodes is its author's to say; raise it with the policy's `rules:`)",
    ),
    rule(
        "config.driver-schema.unknown-kind",
        "driver",
        INFO,
        ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass"),
        "spec.devices.config[i].opaque.parameters",
        "opaque parameters of a driver draguard has schemas for, with an apiVersion and kind none of them ",
        "checks (not checked; the note lists the known ones). Parameters of a driver without schemas are skipped",
    ),
    rule(
        "class.extended-resource-name",
        "api",
        ERROR,
        ("DeviceClass",),
        "spec.extendedResourceName",
        "extendedResourceName is an extended resource name (the implicit deviceclass prefix is reserved)",
    ),
    inventory(
        "class.extended-resource-name-clash",
        "xobj",
        WARNING,
        ("DeviceClass",),
        "spec.extendedResourceName",
        "several DeviceClasses declare the same extendedResourceName; only one serves it (newest "
        "creationTimestamp, then the smaller name)",
    ),
    rule(
        "class.selectors",
        "api",
        ERROR,
        ("DeviceClass",),
        "spec.selectors[k].cel.expression",
        "At most 32 selectors, each with cel.expression that compiles to bool within the cost limit",
    ),
    rule(
        "device.attribute-value",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].attributes[<name>]",
        "each attribute sets exactly one of int/bool/string/version/ints/bools/strings/versions; lists "
        "non-empty; strings ≤64 bytes; versions semver 2.0.0 ≤64 bytes",
    ),
    rule(
        "device.attributes",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].attributes",
        "attribute names must be QualifiedNames: C identifier ≤32, optional `<domain>/` (driver-name "
        "rules, ≤63)",
    ),
    rule(
        "device.binding-conditions",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].bindingConditions",
        "bindingConditions and bindingFailureConditions: ≤4 label names each, no duplicates, no "
        "overlap, each list requires the other",
    ),
    rule(
        "device.capacity",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].capacity",
        "capacity names must be QualifiedNames (same rules as attribute names); unchanged capacity is "
        "not re-checked on update",
    ),
    rule(
        "device.compat-groups",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].consumesCounters[j].compatibilityGroups",
        "consumesCounters[].compatibilityGroups: at most 2 names per entry, unique, each a DNS label "
        "(null and [] mean unset)",
    ),
    rule(
        "device.consumes-counters",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].consumesCounters",
        "consumesCounters: at most 2 entries, unique counterSet (DNS label), counters non-empty, at "
        "most 32, DNS-label names",
    ),
    rule(
        "device.name",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].name",
        "device name must be a DNS label",
    ),
    rule(
        "device.node-allocatable-resources",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].nodeAllocatableResources[<resource>]",
        "nodeAllocatableResources: node-allocatable resource names only; mapping and/or overhead; "
        "capacityKey ⇔ capacityMultiplier, capacityKey names a device capacity, multipliers > 0, "
        "overheads ≥ 0",
    ),
    rule(
        "device.node-selection",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i]",
        "device nodeName/nodeSelector/allNodes only with spec.perDeviceNodeSelection: true, and then "
        "exactly one per device",
    ),
    rule(
        "device.qualified-name-slashes",
        "lint",
        WARNING,
        ("ResourceSlice",),
        "spec.devices[i].attributes | spec.devices[i].capacity",
        "attribute or capacity name with more than one `/` (accepted by the API server today; a later "
        "release may reject it)",
    ),
    rule(
        "device.request-policy",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].capacity[<name>].requestPolicy",
        "capacity requestPolicy: only with allowMultipleAllocations; validValues xor validRange, "
        "default required and valid, sorted/unique/≤10 values, range and step arithmetic",
    ),
    rule(
        "device.size",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i]",
        "at most 32 attributes and capacities together, at most 48 attribute values (a list counts its "
        "length)",
    ),
    rule(
        "device.taints",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].taints",
        "at most 16 taints per device; key a label name, value a label value, effect "
        "None/NoSchedule/NoExecute",
    ),
    rule(
        "feasibility.busy",
        "alloc",
        WARNING,
        ("ResourceClaim",),
        "spec.devices.requests[i]",
        "`validate --feasibility`: a ResourceClaim no Pod in the input uses cannot be allocated now, "
        "but can once devices are freed or untainted (or waits for its DeviceClass): as admission "
        "answers busy; a warning, since a claim is allocated only when a Pod that uses it is scheduled",
    ),
    rule(
        "feasibility.infeasible",
        "alloc",
        ERROR,
        ("ResourceClaim", "Pod", *WORKLOAD_KINDS),
        "spec.devices.requests[i]",
        "`validate` (when the input holds devices for it; `--feasibility`: every one): the claim (or "
        "the Pod's claims) cannot be allocated on the cluster described by the input; the message is "
        "the allocator's explanation; a warning without --cluster or --feasibility (the open world: the "
        "input's devices only stand for the cluster's)",
    ),
    rule(
        "feasibility.open-world",
        "alloc",
        INFO,
        ("ResourceClaim", "Pod", *WORKLOAD_KINDS),
        "",
        "`validate` without --cluster or --feasibility: the claims and Pods whose DeviceClass or "
        "devices (or claims) are not in the input are not checked for feasibility; one finding counts "
        "them",
    ),
    rule(
        "feasibility.undecided",
        "alloc",
        WARNING,
        ("ResourceClaim", "Pod", *WORKLOAD_KINDS),
        "spec.devices.requests[i]",
        "`validate --feasibility`: the allocator's step/time budget ran out before it could decide "
        "(plain `validate` counts these in one feasibility.open-world info finding)",
    ),
    rule(
        "input.api-version",
        "input",
        ERROR,
        (),
        "apiVersion",
        "a resource.k8s.io version or kind the target API server does not serve: beta/alpha versions "
        "unless enabled with --runtime-config (then converted to v1 and validated), unknown versions",
    ),
    rule(
        "input.deprecated-api",
        "input",
        WARNING,
        (),
        "apiVersion",
        "a served but deprecated resource.k8s.io version (v1beta1 from 1.35, v1beta2 and the v1alpha3 "
        "DeviceTaintRule from 1.36): the API server's deprecation warning; `draguard convert --to v1` "
        "migrates it",
    ),
    rule(
        "input.duplicate-key",
        "input",
        ERROR,
        (),
        "<path of the key>",
        "a mapping repeats a key (kubectl's strict decoding rejects it)",
    ),
    rule(
        "input.duplicate-object",
        "input",
        ERROR,
        (),
        "metadata.name",
        "the input defines the same kind, namespace and name more than once with different content (one "
        "cluster holds one such object): the finding names the differing fields and the other "
        "definitions' file:line; the first valid definition is used, the later ones are left out. "
        "Identical copies (after defaulting) are one object: no finding. `validate` reports copies in "
        "different files as a warning (kustomize bases and overlays), an error within one file; "
        "`simulate` and `validate --feasibility` always as an error",
    ),
    rule(
        "input.helm-chart",
        "input",
        INFO,
        (),
        "",
        "a Helm chart found in a directory: its templates/ are not manifests until rendered and were "
        "not read; one finding per chart, naming the `helm template CHART | draguard validate -` to run",
    ),
    rule(
        "input.kustomize-patches",
        "input",
        INFO,
        (),
        "",
        "a kustomization found in a directory names patch files found there too: a patch is part of an "
        "object until `kubectl kustomize` builds it into its target, so they were not read; one finding "
        "per kustomization, naming the `kubectl kustomize DIR | draguard validate -` to run (a patch "
        "named on the command line is checked as an object)",
    ),
    rule(
        "input.ignore-annotation",
        "input",
        WARNING,
        (),
        "metadata.annotations[draguard.io/ignore]",
        "the `draguard.io/ignore` annotation names a rule id draguard does not have (a typo silences "
        "nothing); offline only: the webhook ignores these annotations",
    ),
    rule(
        "input.invalid-unicode",
        "input",
        WARNING,
        (),
        "<path of the string>",
        "a JSON string holds a lone UTF-16 surrogate escape, which kubectl and the API server read as U+FFFD",
    ),
    rule(
        "input.kind",
        "input",
        ERROR,
        (),
        "kind",
        "a document has apiVersion or kind but not both (a document with neither is not a Kubernetes "
        "object: skipped and counted)",
    ),
    rule(
        "input.not-checked",
        "input",
        WARNING,
        (),
        "",
        "the deadline of the run or request (`--deadline-seconds`) passed before this object (or the "
        "rest of this file) was validated: nothing is known about it; cross-object rules were not run",
    ),
    rule(
        "input.parse",
        "input",
        ERROR,
        (),
        "",
        "file or document cannot be parsed (YAML/JSON syntax, not an object)",
    ),
    rule(
        "input.skipped-file",
        "input",
        WARNING,
        (),
        "",
        "a FIFO, socket, device file or broken symlink inside a directory: skipped, never opened",
    ),
    rule(
        "input.template",
        "input",
        ERROR,
        (),
        "",
        "an unrendered Helm, Go or envsubst template: documents with `{{ }}` or `${VAR}` that do not "
        "parse as objects (one finding for the file, saying to render it first: `helm template ... | "
        "draguard validate -`), or that parse but are invalid as written (one finding standing for "
        "their errors); a warning for a file found in a directory (other tools' templates), an error "
        "for one named; a valid object holding such text in its strings (a ConfigMap's data) is valid",
    ),
    rule(
        "input.too-large",
        "input",
        ERROR,
        (),
        "",
        "a file, stdin or request body larger than the input limit (not read)",
    ),
    rule(
        "input.too-many-items",
        "input",
        ERROR,
        (),
        "<path of the list or map>",
        "a list or map in the spec or status of a DRA object has more than 1024 entries: no "
        "resource.k8s.io field allows that many (the API server rejects the object); it is not checked "
        "further",
    ),
    rule(
        "internal.engine-crash",
        "alloc",
        ERROR,
        ("ResourceClaim", "Pod", *WORKLOAD_KINDS),
        "",
        "the allocation engine failed on this Pod or claim (a draguard bug, or a resource limit such as "
        "MemoryError): no answer for it; the other Pods are still simulated",
    ),
    rule(
        "internal.rule-crash",
        "input",
        ERROR,
        (),
        "",
        "a rule failed on this object (a draguard bug: please report it)",
    ),
    rule(
        "meta.annotations",
        "api",
        ERROR,
        ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "ResourceClaim", "ResourceClaimTemplate", "Pod"),
        "metadata.annotations",
        "metadata.annotations keys must be qualified names (checked lower-cased); all together ≤256 KiB",
    ),
    rule(
        "meta.cluster-scoped-namespace",
        "lint",
        WARNING,
        ("ResourceSlice", "DeviceClass", "DeviceTaintRule"),
        "metadata.namespace",
        "a namespace on a cluster-scoped kind is ignored by the API server",
    ),
    rule(
        "meta.immutable",
        "api",
        ERROR,
        ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "ResourceClaim", "ResourceClaimTemplate", "Pod"),
        "metadata.name|namespace|uid|creationTimestamp",
        "on update: metadata.name, namespace, uid and creationTimestamp cannot change",
    ),
    rule(
        "meta.labels",
        "api",
        ERROR,
        ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "ResourceClaim", "ResourceClaimTemplate", "Pod"),
        "metadata.labels",
        "metadata.labels keys must be qualified names and values label values",
    ),
    rule(
        "meta.name",
        "api",
        ERROR,
        ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "ResourceClaim", "ResourceClaimTemplate", "Pod"),
        "metadata.name",
        "metadata.name (or a generateName prefix) must be a DNS subdomain; one of them is required",
    ),
    rule(
        "meta.namespace",
        "api",
        ERROR,
        ("ResourceSlice", "DeviceClass", "DeviceTaintRule", "ResourceClaim", "ResourceClaimTemplate", "Pod"),
        "metadata.namespace",
        "metadata.namespace must be a DNS label; namespaced kinds need one (checked as an error when "
        "the namespace cannot come from elsewhere)",
    ),
    inventory(
        "meta.namespace-implied",
        "lint",
        WARNING,
        ("ResourceClaim", "ResourceClaimTemplate", "Pod"),
        "metadata.namespace",
        "offline: a file creates one Namespace, but this namespaced object of the same file has no "
        "metadata.namespace: kubectl puts it in the current context's namespace, not in that one",
    ),
    rule(
        "meta.namespace-missing",
        "lint",
        INFO,
        ("ResourceClaim", "ResourceClaimTemplate", "Pod"),
        "metadata.namespace",
        "offline: a namespaced manifest without metadata.namespace gets kubectl's current-context "
        "namespace (an info: text output sums them up in one line; see meta.namespace-implied)",
    ),
    rule(
        "pod.claim-statuses",
        "api",
        ERROR,
        ("Pod",),
        "status.resourceClaimStatuses[i].name",
        "status.resourceClaimStatuses: each name matches a spec.resourceClaims entry, unique; "
        "resourceClaimName a valid claim name",
    ),
    rule(
        "pod.container-claims",
        "api",
        ERROR,
        ("Pod",),
        "spec.containers[i].resources.claims[j]",
        "containers[].resources.claims name a spec.resourceClaims entry, request is a DNS label, (name, "
        "request) unique; no claims in pod-level resources",
    ),
    rule(
        "pod.extended-resource-clash",
        "xobj",
        WARNING,
        ("Pod",),
        "spec.containers[i].resources.requests[<resource>]",
        "the webhook only (--extended-resources native): a Pod requests an extended resource that "
        "several DeviceClasses declare as extendedResourceName; only one serves it (newest "
        "creationTimestamp, then the smaller name)",
    ),
    rule(
        "pod.extended-resource-class",
        "xobj",
        WARNING,
        ("Pod",),
        "spec.containers[i].resources.requests[<resource>]",
        "the webhook only (--extended-resources native): a Pod requests "
        "deviceclass.resource.kubernetes.io/<class> and that DeviceClass does not exist: the Pod stays "
        "Pending until it is created",
    ),
    rule(
        "pod.extended-resource-count",
        "alloc",
        WARNING,
        ("Pod",),
        "spec.containers[i].resources.requests[<resource>]",
        "the webhook only (--extended-resources native): the scheduler's one claim for a Pod's extended "
        "resources (every container's requests together) needs more than 32 devices, the most a claim "
        "holds: no node serves the Pod through DRA (only a node whose device plugin advertises the "
        "resource could)",
    ),
    rule(
        "pod.extended-resource-status",
        "api",
        ERROR,
        ("Pod",),
        "status.extendedResourceClaimStatus",
        "status.extendedResourceClaimStatus: a valid claim name; each request mapping names a container "
        "and a DNS-label request, (container, resource) unique",
    ),
    rule(
        "pod.resource-claims",
        "api",
        ERROR,
        ("Pod",),
        "spec.resourceClaims[i]",
        "spec.resourceClaims: unique DNS-label names, exactly one of resourceClaimName / "
        "resourceClaimTemplateName (a DNS subdomain)",
    ),
    inventory(
        "pod.unknown-claim",
        "xobj",
        WARNING,
        ("Pod",),
        "spec.resourceClaims[i].resourceClaimName | spec.resourceClaims[i].resourceClaimTemplateName",
        "a Pod references a ResourceClaim or ResourceClaimTemplate that is not in the input in its "
        "namespace (checked only when the input contains objects of that kind; offline an info unless "
        "the input is the whole cluster (--cluster), the name is close to one of the input, or it is in "
        "another namespace)",
    ),
    inventory(
        "pool.completeness",
        "xobj",
        WARNING,
        ("ResourceSlice",),
        "spec.pool.resourceSliceCount",
        "the slices of a pool's highest generation in the input do not number resourceSliceCount "
        "(fewer: the rest must exist in the cluster; more: the pool can never be complete)",
    ),
    inventory(
        "pool.counter-exceeds-set",
        "xobj",
        WARNING,
        ("ResourceSlice",),
        "spec.devices[i].consumesCounters[j].counters[name]",
        "a single device consumes more of a counter than its counter set holds: it can never be allocated",
    ),
    inventory(
        "pool.counter-set-ref",
        "xobj",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].consumesCounters[j].counterSet | spec.devices[i].consumesCounters[j].counters[name]",
        "consumesCounters names a counter set or counter that no slice of the same pool (driver + pool, "
        "highest generation) publishes: the scheduler treats the pool as invalid",
    ),
    inventory(
        "pool.duplicate-counter-set",
        "xobj",
        ERROR,
        ("ResourceSlice",),
        "spec.sharedCounters[j].name",
        "the same counter-set name in two slices of one pool generation: the scheduler marks the pool "
        "invalid",
    ),
    inventory(
        "pool.duplicate-device",
        "xobj",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i].name",
        "the same device name in two slices of one pool generation: the scheduler marks the pool invalid",
    ),
    inventory(
        "pool.generation",
        "xobj",
        WARNING,
        ("ResourceSlice",),
        "spec.pool.generation | spec.pool.resourceSliceCount",
        "slice of an older pool generation (ignored by the scheduler), or slices of one generation that "
        "disagree on resourceSliceCount",
    ),
    inventory(
        "pool.unchecked",
        "xobj",
        INFO,
        ("ResourceSlice",),
        "spec.devices[i].consumesCounters[j].counterSet",
        "a counter-set reference could not be checked because the input holds only part of the pool",
    ),
    rule(
        "schema.integer-range",
        "schema",
        ERROR,
        SCHEMA_KINDS,
        "<path of the integer>",
        "An integer outside its Go type (int64, or int32 for some Pod fields): the API server cannot "
        "decode the object",
    ),
    rule(
        "schema.null",
        "schema",
        ERROR,
        SCHEMA_KINDS,
        "<path of the item>",
        "A list item or map value is null",
    ),
    rule(
        "schema.quantity",
        "schema",
        ERROR,
        SCHEMA_KINDS,
        "<path of the quantity>",
        "A Quantity the API server cannot parse (resource.ParseQuantity: `abc`, "
        "`1e9223372036854775808`, `1Qi`): it rejects the whole object when decoding it",
    ),
    rule(
        "schema.required",
        "schema",
        ERROR,
        SCHEMA_KINDS,
        "<path of the missing field>",
        "A field the API server rejects when it is missing or null (audited against upstream "
        "validation: webhook/schema/required.py; fields it accepts absent, such as pool.generation, are "
        "not reported)",
    ),
    rule(
        "schema.type",
        "schema",
        ERROR,
        SCHEMA_KINDS,
        "<path of the value>",
        "A value of the wrong JSON type (string/integer/boolean/object/array; Quantity = string or number)",
    ),
    rule(
        "schema.unknown-field",
        "schema",
        ERROR,
        SCHEMA_KINDS,
        "<path of the unknown field>",
        "A field that does not exist in the target Kubernetes version's API (strict decoding, as "
        "kubectl writes manifests), with a did-you-mean hint, or where v1 moved a v1beta1 field (a "
        "request's deviceClassName, selectors, count, ... are under `exactly`)",
    ),
    rule(
        "schema.unknown-field-dropped",
        "schema",
        WARNING,
        SCHEMA_KINDS,
        "<path of the unknown field>",
        "Stored state (`--cluster`, `serve --state`, simulate's cluster objects): a field the target "
        "version does not know. Drivers write with client-go, whose requests use the API server's "
        "default field validation (Warn): the field is dropped with a warning and the object stored "
        "without it, so it is kept without the field",
    ),
    inventory(
        "selector.attribute-type",
        "lint",
        WARNING,
        ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"),
        "spec.selectors[k].cel.expression | spec.devices.requests[i].exactly.selectors[k].cel.expression",
        "offline: a CEL selector uses an attribute as another type than the devices publish: `.bool` "
        "(or `.string`, ...) on its value, or a comparison with a literal of another type (never true)",
    ),
    inventory(
        "selector.matches-nothing",
        "lint",
        WARNING,
        ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"),
        "spec.selectors[k].cel.expression | spec.devices.requests[i].exactly.selectors[k].cel.expression",
        "offline: a DeviceClass's selectors, or a request's class and selectors together, match none of "
        "the devices of the input (or of --cluster) for the drivers they are about; with the values the "
        "devices have (without --cluster: an info unless a value is close to one the devices have or "
        "evaluation fails)",
    ),
    rule(
        "selector.qualified-name-key",
        "lint",
        WARNING,
        ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"),
        "spec.selectors[k].cel.expression | spec.devices.requests[i].exactly.selectors[k].cel.expression",
        "a CEL selector looks a fully-qualified name up as a domain "
        '(`device.attributes["dra.net/rdma"]`): the keys of device.attributes and device.capacity are '
        "domains, which have no `/`, so the lookup is an empty map on every device; with the fix "
        '(`device.attributes["dra.net"].rdma`), devices in the input or not',
    ),
    inventory(
        "selector.unknown-attribute",
        "lint",
        WARNING,
        ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"),
        "spec.selectors[k].cel.expression | spec.devices.requests[i].exactly.selectors[k].cel.expression",
        "offline: a CEL selector reads an attribute or capacity that no device of the input (or of "
        "--cluster) publishes in that domain: a runtime error on every device unless guarded; with a "
        "did-you-mean (without --cluster and without a close name: an info)",
    ),
    rule(
        "skew.dropped-field",
        "skew",
        WARNING,
        (),
        "<path of the dropped field>",
        "field dropped by the API server because its feature gate is off (or the field does not exist "
        "in the target Kubernetes version); dropped on create, kept on update when the old object uses "
        "it",
    ),
    rule(
        "skew.kind-disabled",
        "skew",
        ERROR,
        ("DeviceTaintRule",),
        "kind",
        "DeviceTaintRule while feature gate DRADeviceTaintRules is off: the API server does not serve "
        "the kind and rejects the object",
    ),
    rule(
        "slice.devices-and-counters",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec",
        "devices and sharedCounters are mutually exclusive in one slice",
    ),
    rule(
        "slice.devices.max",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices",
        "at most 128 devices, or 64 when any device has taints, consumesCounters or list-type attributes",
    ),
    rule(
        "slice.devices.unique",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.devices[i]",
        "device names are unique within the slice",
    ),
    rule(
        "slice.driver",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.driver",
        "spec.driver must be a driver name: non-empty, at most 63 bytes, lower-cased DNS subdomain",
    ),
    rule(
        "slice.driver.uppercase",
        "lint",
        WARNING,
        ("ResourceSlice",),
        "spec.driver",
        "spec.driver has upper-case characters: accepted (checked lower-cased) but the API server warns",
    ),
    rule(
        "slice.node-selection",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec",
        "exactly one of nodeName (non-empty node name), nodeSelector (exactly one term), allNodes: "
        "true, perDeviceNodeSelection: true",
    ),
    rule(
        "slice.partition-type-attribute",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.partitionTypeAttribute",
        "partitionTypeAttribute: a fully qualified attribute name, only on slices with "
        "counter-consuming devices, each of which must carry it as a string (bare name allowed in the "
        "driver's domain)",
    ),
    rule(
        "slice.pool",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.pool",
        "spec.pool: name ≤253 bytes of `/`-separated DNS subdomains, generation ≥ 0, resourceSliceCount > 0",
    ),
    rule(
        "slice.shared-counters",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.sharedCounters",
        "sharedCounters: at most 8 sets, unique DNS-label names, counters non-empty, at most 32, "
        "DNS-label names",
    ),
    rule(
        "slice.skip-node-operations",
        "api",
        ERROR,
        ("ResourceSlice",),
        "spec.skipNodeOperations",
        "skipNodeOperations: values NodePrepareResources/NodeUnprepareResources/*, no duplicates, "
        "NodePrepareResources only with NodeUnprepareResources or *",
    ),
    rule(
        "slice.skip-node-operations.star-alone",
        "lint",
        WARNING,
        ("ResourceSlice",),
        "spec.skipNodeOperations",
        'skipNodeOperations lists "*" together with other values (redundant; not enforced upstream)',
    ),
    rule(
        "status.dropped-on-create",
        "input",
        INFO,
        (),
        "status",
        "a ResourceClaim, DeviceTaintRule or Pod carries a `status` on CREATE: the API server resets it "
        "(it is written through the /status subresource), so it is neither stored nor validated",
    ),
    rule(
        "taint-rule.conditions",
        "api",
        ERROR,
        ("DeviceTaintRule",),
        "status.conditions",
        "status.conditions has at most 8 entries, each a valid metav1.Condition with a unique type",
    ),
    rule(
        "taint-rule.everything",
        "lint",
        WARNING,
        ("DeviceTaintRule",),
        "spec.deviceSelector",
        "an empty deviceSelector with effect NoExecute taints every device and evicts every user",
    ),
    rule(
        "taint-rule.selector",
        "api",
        ERROR,
        ("DeviceTaintRule",),
        "spec.deviceSelector.driver|pool|device",
        "deviceSelector driver, pool and device must be a driver name, a pool name and a DNS label",
    ),
    rule(
        "taint-rule.taint",
        "api",
        ERROR,
        ("DeviceTaintRule",),
        "spec.taint.key|value|effect",
        "taint key is a label name, value a label value, effect one of None, NoSchedule, NoExecute",
    ),
    rule(
        "tenant.admin-access",
        "tenant",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.adminAccess",
        "a tenant entry with adminAccess: false covers the namespace and a request asks for adminAccess: true "
        "(besides the namespace label upstream checks: claim.admin-access). Severity by the entry's mode: "
        "Enforce error (denied), Warn warning, Audit info",
    ),
    rule(
        "tenant.device-class",
        "tenant",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate", "Pod", *WORKLOAD_KINDS),
        "spec.devices.requests[i].exactly.deviceClassName | ...firstAvailable[j].deviceClassName | "
        "spec.resourceClaims[i].resourceClaimName|resourceClaimTemplateName",
        "a tenant entry covering the namespace lists allowedDeviceClasses and a request or subrequest names "
        "another class (a Pod: a claim or template it names, where the state or input holds it, does). "
        "Severity by the entry's mode: Enforce error (denied), Warn warning, Audit info",
    ),
    rule(
        "tenant.extended-resources",
        "tenant",
        ERROR,
        ("Pod", *WORKLOAD_KINDS),
        "spec.containers[i].resources.requests[<name>]",
        "a tenant entry with extendedResources: false covers the namespace and a container asks for an "
        "extended resource a DeviceClass serves (spec.extendedResourceName, or "
        "deviceclass.resource.kubernetes.io/<class>). Severity by the entry's mode",
    ),
    rule(
        "tenant.max-devices-per-claim",
        "tenant",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests",
        "a claim asks for more devices than a tenant entry's maxDevicesPerClaim: the sum over its requests "
        "of count (ExactCount), the largest subrequest (firstAvailable), or for allocationMode All what it "
        "would take on the cluster state (offline: the input's devices; not countable: a warning, never "
        "a denial). Severity by the entry's mode",
    ),
    rule(
        "tenant.max-devices-per-pod",
        "tenant",
        ERROR,
        ("Pod", *WORKLOAD_KINDS),
        "spec.resourceClaims",
        "a Pod's claims together (resourceClaimName and resourceClaimTemplateName references the cluster "
        "state or the input holds, counted as tenant.max-devices-per-claim counts) ask for more devices "
        "than a tenant entry's maxDevicesPerPod. Severity by the entry's mode",
    ),
    rule(
        "tenant.required-selector",
        "tenant",
        ERROR,
        ("ResourceClaim", "ResourceClaimTemplate"),
        "spec.devices.requests[i].exactly.selectors | ...firstAvailable[j].selectors",
        "a tenant entry's requiredSelector is missing from a request or subrequest (enforcement Deny; "
        "Mutate: the mutating webhook adds it, on CREATE in mode Enforce, and denies when adding it would "
        "exceed 32 selectors). Severity by the entry's mode",
    ),
    rule(
        "update.allocation",
        "api",
        ERROR,
        ("ResourceClaim",),
        "status.allocation|status.reservedFor",
        "on update: a set status.allocation may only be cleared, never changed; no new reservedFor "
        "entries once the claim is being deleted",
    ),
    rule(
        "update.immutable",
        "api",
        ERROR,
        ("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "Pod"),
        "spec.driver|spec.pool.name|spec.nodeName|spec",
        "on update: slice driver, pool.name and nodeName, claim and template spec, and pod claim fields "
        "cannot change",
    ),
    rule(
        "workload.counts",
        "api",
        ERROR,
        ("Deployment", "ReplicaSet", "StatefulSet", "Job", "CronJob", "ReplicationController"),
        "spec.replicas | spec.parallelism | spec.completions | spec.completionMode | spec.ordinals.start",
        "replicas, parallelism, completions and StatefulSet ordinals.start are non-negative; a Job's "
        "completionMode is NonIndexed or Indexed, and Indexed needs completions and at most 100000 "
        "parallelism",
    ),
    rule(
        "workload.ephemeral-containers",
        "api",
        ERROR,
        WORKLOAD_KINDS,
        "spec.template.spec.ephemeralContainers",
        "a Pod template (of a Deployment, Job, ...) may not have ephemeralContainers",
    ),
)

RULES: Mapping[str, Rule] = MappingProxyType({r.id: r for r in _ALL})
if len(RULES) != len(_ALL):  # pragma: no cover - a typo in the table above
    raise ValueError("a rule id is declared twice in webhook/model/catalogue.py")
