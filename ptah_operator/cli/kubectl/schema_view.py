"""What `kubectl ptah` prints about a PtahSchema, as pure functions of the API models.

`render_schema` is the status made readable: phase and conditions, the drift summary, the plan
with its severity and findings, the last Apply, what was last applied, the journal (newest
first). Like a schema's status it holds no SQL (SCH-54, PRIV-03): aggregates, digests,
object names, positions and codes.

`render_schema_plan` is `kubectl ptah plan schema/NAME`: the published plan's identity, what it
binds, its severity and findings, what the policy decides, and then its SQL, the generated
statements the seed says `kubectl ptah plan` prints (PLUGIN-02), read from the plan's
PtahSchemaPlanChunks and printed only when every chunk and the joined text give the digests the
plan records (`plan_text`); `--no-sql` leaves it out. `render_applied` is `--applied`
(PLUGIN-03): the plan status.applied records, with its SQL when the plan object still exists
and still gives that digest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ptah_operator.api.constants import ApplyPolicy, ConditionType
from ptah_operator.cli.kubectl.manifest import empty, text_digest
from ptah_operator.cli.kubectl.view import (
    UNREADABLE_PLAN,
    approval_line,
    approving_heading,
    bound_lines,
    condition_lines,
    decision_lines,
    document,
    field_line,
    journal_lines,
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
    from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
    from ptah_operator.api.schema import (
        AppliedPlan,
        ApplyRecord,
        DriftSummary,
        PtahSchema,
        PtahSchemaStatus,
        SchemaPlanStatus,
    )

SQL_BEGIN = "--- SQL (generated; from the plan's chunks, digest {digest}) ---"
SQL_END = "--- end of SQL ---"


def _overview(schema: PtahSchema, status: PtahSchemaStatus) -> list[str]:
    policy = schema.spec.policy
    conditions = (ConditionType.READY, ConditionType.PROGRESSING, ConditionType.IN_SYNC)
    protected = ", ".join(policy.protected_tables) if policy.protected_tables else "none"
    text = (
        f"apply {policy.apply}, allowDestructive {str(policy.allow_destructive).lower()}, "
        f"protected tables {protected}"
    )
    return overview_lines(schema.metadata, status, status.phase, conditions, text)


def _drift(drift: DriftSummary | None) -> list[str]:
    if drift is None:
        return ["", "Drift: not observed yet"]
    lines = [
        "",
        f"Drift (observed {when(drift.observed_at)}):",
        field_line("Differences", str(drift.total)),
        field_line("Highest", drift.highest_severity or "-"),
        field_line("Dialect", drift.dialect),
        field_line("Report", short(drift.digest)),
        field_line("Database", short(drift.target_identity_digest)),
    ]
    if drift.categories:
        rows = [[c.category, str(c.count), c.highest_severity or "-"] for c in drift.categories]
        lines += table(["CATEGORY", "COUNT", "HIGHEST"], rows, indent="    ")
    return lines


def _severity(plan: PtahSchemaPlan) -> str:
    severity = plan.spec.severity
    flags = []
    if severity.destructive:
        flags.append("destructive")
    if severity.privilege_change:
        flags.append("privilege change")
    return f"{severity.highest or '-'}" + (f" ({', '.join(flags)})" if flags else "")


def _findings(plan: PtahSchemaPlan) -> list[str]:
    spec = plan.spec
    if not spec.findings:
        return [field_line("Findings", "none")]
    rows = [
        [
            f.severity,
            f.code,
            f.object or "-",
            f.category or "-",
            str(f.statement_index) if f.statement_index is not None else "-",
        ]
        for f in spec.findings
    ]
    more = spec.findings_total - len(spec.findings)
    return [
        field_line(
            "Findings", f"{spec.findings_total}" + (f" ({more} not listed)" if more else "")
        ),
        *table(["SEVERITY", "CODE", "OBJECT", "CATEGORY", "STATEMENT"], rows, indent="    "),
    ]


def schema_plan_lines(reference: SchemaPlanStatus, plan: PtahSchemaPlan | None) -> list[str]:
    """The plan: identity, size, severity and findings; never its SQL."""
    lines = [plan_heading(reference, " (not published yet)")]
    if plan is None:
        return [
            *lines,
            field_line("Fingerprint", reference.fingerprint or "-"),
            field_line("Digest", reference.digest or "-"),
            UNREADABLE_PLAN,
        ]
    spec = plan.spec
    lines += [
        field_line("Fingerprint", spec.fingerprint),
        field_line("Digest", spec.digest),
        field_line(
            "Statements",
            f"{spec.statement_count} ({spec.size} bytes in {len(spec.chunks)} chunk(s))",
        ),
        field_line("Severity", _severity(plan)),
        *_findings(plan),
        field_line("Approval", "required" if spec.approval_required else "not required"),
        field_line("Planned", when(reference.planned_at)),
    ]
    if reference.approval is not None:
        lines.append(approval_line("Approved by", reference.approval, reference.approver))
    return lines


def _last_apply(record: ApplyRecord | None) -> list[str]:
    if record is None:
        return ["", "Last apply: none (no Apply has happened)"]
    outcome = record.outcome or "running"
    lines = [
        "",
        f"Last apply {record.operation_id}: {outcome}"
        + (f" ({record.reason})" if record.reason else ""),
        plan_line(record.plan),
        field_line("Digest", short(record.plan_digest)),
        *ran_lines(record),
        field_line("Database", short(record.target_identity_digest)),
    ]
    if record.verification is not None:
        lines.append(verified_line(record.verification.outcome, record.verification.read_at))
    else:
        lines.append(field_line("Verified", "not yet: the read that proves it is owed"))
    return lines


def _applied(applied: AppliedPlan | None) -> list[str]:
    if applied is None:
        return ["", "Applied: nothing confirmed yet"]
    lines = [
        "",
        f"Applied (confirmed {when(applied.verified_at)}):",
        plan_line(applied.plan),
        field_line("Digest", short(applied.digest)),
        field_line("Operation", applied.operation_id or "-"),
        field_line("Applied at", when(applied.applied_at)),
    ]
    if applied.approval is not None:
        lines.append(approval_line("Approved by", applied.approval, applied.approver))
    return lines


def render_schema(schema: PtahSchema, plan: PtahSchemaPlan | None = None) -> str:
    """`kubectl ptah schema NAME`: everything the status says, readable, no SQL."""
    status = schema.status or empty("PtahSchemaStatus")
    retired = status.retired_plan
    return document(
        _overview(schema, status),
        condition_lines(status),
        _drift(status.drift),
        [""],
        schema_plan_lines(status.plan, plan) if status.plan is not None else ["Plan: none"],
        [f"Retired before it ran: plan {retired.name}"] if retired is not None else [],
        _last_apply(status.last_apply),
        _applied(status.applied),
        journal_lines(status.journal),
    )


# --- the plan's SQL ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanText:
    """The plan's SQL as its chunks hold it, or why it cannot be shown."""

    text: str | None
    why_not: str | None = None


def plan_text(plan: PtahSchemaPlan, chunks: Sequence[PtahSchemaPlanChunk]) -> PlanText:
    """Join the plan's chunks in order, each checked against the digest the plan records for
    it and the whole against the plan's digest: what is printed is exactly what an Apply
    would run, or nothing."""
    by_name = {c.metadata.name: c for c in chunks}
    pieces: list[str] = []
    for ref in sorted(plan.spec.chunks, key=lambda c: c.index):
        chunk = by_name.get(ref.name)
        if chunk is None:
            return PlanText(None, f"chunk {ref.name} does not exist")
        if (
            chunk.spec.plan_ref.uid != plan.metadata.uid
            or chunk.spec.index != ref.index
            or text_digest(chunk.spec.data) != ref.digest
        ):
            return PlanText(None, f"chunk {ref.name} does not hold what the plan records")
        pieces.append(chunk.spec.data)
    text = "".join(pieces)
    if text_digest(text) != plan.spec.digest:
        return PlanText(None, "the chunks do not give the plan's digest")
    return PlanText(text)


def _sql_lines(plan: PtahSchemaPlan, text: PlanText | None) -> list[str]:
    if text is None:
        return []
    if text.text is None:
        return ["", f"SQL: not shown ({text.why_not})"]
    body = readable_statements(text.text)
    return [
        "",
        SQL_BEGIN.format(digest=short(plan.spec.digest)),
        body.rstrip("\n"),
        SQL_END,
    ]


def readable_statements(plan_file: str) -> str:
    """The plan file's statements as a person reads SQL: each one terminated, preceded by a
    comment with its position, what it does and its severity. The digest was checked over
    the plan file itself; a file that is not the engine's JSON plan is shown as it is."""
    try:
        document = json.loads(plan_file)
        statements = document["statements"]
        rendered = []
        for position, statement in enumerate(statements, start=1):
            sql = str(statement["sql"]).rstrip().rstrip(";")
            note = str(statement.get("reason") or "")
            severity = statement.get("severity")
            where = f" ({severity})" if severity else ""
            outside = "" if statement.get("transactional", True) else ", outside the transaction"
            rendered.append(f"-- {position}/{len(statements)}: {note}{where}{outside}\n{sql};")
    except (ValueError, KeyError, TypeError):
        return plan_file
    return "\n\n".join(rendered) + "\n"


_DECISIONS = {
    ApplyPolicy.ON_APPROVAL: "waits for a PtahSchemaApproval naming this plan "
    "(kubectl ptah approve schema/{name})",
    ApplyPolicy.ALWAYS: "runs as soon as it is published when nothing is destructive and no "
    "privilege changes (policy Always); otherwise it waits for an approval",
    ApplyPolicy.NEVER: "is published and never runs (policy Never)",
}


def render_schema_plan(
    schema: PtahSchema,
    reference: SchemaPlanStatus,
    plan: PtahSchemaPlan | None,
    text: PlanText | None = None,
) -> str:
    """`kubectl ptah plan schema/NAME`: the plan, what it binds, the decision, its SQL."""
    lines = schema_plan_lines(reference, plan)
    if plan is not None:
        spec = plan.spec
        lines += bound_lines(
            spec.source,
            spec.execution_binding.digest,
            field_line("Database", short(spec.target_identity_digest)),
            field_line("Observed", short(spec.observed_fingerprint)),
            field_line("Desired", short(spec.desired_fingerprint)),
            field_line("Engine", f"{spec.engine} ({spec.dialect or '-'})"),
        )
    lines += decision_lines(_DECISIONS[schema.spec.policy.apply].format(name=schema.metadata.name))
    if plan is not None:
        lines += _sql_lines(plan, text)
    return "\n".join(lines) + "\n"


def render_applied(
    schema: PtahSchema,
    applied: AppliedPlan,
    plan: PtahSchemaPlan | None,
    text: PlanText | None = None,
) -> str:
    """`kubectl ptah plan schema/NAME --applied`: the plan status.applied records (PLUGIN-03)."""
    meta = schema.metadata
    lines = [
        f"Applied plan of schema {meta.namespace}/{meta.name}: {applied.plan.name}"
        + (f" (UID {applied.plan.uid})" if applied.plan.uid else ""),
        field_line("Fingerprint", applied.plan.fingerprint or "-"),
        field_line("Digest", applied.digest),
        field_line("Operation", applied.operation_id or "-"),
        field_line("Applied at", when(applied.applied_at)),
        field_line("Confirmed", when(applied.verified_at)),
    ]
    if applied.approval is not None:
        lines.append(approval_line("Approved by", applied.approval, applied.approver))
    else:
        lines.append(field_line("Authorized by", "Policy (apply: Always)"))
    if plan is None:
        lines += ["", "The plan object no longer exists: its digest above is what ran."]
        return "\n".join(lines) + "\n"
    lines += [
        field_line(
            "Statements",
            f"{plan.spec.statement_count} ({plan.spec.size} bytes), severity {_severity(plan)}",
        ),
        *_findings(plan),
    ]
    lines += _sql_lines(plan, text)
    return "\n".join(lines) + "\n"


def render_schema_approval_summary(schema: PtahSchema, plan: PtahSchemaPlan) -> str:
    """What `kubectl ptah approve schema/NAME` is about to approve: the plan, exactly."""
    from ptah_operator.api.common import PlanReference
    from ptah_operator.api.schema import SchemaPlanStatus

    meta = schema.metadata
    reference = PlanReference(name=plan.metadata.name or "-", uid=plan.metadata.uid)
    status_ref = SchemaPlanStatus(
        name=reference.name, uid=reference.uid, fingerprint=plan.spec.fingerprint
    )
    lines = [
        approving_heading(plan.metadata.name, "schema", meta),
        *schema_plan_lines(status_ref, plan)[1:],
        f"  (kubectl ptah plan schema/{meta.name} shows its SQL)",
    ]
    return "\n".join(lines) + "\n"
