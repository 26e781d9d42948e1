"""`draguard audit rbac`: a cluster's RBAC judged against the DRA hardening guidance (authz.py: the RBAC
authorizer's matching, checks.py: the findings)."""
