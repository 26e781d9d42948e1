"""Data package: version profiles and policy files (installed as webhook._data.policies)."""
