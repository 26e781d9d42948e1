"""Validation rules: one function per rule id, registered in `registry`."""
