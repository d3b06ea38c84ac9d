"""Ptah operator: converge databases with declared schemas and versioned migrations."""

__version__ = "0.1.0"
