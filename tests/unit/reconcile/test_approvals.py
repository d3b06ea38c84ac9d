"""reconcile/approvals.py, the rules both families share, function by function: which approvals
an Apply consumed, which exact approval is taken when several are usable, and what the entry
of a consumed approval records. `make mutate` found each of these unpinned (issue #11)."""

from __future__ import annotations

import datetime as dt

import pytest

from ptah_operator.api.approvals import PtahMigrationApproval
from ptah_operator.api.common import ActiveOperation, ObjectReference, PlanReference, UserInfo
from ptah_operator.api.constants import (
    Authorization,
    EventReason,
    JournalEntryType,
    OperationType,
)
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.reconcile import approvals
from ptah_operator.reconcile.migration.draft import MigrationDraft
from tests.unit.reconcile.migration.worlds import NOW, approval_of, awaiting_approval, status

EARLIER = ObjectReference(name="billing-ok-1", uid="a-earlier")
ENDED = ObjectReference(name="billing-ok-2", uid="a-ended")
DISPATCHED = ObjectReference(name="billing-ok-3", uid="a-dispatched")
BOB = UserInfo(username="bob@example.com", uid="u-bob")


def _journal_accepting(uid: str) -> Journal:
    return Journal(
        entries=[JournalEntry(type=JournalEntryType.APPROVAL_ACCEPTED, time=NOW, approval_uid=uid)]
    )


def _apply_claim(
    *,
    approval: ObjectReference | None = DISPATCHED,
    job_uid: str | None = "job-1",
    type_: OperationType = OperationType.APPLY,
    authorization: Authorization = Authorization.APPROVAL,
    plan: PlanReference | None = None,
) -> ActiveOperation:
    return ActiveOperation(
        operation_id="op-00000000a1",
        type=type_,
        started_at=NOW,
        job_name="ptah-apply-00000000a1",
        job_uid=job_uid,
        approval=approval,
        approver=BOB,
        authorization=authorization,
        plan=plan,
    )


@pytest.mark.req("APR-11", "APR-15")
def test_consumed_names_the_journals_the_ended_runs_and_the_dispatched_claims_approval() -> None:
    assert approvals.consumed(_journal_accepting(EARLIER.uid), None, None) == {EARLIER.uid}
    assert approvals.consumed(None, ENDED, None) == {ENDED.uid}
    assert approvals.consumed(None, None, _apply_claim()) == {DISPATCHED.uid}
    assert approvals.consumed(_journal_accepting(EARLIER.uid), ENDED, _apply_claim()) == {
        EARLIER.uid,
        ENDED.uid,
        DISPATCHED.uid,
    }


@pytest.mark.req("APR-11")
@pytest.mark.parametrize(
    "claim",
    [
        _apply_claim(job_uid=None),  # claimed, its Job not created yet: nothing consumed
        _apply_claim(type_=OperationType.HISTORY),
        _apply_claim(approval=None),
    ],
    ids=["undispatched Apply", "a read", "no approval"],
)
def test_a_claim_consumes_only_once_its_apply_job_exists(claim: ActiveOperation) -> None:
    assert approvals.consumed(None, None, claim) == set()


WAITING = awaiting_approval()
"""One world for every approval below: each awaiting_approval() publishes a plan of its own."""


def _approval(name: str, created: dt.datetime | None) -> PtahMigrationApproval:
    approval = approval_of(WAITING)
    meta = approval.metadata.model_copy(
        update={"name": name, "uid": f"uid-{name}", "creation_timestamp": created}
    )
    return approval.model_copy(update={"metadata": meta})


def _newest(*given: PtahMigrationApproval, used: frozenset[str] = frozenset()) -> str | None:
    plan = status(WAITING).plan
    assert plan is not None
    uid = WAITING.migration.metadata.uid
    found = approvals.newest_exact(given, uid, "billing", plan, set(used))
    return found.metadata.name if found is not None else None


@pytest.mark.req("APR-04")
def test_the_newest_of_several_exact_approvals_is_taken() -> None:
    older = _approval("b-older", NOW)
    newer = _approval("a-newer", NOW + dt.timedelta(minutes=1))
    assert _newest(older, newer) == "a-newer"
    assert _newest(newer, older) == "a-newer"


@pytest.mark.req("APR-04")
def test_approvals_made_in_the_same_second_are_ordered_by_name() -> None:
    first = _approval("a-first", NOW)
    second = _approval("b-second", NOW)
    assert _newest(second, first) == "b-second"
    assert _newest(first, second) == "b-second"


@pytest.mark.req("APR-04", "APR-11")
def test_a_consumed_approval_is_passed_over_for_an_older_usable_one() -> None:
    older = _approval("b-older", NOW)
    newer = _approval("a-newer", NOW + dt.timedelta(minutes=1))
    assert _newest(older, newer, used=frozenset({"uid-a-newer"})) == "b-older"
    assert _newest(older, newer, used=frozenset({"uid-a-newer", "uid-b-older"})) is None


@pytest.mark.req("JNL-05", "APR-15")
def test_the_accepted_entry_names_the_plan_the_approval_and_the_approver() -> None:
    world = awaiting_approval()
    plan = status(world).plan
    assert plan is not None
    draft = MigrationDraft.begin(world)
    approvals.accepted(draft, _apply_claim(plan=plan))
    [entry] = draft.entries
    assert entry.type == JournalEntryType.APPROVAL_ACCEPTED
    assert (entry.plan_name, entry.plan_uid, entry.plan_fingerprint) == (
        plan.name,
        plan.uid,
        plan.fingerprint,
    )
    assert (entry.approval_name, entry.approval_uid) == (DISPATCHED.name, DISPATCHED.uid)
    assert entry.approver == BOB
    [event] = draft.events
    assert event.reason == EventReason.APPROVAL_ACCEPTED
    assert event.message == (
        f"approval {DISPATCHED.name} by {BOB.username} is consumed by Apply op-00000000a1"
    )


@pytest.mark.req("JNL-05")
def test_a_claim_that_names_no_plan_or_approver_still_records_its_approval() -> None:
    """A claim restored without its plan or approver (an edited status): the entry records
    the approval and leaves out what the claim does not say."""
    draft = MigrationDraft.begin(awaiting_approval())
    claim = _apply_claim(plan=None).model_copy(update={"approver": None})
    approvals.accepted(draft, claim)
    [entry] = draft.entries
    assert (entry.plan_name, entry.plan_uid, entry.plan_fingerprint, entry.approver) == (
        None,
        None,
        None,
        None,
    )
    assert entry.approval_uid == DISPATCHED.uid
    [event] = draft.events
    assert event.message == (
        f"approval {DISPATCHED.name} by an unknown person is consumed by Apply op-00000000a1"
    )


@pytest.mark.req("APR-11")
def test_an_apply_the_policy_authorized_consumed_no_approval() -> None:
    world = awaiting_approval()
    draft = MigrationDraft.begin(world)
    # Even a claim that names an approval, if the policy authorized it, consumed none.
    approvals.accepted(draft, _apply_claim(authorization=Authorization.POLICY))
    assert (draft.entries, draft.events) == ([], [])
