"""Structural layer: JSON Schemas generated from the Kubernetes v1.37 API models, and a fast checker."""
