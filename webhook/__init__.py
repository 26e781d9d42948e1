"""draguard: validation, mutation and feasibility checks for Kubernetes DRA (resource.k8s.io/v1, v1.37)."""

__version__ = "0.1.0"
