"""A run's configuration: the target API server (profile: version, feature gates), the policy file, the
per-run context the rules read, and where draguard's data (schemas, profiles) lives."""
