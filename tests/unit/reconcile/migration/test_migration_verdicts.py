"""The six verdicts of a history read, and what the status says about each (seeds 000, 002).

"Reading the history produces one of six verdicts, and the operator never guesses at any of
them": dirty, modified, out of order, ahead, nothing pending, a sequence ready to plan.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from typing import Any

import pytest

from ptah_operator.api.constants import (
    ApplyPolicy,
    JournalEntryType,
    MigrationPhase,
    Reason,
    RunOutcome,
    TransactionMode,
)
from ptah_operator.api.migration import MigrationPolicy
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    FILES,
    applying,
    awaiting_approval,
    edited,
    history,
    history_reported,
    job_of,
    later,
    new,
    read,
    reading,
    ready_to_plan,
    run_block,
    run_reported,
    source_files,
    status,
    status_of,
    step,
    with_approval,
    with_source,
)

TEN_MINUTES = dt.timedelta(minutes=10)
Entry = JournalEntryType


def created_plan(decision: Decision) -> dict[str, Any] | None:
    return next(
        (o for o in decision.create if isinstance(o, dict) and o["kind"] == "PtahMigrationPlan"),
        None,
    )


def no_plan_published(world: MigrationWorld, decision: Decision) -> None:
    assert created_plan(decision) is None
    assert status_of(world, decision).plan is None


def dirty_named(world: MigrationWorld, decision: Decision) -> None:
    no_plan_published(world, decision)
    after = status_of(world, decision)
    assert after.history is not None
    assert after.history.dirty is not None
    assert after.history.dirty.version == "0002"
    assert "0002" in (after.message or "")


def modified_named(world: MigrationWorld, decision: Decision) -> None:
    no_plan_published(world, decision)
    after = status_of(world, decision)
    assert after.history is not None
    assert after.history.modified_versions == ["0001"]
    assert "0001" in (after.message or "")


def out_of_order_named(world: MigrationWorld, decision: Decision) -> None:
    no_plan_published(world, decision)
    after = status_of(world, decision)
    assert after.history is not None
    assert after.history.out_of_order_versions == ["0002"]


def ahead_names_both(world: MigrationWorld, decision: Decision) -> None:
    no_plan_published(world, decision)
    after = status_of(world, decision)
    assert after.history is not None
    assert after.history.ahead is not None
    assert "0005" in (after.message or "")
    assert "0002" in (after.message or "")
    assert "never rolls back" in (after.message or "")


def counts_recorded(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.history is not None
    assert after.history.current_version == "0002"
    assert after.history.applied_count == 2
    assert after.history.pending_count == 0


def plan_of_pending_list(*versions: str, from_version: str | None) -> Any:
    def then(world: MigrationWorld, decision: Decision) -> None:
        plan = created_plan(decision)
        assert plan is not None
        assert [v["version"] for v in plan["spec"]["versions"]] == list(versions)
        assert plan["spec"].get("fromVersion") == from_version
        assert plan["spec"]["toVersion"] == versions[-1]

    return then


def baseline_ran_nothing(world: MigrationWorld, decision: Decision) -> None:
    """The reading before the baseline said 0001 with 0002 pending; the one after says 0002,
    the last version the files carry, and nothing records a run."""
    before = status(world).history
    assert before is not None
    assert (before.current_version, before.pending_count) == ("0001", 1)
    after = status_of(world, decision)
    assert after.history is not None
    last_file_version = sorted(FILES)[-1].split("_", 1)[0]
    assert (after.history.current_version, after.history.pending_count) == (last_file_version, 0)
    assert after.last_run is None
    assert after.unresolved_run is None
    ran = {Entry.RUN_FINISHED, Entry.APPROVAL_ACCEPTED, Entry.VERIFIED, Entry.RUN_ACKNOWLEDGED}
    assert not ran & {e.type for e in (after.journal.entries if after.journal else [])}
    assert not [o for o in decision.create if isinstance(o, dict) and o["kind"] == "Job"]


CHECKPOINTED = {
    **history("ReadyToPlan", current="0003", pending_versions=["0004"]),
    "checkpointVersion": "0003",
    # A checkpoint bootstrap writes one row for the versions it covers: applied and artifact
    # counts (1 and 4) no longer give the pending set by subtraction (MIG-34).
    "appliedCount": 1,
}
CHECKPOINT_FILES = {
    f"000{n}_step_{n}.sql": f"CREATE TABLE t{n} (id BIGINT);\n".encode() for n in range(1, 5)
}


CHECKPOINTED_DONE = {
    **history("NothingPending", current="0004"),
    "checkpointVersion": "0003",
    "appliedCount": 2,
}


def bootstrap_ran() -> MigrationWorld:
    """The checkpoint's plan approved and run: 0004 applied, the proof's read claimed."""
    waiting = step(read(reading(new_with_files(CHECKPOINT_FILES)), CHECKPOINTED))
    assert status(waiting).phase == MigrationPhase.AWAITING_APPROVAL
    ran = run_reported(
        applying(with_approval(waiting)), run_block(RunOutcome.APPLIED, applied=["0004"])
    )
    proving = step(step(ran))
    claim = status(proving).active_operation
    assert claim is not None
    assert claim.serves_proof
    return proving


def new_with_files(files: dict[str, bytes]) -> MigrationWorld:
    return with_source(new(), source_files(files))


def checkpointed_plan(world: MigrationWorld, decision: Decision) -> None:
    """Only Ptah's pending list is planned; the checkpoint and the counts are kept as read."""
    plan_of_pending_list("0004", from_version="0003")(world, decision)
    after = status_of(world, decision).history
    assert after is not None
    assert (after.checkpoint_version, after.current_version) == ("0003", "0003")
    assert (after.applied_count, after.pending_count, after.pending_versions) == (1, 1, ["0004"])


def checkpoint_kept(world: MigrationWorld, decision: Decision) -> None:
    """After the bootstrap ran, the checkpoint stays and nothing it covers is planned again."""
    no_plan_published(world, decision)
    after = status_of(world, decision).history
    assert after is not None
    assert (after.checkpoint_version, after.current_version, after.pending_count) == (
        "0003",
        "0004",
        0,
    )


SIX_VERDICTS = [
    Row(
        "dirty: a failed or interrupted run left a revision row (Blocked HistoryDirty)",
        lambda: history_reported(reading(), history("Dirty", current="0001", dirty="0002")),
        ("MIG-33", "MIG-36", "MIG-10", "MIG-41", "MIG-53"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.HISTORY_DIRTY,
        progressing=(False, Reason.HISTORY_DIRTY),
        job=None,
        entries=[],
        then=dirty_named,
    ),
    Row(
        "modified: a recorded checksum no longer matches the artifact (Blocked HistoryModified)",
        lambda: history_reported(reading(), history("Modified", current="0002", modified=["0001"])),
        ("MIG-33", "MIG-37", "MIG-10", "MIG-53"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.HISTORY_MODIFIED,
        progressing=(False, Reason.HISTORY_MODIFIED),
        job=None,
        then=modified_named,
    ),
    Row(
        "out of order: a pending version sorts below an applied one (refused before any plan)",
        lambda: history_reported(
            reading(), history("OutOfOrder", current="0003", out_of_order=["0002"])
        ),
        ("MIG-33", "MIG-38", "MIG-10", "MIG-53"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.HISTORY_OUT_OF_ORDER,
        progressing=(False, Reason.HISTORY_OUT_OF_ORDER),
        job=None,
        then=out_of_order_named,
    ),
    Row(
        "ahead: the database is past the artifact (names both versions, never rolls back)",
        lambda: history_reported(
            reading(), history("Ahead", current="0005", ahead=("0005", "0002"))
        ),
        ("MIG-33", "MIG-39", "MIG-10", "PATH-15", "MIG-53"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.HISTORY_AHEAD,
        progressing=(False, Reason.HISTORY_AHEAD),
        job=None,
        then=ahead_names_both,
    ),
    Row(
        "nothing pending: InSync, Ready=True HistoryMatched, no Apply and no approval",
        lambda: history_reported(reading(), history("NothingPending", current="0002")),
        ("MIG-33", "MIG-08", "MIG-35", "PATH-13", "PATH-18"),
        phase=MigrationPhase.IN_SYNC,
        ready=Reason.HISTORY_MATCHED,
        progressing=(False, Reason.HISTORY_MATCHED),
        job=None,
        then=counts_recorded,
    ),
    Row(
        "ready to plan: the pending sequence becomes a plan",
        lambda: history_reported(reading(), ready_to_plan("0001", "0002", "0003")),
        ("MIG-33", "MIG-09", "MIG-34", "MIG-03"),
        phase=MigrationPhase.PLANNING,
        job=None,
        then=plan_of_pending_list("0002", "0003", from_version="0001"),
    ),
]

HISTORIES = [
    Row(
        "the pending set is Ptah's own list: a checkpoint's covered versions are never planned",
        lambda: history_reported(reading(new_with_files(CHECKPOINT_FILES)), CHECKPOINTED),
        ("MIG-34", "MIG-59", "MIG-61"),
        phase=MigrationPhase.PLANNING,
        then=checkpointed_plan,
    ),
    Row(
        "the checkpoint stays after the bootstrap ran: its versions never go back to pending",
        lambda: history_reported(bootstrap_ran(), CHECKPOINTED_DONE),
        ("MIG-60", "MIG-59"),
        phase=MigrationPhase.IN_SYNC,
        job=None,
        then=checkpoint_kept,
    ),
    Row(
        "an empty revision table reads as everything pending: the whole sequence is published",
        lambda: history_reported(
            reading(), history("ReadyToPlan", current=None, pending_versions=["0001", "0002"])
        ),
        ("MIG-62", "MIG-63"),
        phase=MigrationPhase.PLANNING,
        job=None,
        then=plan_of_pending_list("0001", "0002", from_version=None),
    ),
    Row(
        "after an external baseline the next read is InSync, having run nothing",
        lambda: history_reported(
            step(later(awaiting_approval(), TEN_MINUTES)), history("NothingPending", current="0002")
        ),
        ("MIG-64", "RUN-22"),
        phase=MigrationPhase.IN_SYNC,
        job=None,
        then=baseline_ran_nothing,
    ),
    Row(
        "after adoption, a newly published migration is the single pending version",
        lambda: history_reported(reading(), ready_to_plan("0002", "0003")),
        ("MIG-65",),
        phase=MigrationPhase.PLANNING,
        then=plan_of_pending_list("0003", from_version="0002"),
    ),
    Row(
        "a run that failed at a statement is read back dirty: Blocked HistoryDirty",
        lambda: history_reported(
            step(
                step(
                    run_reported(
                        applying(),
                        run_block(
                            RunOutcome.FAILED,
                            failure={"version": "0002", "statementIndex": 0, "sqlstate": "42P07"},
                        ),
                    )
                )
            ),
            history("Dirty", current="0001", dirty="0002"),
        ),
        ("MIG-43", "MIG-72", "MIG-56"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.HISTORY_DIRTY,
        job=None,
    ),
    Row(
        "none of the four clears by waiting: the history is read again at spec.interval",
        lambda: later(
            read(reading(), history("Modified", current="0002", modified=["0001"])), TEN_MINUTES
        ),
        ("MIG-40",),
        phase=MigrationPhase.READING,
        job="History",
    ),
    Row(
        "fixing the database is enough: the next reading unblocks",
        lambda: history_reported(
            step(
                later(read(reading(), history("Dirty", current="0001", dirty="0002")), TEN_MINUTES)
            ),
            history("NothingPending", current="0002"),
        ),
        ("MIG-40", "PATH-14"),
        phase=MigrationPhase.IN_SYNC,
    ),
    Row(
        "Blocked never proceeds to Apply, even with an approval of an earlier plan",
        lambda: _blocked_with_old_approval(),
        ("PATH-14", "MIG-41"),
        phase=MigrationPhase.BLOCKED,
        job=None,
        lease=[],
    ),
]


def _blocked_with_old_approval() -> MigrationWorld:
    waiting = awaiting_approval()
    approval_world = with_approval(waiting)
    read_again = step(later(waiting, TEN_MINUTES))
    blocked = read(read_again, history("Dirty", current="0001", dirty="0002"))
    return dataclasses.replace(blocked, approvals=approval_world.approvals)


@pytest.mark.parametrize("row", params(SIX_VERDICTS))
def test_the_six_verdicts(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(HISTORIES))
def test_what_the_history_says(row: Row) -> None:
    check(row)


def _operation(decision: Decision) -> dict[str, Any]:
    job = next(o for o in decision.create if isinstance(o, dict) and o["kind"] == "Job")
    env = {e["name"]: e for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    return dict(json.loads(env["PTAH_OPERATION"]["value"]))


@pytest.mark.req("MIG-54", "MIG-57", "MIG-56", "MIG-58")
@pytest.mark.parametrize(
    ("mode", "expected"),
    [(None, None), (TransactionMode.FILE, "file"), (TransactionMode.NONE, "none")],
)
def test_the_transaction_mode_is_bound_into_the_plan_and_carried_by_the_job(
    mode: TransactionMode | None, expected: str | None
) -> None:
    world = new(apply=ApplyPolicy.ALWAYS)
    if mode is not None:
        world = edited(
            world, policy=MigrationPolicy(apply=ApplyPolicy.ALWAYS, transaction_mode=mode)
        )
    world = step(history_reported(step(world), ready_to_plan()))
    ref = status(world).plan
    assert ref is not None
    assert world.plans[ref.name].spec.transaction_mode == mode
    decision = reconcile_migration(world)
    assert job_of(decision) == "Apply"
    assert _operation(decision)["transactionMode"] == expected


@pytest.mark.req("MIG-58")
def test_leaving_the_mode_out_keeps_the_plan_it_had() -> None:
    """A resource without the field plans exactly as before the field existed: the plan holds
    no transactionMode, and its fingerprint is the digest of a spec that never had the key (a
    null written into the fingerprinted form would change every plan across the upgrade)."""
    world = planning_world()
    ref = status(world).plan
    assert ref is not None
    plan = world.plans[ref.name]
    assert plan.spec.transaction_mode is None
    wire = plan.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert "transactionMode" not in wire
    del wire["fingerprint"]
    before_the_field = json.dumps(wire, sort_keys=True, separators=(",", ":")).encode()
    assert ref.fingerprint == "sha256:" + hashlib.sha256(before_the_field).hexdigest()
    # The field, once written, is bound: the same reading plans under another fingerprint.
    with_mode = new()
    with_mode = edited(with_mode, policy=MigrationPolicy(transaction_mode=TransactionMode.FILE))
    moded = status(read(reading(with_mode), ready_to_plan())).plan
    assert moded is not None
    assert moded.fingerprint != ref.fingerprint


def planning_world() -> MigrationWorld:
    return read(reading(), ready_to_plan())


@pytest.mark.req("PATH-04")
def test_a_change_made_with_ptah_directly_is_found_at_the_next_read() -> None:
    """Somebody ran the plan's migrations with the standalone CLI: no run, no journal entry;
    the next read finds nothing pending and retires the plan it no longer needs."""
    world = step(later(awaiting_approval(), TEN_MINUTES))
    decision = reconcile_migration(
        history_reported(world, history("NothingPending", current="0002"))
    )
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.IN_SYNC
    assert after.plan is None
    assert after.last_run is None
    journal = after.journal
    assert journal is not None
    assert [e.type for e in journal.entries] == ["PlanPublished"]
