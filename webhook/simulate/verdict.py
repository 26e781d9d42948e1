"""The verdict of a claim (or Pod) asked on its own, as admission answers a CREATE: feasible now; busy —
not now, but on the same cluster with every device free and untainted (or waiting for something that
may appear: its DeviceClass, a pool being republished); unsatisfiable — not even then; undecided — a
budget or deadline ran out. Admission (webhook.admission.feasibility) and `simulate`'s claims that no
Pod uses share this decision and its wording."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from webhook.model.text import one_line

Verdict = Literal["feasible", "busy", "unsatisfiable", "undecided"]


class Answer(Protocol):
    """What a decision reads of an allocation attempt (webhook.simulate.run.PodSimulation)."""

    @property
    def feasible(self) -> bool | None: ...
    @property
    def waits(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def undecided_by(self) -> str | None: ...


A = TypeVar("A", bound=Answer)


@dataclass(frozen=True)
class Decision(Generic[A]):
    verdict: Verdict
    message: str  # one line ("" when feasible)
    sim: A  # the answer that explains it: now, or on the empty cluster (unsatisfiable)


def reason(sim: Answer) -> str:
    """Why a run has no (or not this) answer, on one line: what ran out, else its reason."""
    return one_line(sim.undecided_by or sim.reason or sim.error or "the claims cannot be allocated")


def decide(now: A, on_empty: Callable[[], A], what: str, undecided_tail: str = "") -> Decision[A]:
    """`now` (the answer on the cluster as it is) and, only when that is no, `on_empty()` (the same
    cluster with nothing allocated and device taints ignored) as one verdict about `what` (e.g.
    `ResourceClaim "ns/name"`). `undecided_tail` ends an undecided message (admission: "; admitted")."""
    if now.feasible:
        return Decision("feasible", "", now)
    if now.feasible is None:
        return Decision("undecided", f"{what}: feasibility undecided ({reason(now)}){undecided_tail}", now)
    if now.waits:  # an allocation error that ends when the cluster changes, not the claim
        return Decision("busy", f"{what} cannot be allocated now and waits: {reason(now)}", now)
    empty = on_empty()
    if empty.feasible:
        message = (
            f"{what} cannot be allocated now (it will wait until devices are freed or untainted): "
            f"{reason(now)}"
        )
        return Decision("busy", message, now)
    if empty.feasible is None:
        message = (
            f"{what} cannot be allocated now ({reason(now)}); feasibility on an empty cluster undecided "
            f"({reason(empty)}){undecided_tail}"
        )
        return Decision("undecided", message, now)
    message = (
        f"{what} can never be allocated on this cluster, not even with every device free and untainted: "
        f"{reason(empty)}"
    )
    return Decision("unsatisfiable", message, empty)
