"""What `kubectl ptah` prints about a PtahMigration, as pure functions of the API models.

The output is the resource's status made readable: the phase and its conditions, the history
reading, the plan, the last run, the unresolved run and the journal, newest first. It holds
versions, descriptions, checksums, digests, positions and error codes, and nothing else: a
migration's status carries no SQL and no row (PRIV-01, PRIV-02), and neither does this
(PLUGIN-04). Free-text fields the operator writes (messages) are shown on one line, cut short.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from ptah_operator.api.common import (
    ActiveOperation,
    PlanReference,
    PlanSourceBinding,
    SourceRecord,
    StatusCommon,
    UserInfo,
)
from ptah_operator.api.constants import ConditionType, SourceKind
from ptah_operator.api.fields import format_time
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.api.migration import (
    History,
    LastRun,
    PtahMigration,
    PtahMigrationStatus,
    UnresolvedRun,
)
from ptah_operator.api.plans import PtahMigrationPlan

MESSAGE_WIDTH = 200
_LABEL_WIDTH = 18


def short(value: str | None) -> str:
    """A digest as people compare them (sha256: and 12 hex digits); '-' when absent."""
    if value is None:
        return "-"
    algorithm, sep, rest = value.partition(":")
    if sep and algorithm == "sha256" and len(rest) == 64:
        return f"sha256:{rest[:12]}"
    return value


def when(value: datetime | None) -> str:
    return format_time(value) if value is not None else "-"


def one_line(text: str | None, width: int = MESSAGE_WIDTH) -> str:
    """A message on one line, cut at `width` characters."""
    if not text:
        return "-"
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def person(user: UserInfo | None) -> str:
    if user is None:
        return "-"
    groups = f" ({', '.join(user.groups)})" if user.groups else ""
    return user.username + groups


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], indent: str = "  ") -> list[str]:
    """Columns padded to their widest cell, two spaces apart, like kubectl get."""
    all_rows = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(headers))]
    lines = []
    for r in all_rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(r)]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines


def field_line(label: str, value: str, indent: str = "  ") -> str:
    return f"{indent}{(label + ':').ljust(_LABEL_WIDTH)}{value}"


def _versions(versions: Sequence[str], total: int | None = None) -> str:
    if not versions:
        return "-"
    listed = ", ".join(versions)
    if total is not None and total > len(versions):
        listed += f" (and {total - len(versions)} more)"
    return listed


# --- sections ----------------------------------------------------------------------------------


def source_line(record: SourceRecord | None) -> str:
    if record is None:
        return "-"
    if record.kind == SourceKind.ARTIFACT:
        verdict = (
            f", verified {record.artifact_type or ''}".rstrip()
            if record.verified_at is not None
            else ", not verified"
        )
        return f"Artifact {record.oci_ref or '-'} @ {short(record.oci_digest)}{verdict}"
    if record.kind == SourceKind.CONFIG_MAP:
        return f"ConfigMap, content {short(record.content_digest)}, snapshot {record.snapshot_name or '-'}"
    commit = record.commit[:12] if record.commit else "-"
    return f"Git {record.repository or '-'} {record.ref or ''} @ {commit}, content {short(record.content_digest)}"


def bound_source_line(binding: PlanSourceBinding) -> str:
    if binding.kind == SourceKind.ARTIFACT:
        return (
            f"Artifact @ {short(binding.oci_digest)}, "
            f"verification policy {short(binding.verification_policy_digest)}"
        )
    return f"{binding.kind}, content {short(binding.content_digest)}"


def operation_line(active: ActiveOperation | None) -> str:
    if active is None:
        return "none running"
    parts = [f"{active.type} {active.operation_id}", f"attempt {active.attempt}"]
    if active.job_name:
        parts.append(f"Job {active.job_name}")
    if active.retry_at is not None:
        parts.append(f"retry at {when(active.retry_at)}")
    if active.last_failure_reason:
        parts.append(f"last failure {active.last_failure_reason}")
    return ", ".join(parts)


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


def condition_lines(status: StatusCommon) -> list[str]:
    if not status.conditions:
        return []
    rows = [
        [c.type, c.status.value, c.reason, when(c.last_transition_time), one_line(c.message, 80)]
        for c in status.conditions
    ]
    return ["", "Conditions:", *table(["TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"], rows)]


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


def entry_details(entry: JournalEntry) -> str:
    parts: list[str] = []
    if entry.operation is not None:
        parts.append(str(entry.operation))
    if entry.operation_id:
        parts.append(entry.operation_id)
    if entry.plan_name:
        parts.append(f"plan {entry.plan_name}")
    if entry.approval_name:
        by = f" by {entry.approver.username}" if entry.approver else ""
        parts.append(f"approval {entry.approval_name}{by}")
    if entry.acknowledgment_name:
        by = f" by {entry.acknowledged_by.username}" if entry.acknowledged_by else ""
        parts.append(f"acknowledgment {entry.acknowledgment_name}{by}")
    if entry.authorization is not None and entry.approval_name is None:
        parts.append(f"by {entry.authorization}")
    if entry.job_name:
        parts.append(f"Job {entry.job_name}")
    if entry.versions_applied is not None:
        parts.append(f"{entry.versions_applied} applied")
    if entry.stopped_at:
        parts.append(f"stopped at {entry.stopped_at}")
    if entry.count is not None and entry.count > 1:
        parts.append(f"{entry.count} times")
    if entry.approval_required:
        parts.append("approval required")
    if entry.replaced is not None:
        parts.append(f"replaced {entry.replaced.name}")
    return ", ".join(parts)


def journal_lines(journal: Journal | None) -> list[str]:
    if journal is None or not journal.entries:
        return ["", "Journal: empty"]
    since = f"; complete since {when(journal.covered_since)}" if journal.covered_since else ""
    entries = sorted(journal.entries, key=lambda e: e.time, reverse=True)
    rows = [
        [
            when(e.time),
            e.type.value,
            e.outcome.value if e.outcome else (e.reason or "-"),
            entry_details(e),
        ]
        for e in entries
    ]
    return [
        "",
        f"Journal (newest first{since}):",
        *table(["TIME", "TYPE", "OUTCOME", "DETAILS"], rows),
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
