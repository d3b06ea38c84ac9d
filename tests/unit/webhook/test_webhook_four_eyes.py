"""Four eyes: admission records, sealed, who wrote a resource's spec since its last Apply, and
under `spec.policy.requireDistinctApprover` refuses an approval by any of them (APR-04: the
approver as admission authenticated them).

Issue #11's review: the record was a plain annotation, so a writer who reached the API server
while the fail-open webhook was down could name someone else in it; and only the *last* writer
was compared, so a trivial edit by another person laundered a change."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from ptah_operator.api.approvals import PtahSchemaApprovalSpec
from ptah_operator.api.common import ActiveOperation, ObjectReference, PlanReference, UserInfo
from ptah_operator.api.constants import (
    ANNOTATION_SPEC_WRITTEN_BY,
    OperationType,
    RunOutcome,
)
from ptah_operator.api.kinds import from_manifest, to_manifest
from ptah_operator.api.migration import LastRun, PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.webhook import validators as checks
from ptah_operator.webhook.validators import check_migration_approval, check_schema_approval
from ptah_operator.webhook.writers import (
    MAX_WRITERS,
    SpecWriters,
    Writer,
    WriterSeal,
    next_record,
    writer_patch,
)
from tests.support.migration_objects import (
    approval_spec,
    awaiting_approval,
    migration,
    plan,
    plan_spec,
)
from tests.support.schema_objects import awaiting_approval as schema_awaiting_approval
from tests.support.schema_objects import catalog_schema, schema_plan, schema_plan_spec

NS = "application"
ALICE = UserInfo(username="alice@example.com", uid="u-alice")
BOB = UserInfo(username="bob@example.com", uid="u-bob")
CAROL = UserInfo(username="carol@example.com", uid="u-carol")
PATH = "/metadata/annotations/operator.ptah.run~1spec-written-by"
SEAL = WriterSeal(b"k" * 32)
KIND = "PtahMigration"


def _four_eyes() -> dict[str, Any]:
    """A migration asking for four eyes, awaiting approval of its plan, as the API stores it."""
    p = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    body = to_manifest(migration(status=awaiting_approval(p)))
    body["spec"].setdefault("policy", {})["requireDistinctApprover"] = True
    return body


def _record(obj: dict[str, Any]) -> str | None:
    return (obj["metadata"].get("annotations") or {}).get(ANNOTATION_SPEC_WRITTEN_BY)


def write(
    stored: dict[str, Any] | None,
    user: UserInfo,
    change: dict[str, Any] | None = None,
    *,
    seal: WriterSeal = SEAL,
) -> dict[str, Any]:
    """`user`'s write as the API server stores it after the mutating webhook: a CREATE when
    nothing is stored, else an UPDATE whose spec takes `change`."""
    obj = copy.deepcopy(stored) if stored is not None else _four_eyes()
    obj["spec"].update(change or {})
    generation = int(stored["metadata"].get("generation", 0)) if stored is not None else 0
    value = next_record("UPDATE" if stored else "CREATE", KIND, NS, obj, stored, user, seal)
    if stored is None or obj["spec"] != stored["spec"]:
        obj["metadata"]["generation"] = generation + 1
    annotations = obj["metadata"].setdefault("annotations", {})
    if value is None:
        annotations.pop(ANNOTATION_SPEC_WRITTEN_BY, None)
    else:
        annotations[ANNOTATION_SPEC_WRITTEN_BY] = value
    return obj


def opened(obj: dict[str, Any], seal: WriterSeal = SEAL) -> SpecWriters | None:
    return seal.open(_record(obj), from_manifest(PtahMigration, obj))


def with_status(obj: dict[str, Any], **status: Any) -> dict[str, Any]:
    model = from_manifest(PtahMigration, obj)
    assert model.status is not None
    model.status = model.status.model_copy(update=status)
    return to_manifest(model)


def verdict(obj: dict[str, Any], approver: UserInfo, seal: WriterSeal = SEAL) -> list[str]:
    m = from_manifest(PtahMigration, obj)
    assert m.status is not None
    assert m.status.plan is not None
    p = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    assert m.status.plan.name == p.metadata.name
    spec = approval_spec(m, p).model_copy(update={"approved_by": approver})
    return [f.code for f in check_migration_approval(spec, NS, m, p, seal)]


def last_run(generation: int) -> LastRun:
    return LastRun(
        operation_id="op-0000000042",
        outcome=RunOutcome.APPLIED,
        plan=PlanReference(name="orders-old"),
        generation=generation,
    )


@pytest.mark.req("APR-04")
def test_a_write_that_changes_the_spec_adds_its_author_to_a_sealed_record() -> None:
    created = write(None, ALICE)
    assert opened(created) == SpecWriters(1, (Writer(ALICE.username, "u-alice", 1),))
    edited = write(created, BOB, {"interval": "5m"})
    assert opened(edited) == SpecWriters(
        2, (Writer(ALICE.username, "u-alice", 1), Writer(BOB.username, "u-bob", 2))
    )
    again = write(edited, ALICE, {"interval": "7m"})
    record = opened(again)
    assert record is not None
    assert record.writers == (
        Writer(BOB.username, "u-bob", 2),
        Writer(ALICE.username, "u-alice", 3),
    )
    (op,) = writer_patch("UPDATE", KIND, NS, {**edited, "spec": again["spec"]}, edited, ALICE, SEAL)
    assert op == {"op": "add", "path": PATH, "value": _record(again)}


@pytest.mark.req("APR-04")
def test_any_other_write_keeps_the_stored_record_whatever_the_client_sent() -> None:
    stored = write(None, ALICE)
    forged = copy.deepcopy(stored)
    forged["metadata"]["annotations"][ANNOTATION_SPEC_WRITTEN_BY] = "forged"
    assert writer_patch("UPDATE", KIND, NS, forged, stored, BOB, SEAL) == [
        {"op": "add", "path": PATH, "value": _record(stored)}
    ]
    assert writer_patch("UPDATE", KIND, NS, stored, stored, BOB, SEAL) == []
    assert writer_patch("DELETE", KIND, NS, stored, stored, BOB, SEAL) == []
    (*_, op) = writer_patch("CREATE", KIND, NS, forged, None, BOB, SEAL)
    assert SEAL.open(op["value"], from_manifest(PtahMigration, forged)) == SpecWriters(
        1, (Writer(BOB.username, "u-bob", 1),)
    )


@pytest.mark.req("APR-04")
def test_a_record_the_manager_did_not_seal_for_this_spec_does_not_open() -> None:
    """Written while the webhook was down: another key, an edited record, a record moved from
    another resource or kept over another spec open as nothing."""
    by_bob = write(write(None, ALICE), BOB, {"interval": "5m"})
    model = from_manifest(PtahMigration, by_bob)
    value = _record(by_bob)
    assert value is not None
    assert SEAL.open(value, model) is not None
    assert WriterSeal(b"x" * 32).open(value, model) is None
    assert WriterSeal().open(value, model) is None
    data = json.loads(value)
    data["writers"] = [{"username": BOB.username, "generation": 2}]
    assert SEAL.open(json.dumps(data), model) is None
    del data["seal"]
    assert SEAL.open(json.dumps(data), model) is None
    elsewhere = model.model_copy(deep=True)
    elsewhere.metadata.name = "billing"
    assert SEAL.open(value, elsewhere) is None
    changed = model.model_copy(deep=True)
    changed.spec = changed.spec.model_copy(update={"suspend": True})
    assert SEAL.open(value, changed) is None
    for junk in (None, "", "x", "[]", json.dumps({"generation": 1, "seal": "00"})):
        assert SEAL.open(junk, model) is None


@pytest.mark.req("APR-04")
def test_a_forged_record_naming_another_writer_refuses_every_approval() -> None:
    """Alice, past admission, edits the spec and writes a record naming Bob for the new
    generation: unsealed or sealed by another key, it names nobody."""
    stored = write(None, BOB)
    forged = copy.deepcopy(stored)
    forged["spec"]["interval"] = "1m"
    forged["metadata"]["generation"] = 2
    for seal in (WriterSeal(b"x" * 32), None):
        record = SpecWriters(2, (Writer(BOB.username, None, 2),))
        value = (
            seal.seal(record, from_manifest(PtahMigration, forged))
            if seal is not None
            else json.dumps(record.as_json())
        )
        forged["metadata"]["annotations"][ANNOTATION_SPEC_WRITTEN_BY] = value
        assert verdict(forged, ALICE) == [checks.SPEC_WRITER_UNKNOWN]
        assert verdict(forged, CAROL) == [checks.SPEC_WRITER_UNKNOWN]
    # Bob's own sealed record of generation 1, kept over the spec Alice wrote, does not open.
    replayed = copy.deepcopy(forged)
    replayed["metadata"]["annotations"][ANNOTATION_SPEC_WRITTEN_BY] = _record(stored)
    assert verdict(replayed, ALICE) == [checks.SPEC_WRITER_UNKNOWN]


@pytest.mark.req("APR-04")
def test_a_later_edit_by_someone_else_does_not_launder_the_change() -> None:
    by_alice = write(write(None, CAROL), ALICE, {"interval": "5m"})
    then_bob = write(by_alice, BOB, {"interval": "6m"})
    assert verdict(then_bob, ALICE) == [checks.APPROVER_NOT_DISTINCT]
    assert verdict(then_bob, BOB) == [checks.APPROVER_NOT_DISTINCT]
    assert verdict(then_bob, CAROL) == [checks.APPROVER_NOT_DISTINCT]
    dave = UserInfo(username="dave@example.com")
    assert verdict(then_bob, dave) == []
    m = from_manifest(PtahMigration, then_bob)
    p = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    spec = approval_spec(m, p).model_copy(update={"approved_by": ALICE})
    (finding,) = check_migration_approval(spec, NS, m, p, SEAL)
    assert finding.message == (
        "spec.policy.requireDistinctApprover is set and alice@example.com wrote the spec of "
        "migration orders since its last Apply (generation 2): another person must approve"
    )


@pytest.mark.req("APR-04")
def test_who_wrote_before_the_last_apply_may_approve_again() -> None:
    by_alice = write(write(None, CAROL), ALICE, {"interval": "5m"})
    then_bob = write(by_alice, BOB, {"interval": "6m"})
    applied_alice = with_status(then_bob, last_run=last_run(2))
    assert verdict(applied_alice, ALICE) == []
    assert verdict(applied_alice, CAROL) == []
    assert verdict(applied_alice, BOB) == [checks.APPROVER_NOT_DISTINCT]
    claim = ActiveOperation(
        type=OperationType.APPLY,
        operation_id="op-0000000043",
        started_at="2026-12-01T12:00:00Z",
        generation=3,
    )
    # An Apply in flight is not the last Apply until status records it ended (it may be
    # withdrawn with nothing run).
    applying = with_status(then_bob, last_run=last_run(2), active_operation=claim)
    assert verdict(applying, BOB) == [checks.APPROVER_NOT_DISTINCT]
    assert verdict(with_status(then_bob, last_run=last_run(3)), BOB) == []
    # The next write starts from the writers after the Apply's generation.
    record = opened(write(applied_alice, CAROL, {"interval": "9m"}))
    assert record is not None
    assert [w.username for w in record.writers] == [BOB.username, CAROL.username]


@pytest.mark.req("APR-04")
def test_a_write_past_admission_leaves_its_writer_unknown_until_an_apply_after_it() -> None:
    stored = write(None, CAROL)
    past = copy.deepcopy(stored)  # Alice, while the webhook was down: the record stays.
    past["spec"]["interval"] = "1m"
    past["metadata"]["generation"] = 2
    assert verdict(past, BOB) == [checks.SPEC_WRITER_UNKNOWN]
    after = write(past, BOB, {"interval": "2m"})  # recorded, but it cannot name Alice.
    record = opened(after)
    assert record is not None
    assert record.unrecorded_through == 2
    assert verdict(after, ALICE) == [checks.SPEC_WRITER_UNKNOWN]
    assert verdict(with_status(after, last_run=last_run(2)), ALICE) == []
    assert verdict(with_status(after, last_run=last_run(2)), BOB) == [checks.APPROVER_NOT_DISTINCT]
    assert verdict(with_status(past, last_run=last_run(2)), BOB) == []


def test_the_record_is_bounded_and_what_it_drops_is_unknown() -> None:
    record = SpecWriters(0)
    for n in range(MAX_WRITERS + 3):
        record = record.written_by(UserInfo(username=f"user-{n}"), n + 1)
    assert len(record.writers) == MAX_WRITERS
    assert record.writers[0].username == "user-3"
    assert record.unrecorded_through == 3


@pytest.mark.req("APR-04")
def test_without_the_policy_the_writer_may_approve() -> None:
    by_alice = write(None, ALICE)
    by_alice["spec"]["policy"]["requireDistinctApprover"] = False
    assert verdict(by_alice, ALICE) == []


@pytest.mark.req("APR-04")
def test_without_a_seal_no_record_opens() -> None:
    m = from_manifest(PtahMigration, write(None, ALICE))
    p: PtahMigrationPlan = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    spec = approval_spec(m, p).model_copy(update={"approved_by": BOB})
    assert [f.code for f in check_migration_approval(spec, NS, m, p)] == [
        checks.SPEC_WRITER_UNKNOWN
    ]


@pytest.mark.req("APR-04")
def test_a_schema_under_the_policy_refuses_its_writers_too() -> None:
    s_ref = ObjectReference(name="catalog", uid="s-uid-1")
    p = schema_plan(schema_plan_spec(s_ref))
    schema = catalog_schema(status=schema_awaiting_approval(p))
    policy = schema.spec.policy.model_copy(update={"require_distinct_approver": True})
    schema.spec = schema.spec.model_copy(update={"policy": policy})
    schema.metadata.generation = 1
    schema.metadata.annotations = {
        ANNOTATION_SPEC_WRITTEN_BY: SEAL.seal(SpecWriters(0).written_by(ALICE, 1), schema)
    }
    assert schema.status is not None
    assert schema.status.plan is not None
    spec = PtahSchemaApprovalSpec(
        schema_ref=s_ref,
        plan_ref=ObjectReference(name="catalog-plan", uid="sp-uid-1"),
        plan_fingerprint=p.spec.fingerprint,
        plan_operation_id=schema.status.plan.operation_id,
        approved_by=ALICE,
    )
    assert [f.code for f in check_schema_approval(spec, NS, schema, p, SEAL)] == [
        checks.APPROVER_NOT_DISTINCT
    ]
    by_bob = spec.model_copy(update={"approved_by": BOB})
    assert check_schema_approval(by_bob, NS, schema, p, SEAL) == []


def test_every_replica_derives_the_same_seal_from_the_result_key_and_no_other() -> None:
    """The manager's replicas share the result key's Secret, so one opens what another
    sealed; the derived key is not the result key itself (a result token opens no record)."""
    result_key = b"r" * 32
    one, other = WriterSeal.derived_from(result_key), WriterSeal.derived_from(result_key)
    assert one.key != result_key
    assert len(one.key) == 32
    created = write(None, ALICE, seal=one)
    assert opened(created, other) is not None
    assert opened(created, WriterSeal.derived_from(b"s" * 32)) is None
    assert opened(created, WriterSeal(result_key)) is None


@pytest.mark.req("APR-04")
def test_a_spec_another_webhook_changed_after_the_seal_is_sealed_again_when_reinvoked() -> None:
    """Review finding 2: another mutating webhook that changes the spec after the record is
    sealed. Reinvoked (reinvocationPolicy IfNeeded), the record's webhook seals the final spec
    under the same writers; without that every approval was refused."""
    stored = write(None, CAROL)
    first = write(stored, ALICE, {"interval": "5m"})
    defaulted = copy.deepcopy(first)  # A later webhook rewrites a field of the spec.
    defaulted["spec"]["interval"] = "7m"
    assert opened(defaulted) is None
    patch = writer_patch("UPDATE", KIND, NS, defaulted, stored, ALICE, SEAL)
    (op,) = patch
    assert op["path"] == PATH
    defaulted["metadata"]["annotations"][ANNOTATION_SPEC_WRITTEN_BY] = op["value"]
    record = opened(defaulted)
    assert record is not None
    assert [(w.username, w.generation) for w in record.writers] == [
        (CAROL.username, 1),
        (ALICE.username, 2),
    ]
    assert verdict(defaulted, BOB) == []
    assert verdict(defaulted, ALICE) == [checks.APPROVER_NOT_DISTINCT]


def _claimed(generation: int) -> ActiveOperation:
    return ActiveOperation(
        type=OperationType.APPLY,
        operation_id="op-0000000043",
        started_at="2026-12-01T12:00:00Z",
        generation=generation,
    )


@pytest.mark.req("APR-04")
def test_a_claim_withdrawn_before_it_ran_does_not_launder_a_change() -> None:
    """Review finding 3: the names were dropped at the generation of the Apply *claimed*. Carol
    applies generation 1; Alice writes generation 2; an Apply is claimed for it; Dave writes
    generation 3, and the claim is withdrawn with nothing run. Alice's change is in the next
    plan, so she may not approve it."""
    dave = UserInfo(username="dave@example.com")
    applied = with_status(write(None, CAROL), last_run=last_run(1))
    by_alice = write(applied, ALICE, {"interval": "5m"})
    claimed = with_status(by_alice, active_operation=_claimed(2))
    assert verdict(claimed, ALICE) == [checks.APPROVER_NOT_DISTINCT]
    by_dave = write(claimed, dave, {"interval": "6m"})
    withdrawn = with_status(by_dave, active_operation=None)
    record = opened(withdrawn)
    assert record is not None
    assert [w.username for w in record.writers] == [ALICE.username, dave.username]
    assert verdict(withdrawn, ALICE) == [checks.APPROVER_NOT_DISTINCT]
    assert verdict(withdrawn, BOB) == []
    # Once the Apply is on record its generation's writers go, at the next write too.
    ran = with_status(by_dave, active_operation=None, last_run=last_run(2))
    assert verdict(ran, ALICE) == []
    record = opened(write(ran, BOB, {"interval": "9m"}))
    assert record is not None
    assert [w.username for w in record.writers] == [dave.username, BOB.username]


@pytest.mark.req("APR-04")
def test_records_sealed_under_a_previous_result_key_still_open_and_writes_reseal_them() -> None:
    """Review finding 4: a result key replaced (its Secret re-created, another key file) made
    every record not open, for ever. The manager given the previous key as well opens what it
    sealed, and seals every new record under the current key only."""
    old_key, new_key = b"o" * 32, b"n" * 32
    before = WriterSeal.derived_from(old_key)
    rotated = WriterSeal.derived_from(new_key, previous=[old_key])
    stored = write(None, ALICE, seal=before)
    assert opened(stored, WriterSeal.derived_from(new_key)) is None
    assert verdict(stored, BOB, rotated) == []
    assert verdict(stored, ALICE, rotated) == [checks.APPROVER_NOT_DISTINCT]
    after = write(stored, BOB, {"interval": "5m"}, seal=rotated)
    record = opened(after, WriterSeal.derived_from(new_key))
    assert record is not None
    assert record.unrecorded_through == 0
    assert [w.username for w in record.writers] == [ALICE.username, BOB.username]
    assert opened(after, before) is None


@pytest.mark.req("APR-04")
def test_a_lost_key_leaves_a_resource_with_no_write_since_its_last_apply_unaffected() -> None:
    """The record of a resource applied since its last write names nobody whatever its seal:
    a key lost for good refuses only the resources written since their last Apply."""
    stored = with_status(
        write(None, ALICE, seal=WriterSeal.derived_from(b"o" * 32)), last_run=last_run(1)
    )
    lost = WriterSeal.derived_from(b"n" * 32)
    assert verdict(stored, ALICE, lost) == []
    after = write(stored, CAROL, {"interval": "5m"}, seal=lost)
    assert verdict(after, BOB, lost) == []
    assert verdict(after, CAROL, lost) == [checks.APPROVER_NOT_DISTINCT]
    unapplied = write(None, ALICE, seal=WriterSeal.derived_from(b"o" * 32))
    assert verdict(unapplied, BOB, lost) == [checks.SPEC_WRITER_UNKNOWN]
