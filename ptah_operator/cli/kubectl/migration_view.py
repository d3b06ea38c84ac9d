"""What `kubectl ptah` prints about a PtahMigration, as pure functions of the API models.

The output is the resource's status made readable: the phase and its conditions, the history
reading, the plan, the last run, the unresolved run and the journal, newest first. It holds
versions, descriptions, checksums, digests, positions and error codes, and nothing else: a
migration's status carries no SQL and no row (PRIV-01, PRIV-02), and neither does this
(PLUGIN-04). Free-text fields the operator writes (messages) are shown on one line, cut short.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ptah_operator.api.constants import ApplyPolicy, ConditionType
from ptah_operator.cli.kubectl.manifest import empty
from ptah_operator.cli.kubectl.view import (
    UNREADABLE_PLAN,
    approving_heading,
    bound_lines,
    condition_lines,
    decision_lines,
    document,
    field_line,
    journal_lines,
    one_line,
    overview_lines,
    plan_heading,
    plan_line,
    ran_lines,
    short,
    table,
    verified_line,
    when,
)

if TYPE_CHECKING:
    from ptah_operator.api.common import PlanReference
    from ptah_operator.api.migration import (
        History,
        LastRun,
        PtahMigration,
        PtahMigrationStatus,
        UnresolvedRun,
    )
    from ptah_operator.api.plans import PtahMigrationPlan


def _versions(versions: Sequence[str], total: int | None = None) -> str:
    if not versions:
        return "-"
    listed = ", ".join(versions)
    if total is not None and total > len(versions):
        listed += f" (and {total - len(versions)} more)"
    return listed


# --- sections ----------------------------------------------------------------------------------


def _overview(migration: PtahMigration, status: PtahMigrationStatus) -> list[str]:
    conditions = (ConditionType.READY, ConditionType.PROGRESSING)
    policy = f"apply {migration.spec.policy.apply}"
    return overview_lines(migration.metadata, status, status.phase, conditions, policy)


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
    lines += _history_findings(history)
    lines += [
        field_line("Fingerprint", short(history.fingerprint)),
        field_line("Database", short(history.target_identity_digest)),
    ]
    lines += _revisions(history)
    return lines


def _history_findings(history: History) -> list[str]:
    """What in the reading stops or limits a run: checkpoint, dirty, modified, out of order,
    ahead."""
    lines: list[str] = []
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
    return lines


def _revisions(history: History) -> list[str]:
    if not history.revisions:
        return []
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
    headers = ["VERSION", "STATE", "CHECKSUM", "MILLIS", "APPLIED AT", "DESCRIPTION"]
    return ["  Revisions (newest first):", *table(headers, rows, indent="    ")]


def plan_lines(reference: PlanReference, plan: PtahMigrationPlan | None) -> list[str]:
    """The plan: identity, the range it covers, and each version with its checksum."""
    lines = [plan_heading(reference)]
    if plan is None:
        return [*lines, field_line("Fingerprint", reference.fingerprint or "-"), UNREADABLE_PLAN]
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


_DECISIONS = {
    ApplyPolicy.ON_APPROVAL: "waits for a PtahMigrationApproval naming this plan "
    "(kubectl ptah approve)",
    ApplyPolicy.ALWAYS: "runs as soon as it is published (policy Always)",
    ApplyPolicy.NEVER: "is published and never runs (policy Never)",
}


def render_plan(
    migration: PtahMigration, reference: PlanReference, plan: PtahMigrationPlan | None
) -> str:
    """`kubectl ptah plan`: the plan, what it is bound to, and whether it waits for a person.

    A migration plan holds versions, descriptions and checksums; the SQL stays in the source.
    """
    lines = plan_lines(reference, plan)
    if plan is not None:
        spec = plan.spec
        lines += bound_lines(
            spec.source,
            spec.execution_binding.digest,
            field_line("History", short(spec.history_fingerprint)),
            field_line("Database", short(spec.target_identity_digest)),
        )
    lines += decision_lines(_DECISIONS[migration.spec.policy.apply])
    return "\n".join(lines)


def _last_run(run: LastRun | None) -> list[str]:
    if run is None:
        return ["", "Last run: none (no Apply has happened)"]
    lines = [
        "",
        f"Last run {run.operation_id}: {run.outcome}",
        plan_line(run.plan),
        *ran_lines(run),
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
    if run.stopped_at is not None:
        stop = run.stopped_at
        where = f"version {stop.version}"
        if stop.statements_applied is not None and stop.statements_total is not None:
            where += f", {stop.statements_applied} of {stop.statements_total} statements committed"
        lines.append(field_line("Stopped in", where))
    lines.append(field_line("Database", short(run.target_identity_digest)))
    if run.verification is not None:
        lines.append(verified_line(run.verification.outcome, run.verification.read_at))
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
        plan_line(run.plan),
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
    status = migration.status or empty("PtahMigrationStatus")
    return document(
        _overview(migration, status),
        condition_lines(status),
        _history(status.history),
        [""],
        plan_lines(status.plan, plan) if status.plan is not None else ["Plan: none"],
        _last_run(status.last_run),
        _unresolved(status.unresolved_run),
        journal_lines(status.journal),
    )


def render_approval_summary(migration: PtahMigration, plan: PtahMigrationPlan) -> str:
    """What `kubectl ptah approve` is about to approve: the plan, exactly."""
    from ptah_operator.api.common import PlanReference

    lines = [
        approving_heading(plan.metadata.name, "migration", migration.metadata),
        *plan_lines(
            PlanReference(name=plan.metadata.name or "-", uid=plan.metadata.uid, fingerprint=None),
            plan,
        )[1:],
    ]
    return "\n".join(lines) + "\n"
