"""What the commands print: one JSON document (`--output json`) or readable text.

Every JSON document carries `contractVersion` and `command`. Fields whose value is unknown or
does not apply are left out rather than written as null or zero (an absent `executionMillis`
means no duration was recorded, not a run that took no time). Nothing printed carries SQL
text, row data, a server's error message or a credential.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ptah_operator.engine.migrations.directory import FileKind, MigrationDirectory, MigrationFile

if TYPE_CHECKING:
    # Annotations only: `status` prints without loading what `up` and `baseline` run.
    from ptah_operator.engine.migrations.apply import RunResult
    from ptah_operator.engine.migrations.baseline import BaselineResult
    from ptah_operator.engine.migrations.maintenance import MaintenanceResult
    from ptah_operator.engine.migrations.revision_table import Revision
    from ptah_operator.engine.migrations.status import Status

CONTRACT_VERSION = 1


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _drop_none(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if v is not None}


def revision_json(row: Revision) -> dict[str, Any]:
    return _drop_none(
        {
            "version": row.version,
            "description": row.description,
            "kind": row.kind,
            "state": row.state,
            "statementsApplied": row.statements_applied,
            "statementsTotal": row.statements_total,
            "checksum": row.checksum,
            "executionMillis": row.execution_millis,
            "errorClass": row.error_class,
            "recordedBy": row.recorded_by,
            "appliedAt": _time(row.applied_at),
        }
    )


def migration_json(file: MigrationFile) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": file.version,
        "description": file.description,
        "checksum": file.checksum,
        "kind": "checkpoint" if file.kind is FileKind.CHECKPOINT else "migration",
    }
    if file.no_transaction:
        doc["noTransaction"] = True
    return doc


def status_json(status: Status, *, newest: int = 10) -> dict[str, Any]:
    return _drop_none(
        {
            "verdict": status.verdict.value,
            "reason": status.verdict.reason,
            "revisionTableExists": status.revision_table_exists,
            "currentVersion": status.current_version,
            "artifactVersion": status.artifact_version,
            "checkpointVersion": status.checkpoint_version,
            "checkpointApplied": status.checkpoint_applied
            if status.checkpoint_version is not None
            else None,
            "coveredVersions": list(status.covered_versions),
            "ignoredCheckpointVersions": list(status.ignored_checkpoint_versions),
            "appliedCount": status.applied_count,
            "pendingCount": status.pending_count,
            "pending": [migration_json(f) for f in status.pending],
            "dirty": [revision_json(r) for r in status.dirty],
            "modifiedVersions": list(status.modified_versions),
            "missingVersions": list(status.missing_versions),
            "aheadVersions": list(status.ahead_versions),
            "outOfOrderVersions": list(status.out_of_order_versions),
            "historyFingerprint": status.history_fingerprint,
            "revisionCount": len(status.revisions),
            "newestRevisions": [revision_json(r) for r in reversed(status.revisions[-newest:])]
            if newest > 0
            else [],
        }
    )


def directory_json(directory: MigrationDirectory) -> dict[str, Any]:
    return {
        "fileCount": len(directory.files),
        "directoryHash": "sha256:" + directory.directory_hash,
        "sumVerified": directory.sum_verified,
    }


def run_json(result: RunResult) -> dict[str, Any]:
    failure = result.failure
    stopped = result.stopped_at
    duration = (
        int((result.finished_at - result.started_at).total_seconds() * 1000)
        if result.finished_at
        else None
    )
    return _drop_none(
        {
            "outcome": result.outcome.value,
            "reason": result.reason,
            "message": result.message,
            "selected": result.selected,
            "selection": [{"version": s.version, "checksum": s.checksum} for s in result.selection],
            "appliedVersions": result.applied_versions,
            "appliedCount": len(result.applied_versions),
            "failure": _drop_none(
                {
                    "version": failure.version,
                    "statementIndex": failure.statement_index,
                    "sqlstate": failure.sqlstate,
                    "mysqlErrno": failure.mysql_errno,
                }
            )
            if failure
            else None,
            "warnings": [
                {
                    "version": w.version,
                    "statementIndex": w.statement_index,
                    "line": w.line,
                    "code": w.code,
                }
                for w in result.warnings
            ]
            or None,
            "stoppedAt": {
                "version": stopped.version,
                "statementsApplied": stopped.statements_applied,
                "statementsTotal": stopped.statements_total,
            }
            if stopped
            else None,
            "transactionMode": result.transaction_mode.value,
            "targetIdentityDigest": result.target_identity_digest,
            "startedAt": _time(result.started_at),
            "finishedAt": _time(result.finished_at),
            "durationMillis": duration,
        }
    )


def maintenance_json(result: MaintenanceResult) -> dict[str, Any]:
    return _drop_none(
        {
            "changes": [{"version": c.version, "change": c.change} for c in result.changes],
            "targetIdentityDigest": result.target_identity_digest,
            "status": status_json(result.status, newest=0) if result.status else None,
        }
    )


def baseline_json(result: BaselineResult) -> dict[str, Any]:
    return _drop_none(
        {
            "recordedVersions": result.recorded_versions,
            "targetIdentityDigest": result.target_identity_digest,
            "status": status_json(result.status, newest=0) if result.status else None,
        }
    )


def document(command: str, body: dict[str, Any]) -> str:
    return json.dumps({"contractVersion": CONTRACT_VERSION, "command": command, **body}, indent=2)


def _versions(values: list[int] | tuple[int, ...], limit: int = 20) -> str:
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def status_text(status: Status, engine: str, table: str, newest: int = 10) -> str:
    lines = [
        f"engine:            {engine}",
        f"revision table:    {table}{'' if status.revision_table_exists else ' (absent)'}",
        f"verdict:           {status.verdict.value}",
        f"current version:   {status.current_version if status.current_version is not None else '-'}",
        f"artifact version:  {status.artifact_version if status.artifact_version is not None else '-'}",
        f"applied:           {status.applied_count}",
        f"pending:           {status.pending_count}",
    ]
    if status.checkpoint_version is not None:
        state = "applied" if status.checkpoint_applied else "to bootstrap from"
        lines.append(
            f"checkpoint:        {status.checkpoint_version} ({state};"
            f" covers {len(status.covered_versions)} version(s))"
        )
    for row in status.dirty:
        lines.append(
            f"dirty:             version {row.version}: {row.statements_applied}"
            f"/{row.statements_total} statements applied,"
            f" error class {row.error_class or 'none recorded (interrupted)'}"
        )
    if status.modified_versions:
        lines.append(f"modified:          {_versions(status.modified_versions)}")
    if status.ahead_versions:
        lines.append(
            f"ahead:             database at {status.current_version},"
            f" directory ends at {status.artifact_version}"
        )
    if status.out_of_order_versions:
        lines.append(f"out of order:      {_versions(status.out_of_order_versions)}")
    if status.pending:
        lines.append(f"pending versions:  {_versions([f.version for f in status.pending])}")
    lines.append(f"fingerprint:       {status.history_fingerprint}")
    if newest > 0 and status.revisions:
        lines.append("newest revisions:")
        for row in reversed(status.revisions[-newest:]):
            millis = "-" if row.execution_millis is None else f"{row.execution_millis}ms"
            lines.append(
                f"  {row.version:>12}  {row.state:<8} {row.statements_applied}"
                f"/{row.statements_total}  {millis:>8}  {row.description or ''}"
            )
    return "\n".join(lines)


def run_text(result: RunResult) -> str:
    lines = [f"outcome: {result.outcome.value} ({result.reason})", result.message]
    if result.applied_versions:
        lines.append(f"applied versions: {_versions(result.applied_versions)}")
    if result.stopped_at:
        s = result.stopped_at
        lines.append(
            f"stopped at version {s.version}: {s.statements_applied}/{s.statements_total}"
            " statements known committed"
        )
    lines += [
        f"warning {w.code}: version {w.version}, statement {w.statement_index} (line {w.line})"
        for w in result.warnings
    ]
    return "\n".join(lines)
