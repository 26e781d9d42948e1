"""CEL for DRA device selectors: compile (length, type, fields, cost) and evaluate over one device."""
