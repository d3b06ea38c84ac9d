"""`kubectl ptah`: read a PtahMigration or PtahSchema, approve its plan, wait, ask for a read.

Verbs:
- `kubectl ptah migration NAME`: the status, readable: phase, conditions, history, plan, last
  run, unresolved run, journal (newest first). No SQL and no rows (PLUGIN-04).
- `kubectl ptah approve migration/NAME [--wait]`: shows the plan `status.plan` names and creates
  a PtahMigrationApproval of exactly that plan (name, UID, fingerprint) and the migration's UID.
  If the plan was replaced meanwhile, admission refuses it and nothing is approved (PLUGIN-05).
  `--plan NAME` and `--fingerprint F` (a prefix of at least 12 hex digits) pin the plan the
  person reviewed: when the plan waiting is another one, it says so and approves nothing.
  `--wait` waits for the run's verdict (PLUGIN-06).
- `kubectl ptah wait migration/NAME [--for=InSync] [--timeout=30m]`: waits for a phase.
- `kubectl ptah schema NAME`: a PtahSchema's status, readable: phase, conditions, drift
  summary, plan with severity and findings, last Apply, what was applied, journal. No SQL.
- `kubectl ptah plan schema/NAME [--no-sql]`: the published plan's identity, bindings,
  severity, findings and decision, then its generated SQL read from its chunks (PLUGIN-02:
  the person asked for the plan, which holds the SQL; each chunk and the whole are checked
  against the plan's digests first). `--applied` prints the plan status.applied records
  (PLUGIN-03). `--no-sql` leaves the SQL out.
- `kubectl ptah approve schema/NAME [--wait]`: as for a migration, a PtahSchemaApproval of the
  plan status.plan names (name, UID, fingerprint); it prints the plan's summary, not its SQL.
  `--wait` waits until the Apply of that plan was proved (lastApply verified).
- `kubectl ptah wait schema/NAME [--for=InSync]`: waits for a schema's phase.
- `kubectl ptah refresh migration/NAME [--wait]` (or schema/NAME): writes
  `operator.ptah.run/read-requested-at` later than any value the resource holds (RRQ-20);
  `--wait` waits for the read the request starts (RRQ-21).
- `kubectl ptah set-source migration/NAME oci://REGISTRY/REPO:TAG [--verification-policy
  CONFIGMAP/KEY]` (or schema/NAME): points the resource at another OCI artifact (PLUGIN-01).
  It changes spec.artifact.ociRef (and the verification policy when given; a resource that
  reads a ConfigMap or Git needs one), so the generation moves and the operator resolves,
  verifies and reads the new artifact at once; a plan of the old one retires.

`--kubeconfig`, `--context` and `-n/--namespace` work as in kubectl (KUBECONFIG is read; the
context's namespace is the default). The read verbs take `-o json|yaml`. Exit codes:
`errors.EXIT_CODES` (listed in --help). Errors are one readable line, never a traceback.

Where things are: `main` reads the arguments into a Command and hands it to its verb (`show`,
`approve`, `wait`, `refresh`, `set_source`), each written once over a `targets.Target`, the
row that says how a PtahMigration and a PtahSchema differ. `session` is the connection;
`follow` the list-then-watch of one object; `waits` when a wait is over (pure);
`migration_view` and `schema_view` what is printed (pure). `errors` holds the exit codes.
"""
