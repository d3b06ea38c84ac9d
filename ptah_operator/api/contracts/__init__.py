"""The two documents the manager and the runner exchange, typed once for both sides.

- `operation.py`: `ptah.run/operation/v1`, what a Job is asked to do (env `PTAH_OPERATION`).
  The manager builds it from these models; the runner reads it with them and refuses anything
  they do not accept.
- `result.py`: `ptah.run/result/v1`, what the runner reports; the manager reads it with
  these models (reconcile/reports.py `read_report`).
- `codes.py`: the words both sides agree on and that cost nothing to import: the contract
  names, the `error.reason` values and the runner's exit codes.
"""
