"""Sources of the files an operation reads: Git repositories and OCI artifacts.

`git` (dulwich, smart HTTP) and `oci` (the OCI distribution API over HTTP) return the selected
files as `dict[name, bytes]`, flat and named by the rules of `files`; `verification` holds an
OCI source's verification policy. Failures are `errors.SourceError`s carrying the reason a
result reports. No Kubernetes here, and nothing of the operator's API (docs/engine-sources.md).
"""
