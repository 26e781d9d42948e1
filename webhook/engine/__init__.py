"""Embedded allocation engine: decides as the v1.37 scheduler's structured allocator does."""

from webhook.engine.allocate import allocate
from webhook.engine.outcome import Budget, ClaimResult, Deadline, DeviceResult, Outcome
from webhook.engine.warm import warm_up

__all__ = ["Budget", "ClaimResult", "Deadline", "DeviceResult", "Outcome", "allocate", "warm_up"]
