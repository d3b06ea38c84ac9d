"""Which operations still have a Pod running, as the controller reads Jobs and Pods (issue #18).

A run is over only once no Pod of it runs: a Pod its Job controls (by the controlling owner
reference's UID), or, once the Job is gone and the Pod orphaned (the reference removed), one
named after the claim's Job (`<job name>-<suffix>`) in the resource's namespace: a Pod's name
is immutable, where its labels are anyone's to edit who may edit Pods (review of #18, finding
2 of the fourth review); for this purpose only (it never makes a Pod a Job's).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ptah_operator.controller.indexes import FamilyWatches
from ptah_operator.controller.world import job_state, running_operations

OWNER = "r-1"
OP = "op-00a0000001"


def job(uid: str = "j-1", **spec: Any) -> dict[str, Any]:
    labels = {"operator.ptah.run/operation-id": OP, "operator.ptah.run/owner-uid": OWNER}
    return {
        "metadata": {"name": "ptah-apply-00a0000001", "uid": uid, "labels": labels},
        "spec": spec,
        "status": {},
    }


JOB = "ptah-apply-00a0000001"


def pod(
    phase: str, *, job_uid: str | None = "j-1", labelled: bool = True, name: str = JOB + "-abcde"
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "deletionTimestamp": None}
    if labelled:
        meta["labels"] = {
            "operator.ptah.run/operation-id": OP,
            "operator.ptah.run/owner-uid": OWNER,
        }
    if job_uid is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": "x",
                "uid": job_uid,
                "controller": True,
            }
        ]
    return {"metadata": meta, "status": {"phase": phase}}


def test_a_running_pod_of_the_job_keeps_its_operation_running() -> None:
    assert running_operations([(job(), [pod("Running")])], []) == {OP}
    assert running_operations([(job(), [pod("Succeeded")])], []) == frozenset()


def test_an_orphaned_pod_is_matched_by_its_name_once_the_job_is_gone() -> None:
    orphan = pod("Running", job_uid=None)
    assert running_operations([], [(OP, JOB, [orphan])]) == {OP}
    assert running_operations([], [(OP, JOB, [pod("Failed", job_uid=None)])]) == frozenset()


def test_removing_an_orphans_labels_does_not_end_its_run() -> None:
    # kubectl delete job --cascade=orphan, then kubectl label pod ... operation-id-
    unlabelled = pod("Running", job_uid=None, labelled=False)
    assert running_operations([], [(OP, JOB, [unlabelled])]) == {OP}


def test_a_labelled_pod_not_named_after_the_job_counts_for_no_operation() -> None:
    other = pod("Running", job_uid=None, name="ptah-apply-00a0000002-abcde")
    assert running_operations([], [(OP, JOB, [other])]) == frozenset()
    elsewhere = pod("Running", job_uid=None)
    elsewhere["metadata"]["namespace"] = "other"
    assert running_operations([], [(OP, JOB, [elsewhere])], namespace="ns") == frozenset()


def test_an_unlabelled_pod_of_another_job_counts_for_no_operation() -> None:
    other = pod("Running", job_uid="j-2", labelled=False, name="x-abcde")
    assert running_operations([(job(), [other])], [(OP, JOB, [other])]) == frozenset()


def test_a_suspended_job_reads_as_suspended() -> None:
    assert job_state(job(suspend=True)).suspended
    assert not job_state(job()).suspended


def test_an_orphaned_pod_wakes_the_resource_it_is_labelled_with() -> None:
    no_jobs: Any = SimpleNamespace(store=SimpleNamespace(get=lambda key: None))
    watches = FamilyWatches("PtahMigration", no_jobs, no_jobs)
    orphan = pod("Succeeded", job_uid=None)
    orphan["metadata"]["namespace"] = "ns"
    orphan["metadata"]["labels"].update(
        {"operator.ptah.run/owner-kind": "PtahMigration", "operator.ptah.run/owner-name": "o"}
    )
    assert watches.pod_keys(orphan) == ["ns/o"]


def test_a_jobs_creation_time_is_read_for_its_hard_cap() -> None:
    made = job()
    made["metadata"]["creationTimestamp"] = "2026-09-01T12:00:00Z"
    created = job_state(made).created_at
    assert created is not None
    assert created.isoformat() == "2026-09-01T12:00:00+00:00"
    assert job_state(job()).created_at is None


def test_a_job_marked_for_deletion_reads_as_deleting() -> None:
    marked = job()
    assert not job_state(marked).deleting
    marked["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert job_state(marked).deleting
