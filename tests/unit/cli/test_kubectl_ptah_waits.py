"""When the plugin's waits end, and how its arguments are read."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ptah_operator.api.common import ActiveOperation, PlanReference, StatusCommon
from ptah_operator.api.constants import (
    Kind,
    MigrationPhase,
    OperationType,
    RunOutcome,
    SchemaPhase,
    VerifiedOutcome,
)
from ptah_operator.api.migration import LastRun, PtahMigrationStatus, RunVerification
from ptah_operator.api.schema import PtahSchemaStatus
from ptah_operator.cli.kubectl.errors import UsageError
from ptah_operator.cli.kubectl.main import Command, parse_command, parse_target
from ptah_operator.cli.kubectl.waits import (
    ReadTracker,
    RunProgress,
    next_read_request,
    phase_reached,
    run_progress,
)
from tests.support.migration_objects import T0, migration

PLAN = PlanReference(name="orders-aaaaaaaaaa", uid="p-1")


def _status(
    phase: MigrationPhase | None,
    plan: PlanReference | None = PLAN,
    ran: PlanReference | None = None,
    verified: bool = False,
    outcome: RunOutcome = RunOutcome.APPLIED,
) -> PtahMigrationStatus:
    last_run = None
    if ran is not None:
        last_run = LastRun(
            operation_id="op-00000000aa",
            outcome=outcome,
            plan=ran,
            verification=(
                RunVerification(outcome=VerifiedOutcome.IN_SYNC, read_at=T0) if verified else None
            ),
        )
    return PtahMigrationStatus(phase=phase, plan=plan, last_run=last_run)


# --- approve --wait ----------------------------------------------------------------------------


@pytest.mark.req("PLUGIN-06", "APR-11")
@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (_status(MigrationPhase.AWAITING_APPROVAL), RunProgress.WAITING),
        (_status(MigrationPhase.APPLYING), RunProgress.WAITING),
        (_status(MigrationPhase.APPLYING, ran=PLAN), RunProgress.WAITING),
        (_status(MigrationPhase.VERIFYING_HISTORY, ran=PLAN), RunProgress.WAITING),
        (_status(MigrationPhase.READING, ran=PLAN), RunProgress.WAITING),
        (_status(MigrationPhase.READING, ran=PLAN, verified=True), RunProgress.FINISHED),
        (_status(MigrationPhase.IN_SYNC, plan=None, ran=PLAN), RunProgress.FINISHED),
        (
            _status(MigrationPhase.BLOCKED, plan=None, ran=PLAN, outcome=RunOutcome.FAILED),
            RunProgress.FINISHED,
        ),
        (
            _status(MigrationPhase.AWAITING_APPROVAL, plan=PlanReference(name="orders-b")),
            RunProgress.RETIRED,
        ),
        (
            _status(MigrationPhase.AWAITING_APPROVAL, plan=PlanReference(name=PLAN.name, uid="x")),
            RunProgress.RETIRED,
        ),
        (
            _status(MigrationPhase.IN_SYNC, plan=None, ran=PlanReference(name="older")),
            RunProgress.RETIRED,
        ),
        (_status(MigrationPhase.READING, plan=None), RunProgress.WAITING),
        (_status(MigrationPhase.PENDING), RunProgress.WAITING),
    ],
)
def test_run_progress(status: PtahMigrationStatus, expected: RunProgress) -> None:
    assert run_progress(status, PLAN.name, PLAN.uid) is expected


@pytest.mark.req("PLUGIN-06")
def test_phase_reached_needs_the_current_generation() -> None:
    m = migration(status=PtahMigrationStatus(phase=MigrationPhase.IN_SYNC, observed_generation=1))
    m.metadata.generation = 2
    assert not phase_reached(m, MigrationPhase.IN_SYNC)
    m.metadata.generation = 1
    assert phase_reached(m, MigrationPhase.IN_SYNC)
    assert not phase_reached(m, MigrationPhase.BLOCKED)
    assert not phase_reached(migration(), MigrationPhase.IN_SYNC)


# --- refresh -----------------------------------------------------------------------------------

NOW = datetime(2026, 8, 30, 12, 0, 0, 700000, tzinfo=UTC)


@pytest.mark.req("RRQ-20")
@pytest.mark.parametrize(
    ("held", "expected"),
    [
        ([], "2026-08-30T12:00:00Z"),
        ([None, None], "2026-08-30T12:00:00Z"),
        (["2026-08-30T11:00:00Z"], "2026-08-30T12:00:00Z"),
        # A value the resource holds in the future: later than it, not now.
        (["2026-08-30T12:00:00Z"], "2026-08-30T12:00:01Z"),
        (["2026-08-31T00:00:00.5Z", "2026-08-30T13:00:00Z"], "2026-08-31T00:00:01Z"),
        (["2026-08-31T02:00:00+02:00"], "2026-08-31T00:00:01Z"),
        # Values that name no instant (invalid, or a sha256: record) do not count.
        (["tomorrow", "sha256:" + "a" * 64], "2026-08-30T12:00:00Z"),
    ],
)
def test_the_refresh_value_is_later_than_any_held(held: list[str | None], expected: str) -> None:
    assert next_read_request(NOW, held) == expected


def _claim(
    op: str, type_: OperationType = OperationType.HISTORY, request: str | None = None
) -> ActiveOperation:
    return ActiveOperation(operation_id=op, type=type_, started_at=T0, read_request=request)


@pytest.mark.req("RRQ-21", "RRQ-12")
def test_refresh_wait_follows_the_read_that_started_after_the_answer() -> None:
    value = "2026-08-30T12:00:00Z"
    tracker = ReadTracker(value=value, before=frozenset({"op-running", "op-read-before"}))
    # A read already running when the request arrived does not answer it.
    assert not tracker.finished(
        StatusCommon(active_operation=_claim("op-running")), "op-read-before"
    )
    # It ends, and its reading arrives: still not the request's read.
    assert not tracker.finished(StatusCommon(), "op-running")
    # Answered: recorded in lastReadRequest; the read has not started yet.
    assert not tracker.finished(StatusCommon(last_read_request=value), "op-read-before")
    # The read it starts runs (an Apply would not count).
    answered = StatusCommon(last_read_request=value, active_operation=_claim("op-new"))
    assert not tracker.finished(answered, "op-read-before")
    assert tracker.read_operation == "op-new"
    # It ends.
    assert tracker.finished(StatusCommon(last_read_request=value), "op-new")


@pytest.mark.req("RRQ-21")
def test_refresh_wait_ends_on_a_new_reading_even_if_the_claim_went_unseen() -> None:
    value = "2026-08-30T12:00:00Z"
    tracker = ReadTracker(value=value, before=frozenset({"op-read-before"}))
    assert not tracker.finished(StatusCommon(last_read_request=value), "op-read-before")
    assert tracker.finished(StatusCommon(last_read_request=value), "op-new")
    apply_claim = StatusCommon(
        last_read_request=value, active_operation=_claim("op-apply", OperationType.APPLY)
    )
    assert not ReadTracker(value=value, before=frozenset()).finished(apply_claim, None)


@pytest.mark.req("RRQ-21", "RRQ-11")
def test_refresh_wait_follows_a_claim_that_names_the_request_even_if_it_is_old() -> None:
    value = "2026-08-30T12:00:00Z"
    tracker = ReadTracker(value=value, before=frozenset({"op-retrying"}))
    retry = _claim("op-retrying", request=value)
    assert not tracker.finished(StatusCommon(last_read_request=value, active_operation=retry))
    assert tracker.read_operation == "op-retrying"
    assert tracker.finished(StatusCommon(last_read_request=value), "op-retrying")


def _migration(
    phase: MigrationPhase, claim: ActiveOperation | None = None, plan: PlanReference | None = None
) -> PtahMigrationStatus:
    return PtahMigrationStatus(
        phase=phase, active_operation=claim, last_read_request=REQUESTED, plan=plan
    )


def _schema(phase: SchemaPhase, claim: ActiveOperation | None = None) -> PtahSchemaStatus:
    return PtahSchemaStatus(phase=phase, active_operation=claim, last_read_request=REQUESTED)


REQUESTED = "2026-08-30T12:00:00Z"
M = MigrationPhase
S = SchemaPhase
# What a watch of each source's read shows, one status after another: (status, the operation
# of the latest history reading). Between two claims of the chain no claim is held for a pass.
_GIT_MIGRATION = [
    (_migration(M.RESOLVING, _claim("op-r", OperationType.RESOLVE, REQUESTED)), "op-old"),
    (_migration(M.READING), "op-old"),
    (_migration(M.READING, _claim("op-h")), "op-old"),
]
_OCI_MIGRATION = [
    (_migration(M.RESOLVING, _claim("op-r", OperationType.RESOLVE, REQUESTED)), "op-old"),
    (_migration(M.VERIFYING), "op-old"),
    (_migration(M.VERIFYING, _claim("op-v", OperationType.VERIFY)), "op-old"),
    (_migration(M.READING), "op-old"),
    (_migration(M.READING, _claim("op-h")), "op-old"),
    # The reading planned: the plan is created, its UID not known yet.
    (_migration(M.PLANNING, plan=PlanReference(name="orders-bbbbbbbbbb")), "op-h"),
]
_OCI_SCHEMA = [
    (_schema(S.RESOLVING, _claim("op-r", OperationType.RESOLVE, REQUESTED)), None),
    (_schema(S.VERIFYING), None),
    (_schema(S.VERIFYING, _claim("op-v", OperationType.VERIFY)), None),
    (_schema(S.OBSERVING), None),
    (_schema(S.OBSERVING, _claim("op-o", OperationType.OBSERVE)), None),
    (_schema(S.PLANNING, _claim("op-p", OperationType.PLAN)), None),
    (_schema(S.PLANNING), None),
]


@pytest.mark.req("RRQ-21", "RRQ-05", "SRC-GIT-15", "SRC-OCI-07")
@pytest.mark.parametrize(
    ("chain", "end", "last"),
    [
        (_GIT_MIGRATION, (_migration(M.IN_SYNC), "op-h"), "op-h"),
        (_OCI_MIGRATION, (_migration(M.AWAITING_APPROVAL, plan=PLAN), "op-h"), "op-h"),
        (_OCI_SCHEMA, (_schema(S.AWAITING_APPROVAL), None), "op-p"),
    ],
    ids=["git migration", "oci migration", "oci schema"],
)
def test_refresh_wait_waits_past_the_resolve_for_the_read_it_leads_to(
    chain: list[tuple[StatusCommon, str | None]],
    end: tuple[StatusCommon, str | None],
    last: str,
) -> None:
    tracker = ReadTracker(value=REQUESTED, before=frozenset({"op-old"}))
    for status, reading in chain:
        assert not tracker.finished(status, reading), status
    assert tracker.finished(*end)
    assert tracker.read_operation == last


@pytest.mark.req("RRQ-21")
def test_refresh_wait_ends_when_an_apply_follows_the_read() -> None:
    tracker = ReadTracker(value=REQUESTED, before=frozenset({"op-old"}))
    assert not tracker.finished(_migration(M.READING, _claim("op-h", request=REQUESTED)), "op-old")
    applying = _migration(M.APPLYING, _claim("op-a", OperationType.APPLY))
    assert tracker.finished(applying, "op-h")


@pytest.mark.req("RRQ-19", "RRQ-21")
def test_a_long_value_is_answered_by_its_digest() -> None:
    value = "2026-08-30T12:00:00." + "0" * 60 + "Z"
    tracker = ReadTracker(value=value, before=frozenset())
    assert tracker.recorded.startswith("sha256:")
    assert tracker.answered(StatusCommon(last_read_request=tracker.recorded))


# --- arguments ---------------------------------------------------------------------------------


@pytest.mark.req("PLUGIN-07")
def test_commands_and_their_flags() -> None:
    command, args = parse_command(["refresh", "migration/orders", "-n", "application", "--wait"])
    assert command == Command("refresh", Kind.PTAH_MIGRATION, "orders", True, 1800.0)
    assert args.namespace == "application"
    command, args = parse_command(["--context", "c", "-n", "x", "migration", "orders"])
    assert command == Command("migration", Kind.PTAH_MIGRATION, "orders")
    assert (args.context, args.namespace) == ("c", "x")
    command, _ = parse_command(["wait", "pmig/orders", "--for=Blocked", "--timeout=90s"])
    assert command == Command(
        "wait", Kind.PTAH_MIGRATION, "orders", True, 90.0, MigrationPhase.BLOCKED
    )
    command, _ = parse_command(["refresh", "schema/catalog"])
    assert command.kind == Kind.PTAH_SCHEMA
    command, args = parse_command(["approve", "migration/orders", "--kubeconfig", "/k"])
    assert (command.verb, command.wait, args.kubeconfig) == ("approve", False, "/k")


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["approve"],
        ["plan", "migration/orders", "--applied"],
        ["wait", "schema/catalog", "--for=VerifyingHistory"],
        ["schema", "migration/orders"],
        ["approve", "orders/"],
        ["refresh", "orders"],
        ["refresh", "table/orders"],
        ["wait", "migration/orders", "--for=Done"],
        ["wait", "migration/orders", "--timeout=forever"],
        ["frobnicate"],
    ],
)
def test_bad_usage(argv: list[str]) -> None:
    with pytest.raises(UsageError):
        parse_command(argv)


def test_parse_target() -> None:
    assert parse_target("PtahMigrations/orders") == (Kind.PTAH_MIGRATION, "orders")
    assert parse_target("orders", Kind.PTAH_MIGRATION) == (Kind.PTAH_MIGRATION, "orders")
