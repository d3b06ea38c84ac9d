"""Which operations still have a Pod running, as the controller reads Jobs and Pods (issue #18).

A run is over only once no Pod of it runs: a Pod its Job controls (by the controlling owner
reference's UID), or, once the Job is gone and the Pod orphaned (the reference removed), one
that carries the resource's owner label and the operation's label; for this purpose only (a
Pod's labels are anyone's to write who may create Pods, so they never make a Pod a Job's).
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


def pod(phase: str, *, job_uid: str | None = "j-1", labelled: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", "deletionTimestamp": None}
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
    assert running_operations(OWNER, [(job(), [pod("Running")])], []) == {OP}
    assert running_operations(OWNER, [(job(), [pod("Succeeded")])], []) == frozenset()


def test_an_orphaned_pod_is_matched_by_its_labels_once_the_job_is_gone() -> None:
    orphan = pod("Running", job_uid=None)
    assert running_operations(OWNER, [], [orphan]) == {OP}
    assert running_operations(OWNER, [], [pod("Failed", job_uid=None)]) == frozenset()
    assert running_operations("r-2", [], [orphan]) == frozenset()


def test_an_unlabelled_pod_of_another_job_counts_for_no_operation() -> None:
    other = pod("Running", job_uid="j-2", labelled=False)
    assert running_operations(OWNER, [(job(), [other])], [other]) == frozenset()


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
