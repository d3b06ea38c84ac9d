"""What `kubectl ptah` prints alike for every kind, as pure functions of the API models.

The shapes (`field_line`, `table`), the values as people read them (`short` digests, `when`,
`one_line` messages, `person`), and the sections the two statuses share: the overview (name,
phase, conditions, policy, source, operation, reads), a plan's heading and what it is bound
to, who authorized a run and when it ran, and the journal. `migration_view` and `schema_view`
build on these and add what only their kind has.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ptah_operator.api.constants import ConditionType, SourceKind
from ptah_operator.cli.kubectl.manifest import format_time

if TYPE_CHECKING:
    # The views read the models' attributes, of a model or of a `manifest` view alike.
    from ptah_operator.api.common import (
        ActiveOperation,
        ObjectReference,
        PlanReference,
        PlanSourceBinding,
        SourceRecord,
        StatusCommon,
        UserInfo,
    )
    from ptah_operator.api.journal import Journal, JournalEntry
    from ptah_operator.api.migration import LastRun
    from ptah_operator.api.objectmeta import ObjectMeta
    from ptah_operator.api.schema import ApplyRecord

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


def document(*sections: Sequence[str]) -> str:
    """The sections' lines, one text ending in a newline."""
    return "\n".join(line for section in sections for line in section) + "\n"


def overview_lines(
    meta: ObjectMeta,
    status: StatusCommon,
    phase: str | None,
    conditions: Sequence[ConditionType],
    policy: str,
) -> list[str]:
    """The head of a status: name, phase, the `conditions` named, the policy, the source, the
    running operation, the reads and the generation."""
    lines = [
        field_line("Name", meta.name or "-", ""),
        field_line("Namespace", meta.namespace or "-", ""),
        field_line("Phase", phase or "(none yet)", ""),
    ]
    for condition_type in conditions:
        condition = status.condition(condition_type)
        value = f"{condition.status} ({condition.reason})" if condition else "-"
        lines.append(field_line(condition_type.value, value, ""))
    lines += [
        field_line("Message", one_line(status.message), ""),
        field_line("Policy", policy, ""),
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


# --- plans and runs ----------------------------------------------------------------------------

UNREADABLE_PLAN = "  (the plan object could not be read)"
BOUND_TO = "Bound to (a change to any of these retires the plan):"


def bound_lines(source: PlanSourceBinding, executor: str | None, *bindings: str) -> list[str]:
    """What a plan is bound to: its source, the kind's own `bindings`, its executor."""
    return [
        "",
        BOUND_TO,
        field_line("Source", bound_source_line(source)),
        *bindings,
        field_line("Executor", short(executor) if executor else "-"),
    ]


def decision_lines(decision: str) -> list[str]:
    return ["", f"Decision: the plan {decision}."]


def plan_heading(reference: PlanReference, without_uid: str = "") -> str:
    uid = f" (UID {reference.uid})" if reference.uid else without_uid
    return f"Plan {reference.name}{uid}:"


def approving_heading(plan_name: str | None, noun: str, meta: ObjectMeta) -> str:
    """The first line of what `approve` is about to approve."""
    return f"Approving plan {plan_name} of {noun} {meta.namespace}/{meta.name}:"


def plan_line(reference: PlanReference) -> str:
    return field_line("Plan", f"{reference.name} ({short(reference.fingerprint)})")


def approval_line(label: str, approval: ObjectReference, approver: UserInfo | None) -> str:
    return field_line(label, f"approval {approval.name}, {person(approver)}")


def ran_lines(record: LastRun | ApplyRecord) -> list[str]:
    """Who authorized the run (an approval and its approver, or the policy), its Job, and when
    it started and finished."""
    lines = []
    if record.approval is not None:
        lines.append(approval_line("Authorized by", record.approval, record.approver))
    elif record.authorization is not None:
        lines.append(field_line("Authorized by", str(record.authorization)))
    return [
        *lines,
        field_line("Job", record.job.name if record.job else "-"),
        field_line("Started", when(record.started_at)),
        field_line("Finished", when(record.finished_at)),
    ]


def verified_line(outcome: str, read_at: datetime | None) -> str:
    return field_line("Verified", f"{outcome} at {when(read_at)}")
