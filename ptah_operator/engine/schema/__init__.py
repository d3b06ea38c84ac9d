"""The declarative schema engine: desired schema -> inspect -> diff -> plan -> apply, and drift.

No Kubernetes here. The model (`model`) is what every other module speaks: introspection
(`introspect_postgresql`, `introspect_mysql`) and the desired-schema readers (`ddl`, `hcl`,
`desired`) produce it, `diff` compares two of them, `render` turns the changes into SQL per
dialect, `plan` freezes them into deterministic bytes, `apply` executes those bytes and
`drift` summarises them without ever printing SQL or row data.
"""
