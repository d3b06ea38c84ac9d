"""Versioned migrations: the revision table, history verdicts and runs with honest outcomes.

A library with a command line of its own (`ptah migrations ...`, see cli.py), usable with no
Kubernetes at all. See docs/engine-migrations.md for the formats and the contract.
"""
