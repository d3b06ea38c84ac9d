"""What `kubectl ptah` prints about a PtahMigration, as pure functions of the API models.

The output is the resource's status made readable: the phase and its conditions, the history
reading, the plan, the last run, the unresolved run and the journal, newest first. It holds
versions, descriptions, checksums, digests, positions and error codes, and nothing else: a
migration's status carries no SQL and no row (PRIV-01, PRIV-02), and neither does this
(PLUGIN-04). Free-text fields the operator writes (messages) are shown on one line, cut short.
"""

from __future__ import annotations

from collections.abc import Sequence

from ptah_operator.api.common import PlanReference
from ptah_operator.api.constants import ConditionType
from ptah_operator.api.migration import (
    History,
    LastRun,
    PtahMigration,
    PtahMigrationStatus,
    UnresolvedRun,
)
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.cli.kubectl.view import (
    bound_source_line,
    condition_lines,
    field_line,
    journal_lines,
    one_line,
    operation_line,
    person,
    short,
    source_line,
    table,
    when,
)


def _versions(versions: Sequence[str], total: int | None = None) -> str:
    if not versions:
        return "-"
    listed = ", ".join(versions)
    if total is not None and total > len(versions):
        listed += f" (and {total - len(versions)} more)"
    return listed


# --- sections ----------------------------------------------------------------------------------


def _overview(migration: PtahMigration, status: PtahMigrationStatus) -> list[str]:
    meta = migration.metadata
    lines = [
        field_line("Name", meta.name or "-", ""),
        field_line("Namespace", meta.namespace or "-", ""),
        field_line("Phase", status.phase or "(none yet)", ""),
    ]
    for condition_type in (ConditionType.READY, ConditionType.PROGRESSING):
        condition = status.condition(condition_type)
        value = f"{condition.status} ({condition.reason})" if condition else "-"
        lines.append(field_line(condition_type.value, value, ""))
    lines += [
        field_line("Message", one_line(status.message), ""),
        field_line("Policy", f"apply {migration.spec.policy.apply}", ""),
        field_line("Source", source_line(status.source), ""),
        field_line("Operation", operation_line(status.active_operation), ""),
        field_line("Next read", when(status.next_reconciliation_time), ""),
        field_line("Read request", status.last_read_request or "-", ""),
    ]
    if meta.generation is not None:
        observed = status.observed_generation
        lines.append(
            field_line("Generation", f"{meta.generation} (observed {observed or '-'})", "")
        )
    return lines


def _history(history: History | None) -> list[str]:
    if history is None:
        return ["", "History: no reading yet"]
    by = f" by {history.operation_id}" if history.operation_id else ""
    lines = [
        "",
        f"History (read {when(history.read_at)}{by}):",
        field_line("Verdict", history.verdict or "-"),
        field_line("Current version", history.current_version or "(empty history)"),
        field_line("Applied", str(history.applied_count)),
        field_line(
            "Pending",
            f"{history.pending_count}"
            + (
                f" ({_versions(history.pending_versions, history.pending_count)})"
                if history.pending_versions
                else ""
            ),
        ),
    ]
    if history.checkpoint_version:
        lines.append(
            field_line("Checkpoint", f"{history.checkpoint_version} (covers the versions below it)")
        )
    if history.dirty is not None:
        description = f" ({history.dirty.description})" if history.dirty.description else ""
        lines.append(
            field_line(
                "Dirty",
                f"{history.dirty.version}{description}: a failed or interrupted run left this "
                "revision row; a person must repair it",
            )
        )
    if history.modified_versions:
        lines.append(
            field_line(
                "Modified",
                f"{_versions(history.modified_versions)}: applied files that no longer hash "
                "to what the database recorded",
            )
        )
    if history.out_of_order_versions:
        lines.append(
            field_line(
                "Out of order",
                f"{_versions(history.out_of_order_versions)}: pending below the current version",
            )
        )
    if history.ahead is not None:
        lines.append(
            field_line(
                "Ahead",
                f"the database is at {history.ahead.database_version}; the artifact ends at "
                f"{history.ahead.artifact_version or '(nothing)'}",
            )
        )
    lines += [
        field_line("Fingerprint", short(history.fingerprint)),
        field_line("Database", short(history.target_identity_digest)),
    ]
    if history.revisions:
        rows = [
            [
                r.version,
                r.state.value,
                short(r.checksum),
                str(r.execution_millis) if r.execution_millis is not None else "-",
                when(r.applied_at),
                r.description or "",
            ]
            for r in history.revisions
        ]
        lines += [
            "  Revisions (newest first):",
            *table(
                ["VERSION", "STATE", "CHECKSUM", "MILLIS", "APPLIED AT", "DESCRIPTION"],
                rows,
                indent="    ",
            ),
        ]
    return lines


def plan_lines(reference: PlanReference, plan: PtahMigrationPlan | None) -> list[str]:
    """The plan: identity, the range it covers, and each version with its checksum."""
    uid = f" (UID {reference.uid})" if reference.uid else ""
    lines = [f"Plan {reference.name}{uid}:"]
    if plan is None:
        lines += [
            field_line("Fingerprint", reference.fingerprint or "-"),
            "  (the plan object could not be read)",
        ]
        return lines
    spec = plan.spec
    lines += [
        field_line("Fingerprint", spec.fingerprint),
        field_line(
            "Versions",
            f"{spec.from_version or '(empty history)'} -> {spec.to_version} "
            f"({len(spec.versions)} to apply)",
        ),
        field_line("History", short(spec.history_fingerprint)),
        field_line("Database", short(spec.target_identity_digest)),
        field_line("Transaction mode", spec.transaction_mode or "(Ptah picks)"),
    ]
    rows = [[v.version, v.checksum, v.description or ""] for v in spec.versions]
    lines += table(["VERSION", "CHECKSUM", "DESCRIPTION"], rows, indent="    ")
    return lines


def render_plan(
    migration: PtahMigration, reference: PlanReference, plan: PtahMigrationPlan | None
) -> str:
    """`kubectl ptah plan`: the plan, what it is bound to, and whether it waits for a person.

    A migration plan holds versions, descriptions and checksums; the SQL stays in the source.
    """
    policy = migration.spec.policy.apply
    lines = plan_lines(reference, plan)
    if plan is not None:
        spec = plan.spec
        lines += [
            "",
            "Bound to (a change to any of these retires the plan):",
            field_line("Source", bound_source_line(spec.source)),
            field_line("History", short(spec.history_fingerprint)),
            field_line("Database", short(spec.target_identity_digest)),
            field_line(
                "Executor",
                short(spec.execution_binding.digest) if spec.execution_binding.digest else "-",
            ),
        ]
    decision = {
        "OnApproval": "waits for a PtahMigrationApproval naming this plan (kubectl ptah approve)",
        "Always": "runs as soon as it is published (policy Always)",
        "Never": "is published and never runs (policy Never)",
    }[str(policy)]
    lines += ["", f"Decision: the plan {decision}."]
    return "\n".join(lines)


def _last_run(run: LastRun | None) -> list[str]:
    if run is None:
        return ["", "Last run: none (no Apply has happened)"]
    lines = [
        "",
        f"Last run {run.operation_id}: {run.outcome}",
        field_line("Plan", f"{run.plan.name} ({short(run.plan.fingerprint)})"),
    ]
    if run.approval is not None:
        lines.append(
            field_line("Authorized by", f"approval {run.approval.name}, {person(run.approver)}")
        )
    elif run.authorization is not None:
        lines.append(field_line("Authorized by", str(run.authorization)))
    lines += [
        field_line("Job", run.job.name if run.job else "-"),
        field_line("Started", when(run.started_at)),
        field_line("Finished", when(run.finished_at)),
        field_line("Applied", _versions(run.applied_versions)),
    ]
    if run.failure is not None:
        failure = run.failure
        parts = [f"version {failure.version}"]
        if failure.statement_index is not None:
            parts.append(f"statement {failure.statement_index}")
        if failure.sqlstate is not None:
            parts.append(f"SQLSTATE {failure.sqlstate}")
        if failure.mysql_errno is not None:
            parts.append(f"errno {failure.mysql_errno}")
        lines.append(field_line("Failed at", ", ".join(parts)))
    lines.append(field_line("Database", short(run.target_identity_digest)))
    if run.verification is not None:
        v = run.verification
        lines.append(field_line("Verified", f"{v.outcome} at {when(v.read_at)}"))
    if run.message:
        lines.append(field_line("Message", one_line(run.message)))
    return lines


def _unresolved(run: UnresolvedRun | None) -> list[str]:
    if run is None:
        return []
    job = run.job.name if run.job else "-"
    return [
        "",
        f"Unresolved run {run.operation_id}: {run.outcome}"
        + (" (restored from metadata)" if run.restored else ""),
        field_line("Plan", f"{run.plan.name} ({short(run.plan.fingerprint)})"),
        field_line("Job", job),
        field_line("Finished", when(run.finished_at)),
        field_line("Planned database", short(run.planned_target_digest)),
        field_line("Database", short(run.target_identity_digest)),
        "  Nothing applies until a history read of the planned database finds nothing pending,",
        f"  or a PtahMigrationRunAcknowledgment names operation {run.operation_id}, "
        f"plan {run.plan.name} and Job {job}.",
    ]


def render_migration(migration: PtahMigration, plan: PtahMigrationPlan | None = None) -> str:
    """`kubectl ptah migration NAME`: everything the status says, readable."""
    status = migration.status or PtahMigrationStatus()
    lines = _overview(migration, status)
    lines += condition_lines(status)
    lines += _history(status.history)
    lines.append("")
    if status.plan is not None:
        lines += plan_lines(status.plan, plan)
    else:
        lines.append("Plan: none")
    lines += _last_run(status.last_run)
    lines += _unresolved(status.unresolved_run)
    lines += journal_lines(status.journal)
    return "\n".join(lines) + "\n"


def render_approval_summary(migration: PtahMigration, plan: PtahMigrationPlan) -> str:
    """What `kubectl ptah approve` is about to approve: the plan, exactly."""
    meta = migration.metadata
    lines = [
        f"Approving plan {plan.metadata.name} of migration {meta.namespace}/{meta.name}:",
        *plan_lines(
            PlanReference(name=plan.metadata.name or "-", uid=plan.metadata.uid, fingerprint=None),
            plan,
        )[1:],
    ]
    return "\n".join(lines) + "\n"
