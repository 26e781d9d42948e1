"""Data package: generated JSON Schemas (installed as webhook._data.schemas)."""
