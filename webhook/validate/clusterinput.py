"""`--cluster DIR`: the objects of the cluster the input is meant for (e.g. the output of `kubectl get
resourceslices,deviceclasses,resourceclaims,devicetaintrules,nodes,namespaces -A -o yaml`).

They are read and validated with the input, so cross-object rules, the selector lint and simulations
see the input *and* the cluster, and the input is taken as complete: a reference to an object neither
holds is a real problem. The cluster's own objects are not reported (the API server already accepted
them), except those with errors, which a simulation leaves out; its Pods and unallocated claims are not
simulated (they are the cluster's, not the input's). Objects in a beta or alpha version are converted to
v1 (`stored_context`): a dump of an older cluster is its stored state, not requests."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from webhook.config.context import Context
from webhook.convert.served import EVERY_VERSION
from webhook.io.files import STDIN, discover_all
from webhook.model.report import Report

DROPPED = "schema.unknown-field-dropped"  # webhook.schema.structural.DROPPED (a layer above this one)


def stored_context(ctx: Context) -> Context:
    """`ctx` for objects a cluster stores (`--cluster`, the webhook's state directory): they exist, so a
    beta or alpha version the API server has is read and converted to v1 as it stores them, whatever
    versions its `--runtime-config` would serve to new requests; a claim keeps its status (its allocation)
    as stored, validated; and a field the target version does not know is dropped with a warning, not an
    error (`field_validation` Warn: what the API server stores)."""
    return dataclasses.replace(ctx, runtime_config=EVERY_VERSION, as_stored=True, field_validation="Warn")


@dataclass(frozen=True)
class ClusterInput:
    files: tuple[str, ...] = ()  # the cluster's files that are not also input files

    @classmethod
    def of(cls, inputs: Iterable[str], cluster: Iterable[str]) -> ClusterInput:
        """The files of the `cluster` paths (directories expanded), without those the input names too.
        Raises `UnreadableInput` for a path that does not exist."""
        paths = [str(p) for p in cluster]
        if not paths:
            return cls()
        if STDIN in paths:
            from webhook.model.errors import UsageError

            raise UsageError("--cluster takes files or directories, not - (stdin is for the input)")
        mine = set(discover_all([str(p) for p in inputs if str(p) != STDIN]).files)
        return cls(tuple(f for f in discover_all(paths).files if f not in mine))

    def __contains__(self, source: object) -> bool:
        return source in self.files

    def drop_from(self, report: Report) -> None:
        """Leave the cluster's objects out of `report` (counted in `report.cluster`), except those with
        errors, and those stored without a field the target version does not know (the warning says what
        the cluster's writer sent that has no effect)."""
        if not self.files:
            return
        mine = set(self.files)
        kept = []
        for o in report.objects:
            if o.source in mine and not o.errors and not any(v.rule == DROPPED for v in o.violations):
                report.cluster += 1
            else:
                kept.append(o)
        report.objects = kept
