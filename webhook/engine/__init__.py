"""Embedded allocation engine: decides as the v1.37 scheduler's structured allocator does."""

from webhook.engine.allocate import allocate
from webhook.engine.outcome import Budget, ClaimResult, Deadline, DeviceResult, Outcome

__all__ = ["Budget", "ClaimResult", "Deadline", "DeviceResult", "Outcome", "allocate"]
