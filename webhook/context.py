"""What a rule may know besides the object: the target profile (version + feature gates), the old
object on updates, and — in the webhook — the namespace's labels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webhook.profile import Profile, load_profile


@dataclass
class Context:
    profile: Profile = field(default_factory=lambda: load_profile("1.37"))
    old: dict[str, Any] | None = None  # the stored object on UPDATE; None on CREATE / offline
    namespace_labels: Mapping[str, str] | None = None  # None = unknown (offline): namespace rules skip
    operation: str = "CREATE"  # "CREATE" | "UPDATE"
    lint: bool = True  # offline: strict where upstream enforcement is unconfirmed; webhook: permissive

    def enabled(self, gate: str) -> bool:
        """Whether a feature gate is on in the target profile."""
        return self.profile.enabled(gate)
