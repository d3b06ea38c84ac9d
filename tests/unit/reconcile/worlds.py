"""What both families' worlds are built from, so each row of a table test reads like a sentence.

A family's worlds.py declares its resource (`Worlds`: which field of its World holds it, its
status model, its plan kinds, its reconcile function, its names) and keeps only what is its
own: its resource and World constructors, its runner reports, its people and the states its
cluster reaches. The rest is here, written once:

- the runner and the people both families use (`RUNNER`, `ROLLED_OUT`, `ALICE`, `digest`);
- the controller, played: `Worlds.carry_out` writes the Decision's status and annotations back,
  makes the objects it created appear with UIDs, deletes what it deleted, takes and releases
  the Lease; `Worlds.step` is one pass, carried out;
- the runner, played: `Worlds.report` and `Worlds.with_result` (a result record for the claim
  in flight, its Job ended);
- one change at a time: `later`, `with_job`, `annotated`, `edited`, `with_status`, ...;
- what a decision says: `status_of`, `entries_added`, `job_of`, `event_reasons`, ...
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from pydantic import BaseModel

from ptah_operator.api.common import ActiveOperation, ExecutionBinding, StatusCommon, UserInfo
from ptah_operator.api.constants import (
    LABEL_OPERATION_ID,
    ConditionType,
    JournalEntryType,
    OperationType,
)
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.reconcile.decision import Decision, LeaseVerb, OperationCredentials
from ptah_operator.reconcile.world import (
    JobPhase,
    JobState,
    LeaseState,
    OperationResult,
    RunnerConfig,
    SourceFiles,
)

MANAGER_NAMESPACE = "ptah-system"


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


BINDING = ExecutionBinding(
    image="registry.example/ptah/ptah-operator@" + digest("image"),
    runner_version="0.1.0",
    protocol_version=1,
    engine_version="0.1.0",
)
RUNNER = RunnerConfig(
    image="registry.example/ptah/ptah-operator:0.1.0",
    result_url="https://ptah-operator.ptah-system.svc:9443/v1/results",
    binding=BINDING,
    allowed_source_hosts=frozenset({"git.example", "registry.example"}),
)
ROLLED_OUT = dataclasses.replace(
    RUNNER, binding=BINDING.model_copy(update={"runner_version": "0.2.0"})
)
ALICE = UserInfo(username="alice@example.com", uid="u-alice", groups=["dba"])


class World(Protocol):
    """What every family's World holds that these helpers touch (a frozen dataclass)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @property
    def now(self) -> dt.datetime: ...

    @property
    def snapshots(self) -> frozenset[str]: ...

    @property
    def jobs(self) -> Mapping[str, JobState]: ...

    @property
    def results(self) -> Mapping[str, OperationResult]: ...

    @property
    def lease(self) -> LeaseState | None: ...


class Resource(Protocol):
    """What every family's resource (PtahMigration, PtahSchema) holds that these helpers touch."""

    @property
    def metadata(self) -> ObjectMeta: ...

    @property
    def spec(self) -> BaseModel: ...

    @property
    def status(self) -> StatusCommon | None: ...

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Self: ...


WorldT = TypeVar("WorldT", bound=World)
StatusT = TypeVar("StatusT", bound=StatusCommon)


def later(world: WorldT, delay: dt.timedelta) -> WorldT:
    return dataclasses.replace(world, now=world.now + delay)


def with_source(world: WorldT, source: SourceFiles | None) -> WorldT:
    return dataclasses.replace(world, source=source)


def with_runner(world: WorldT, runner: RunnerConfig) -> WorldT:
    """The manager rolled out another runner (another execution binding)."""
    return dataclasses.replace(world, runner=runner)


def job_of(decision: Decision) -> str | None:
    """Which operation's Job the decision creates, if any."""
    for obj in decision.create:
        if not isinstance(obj, OperationCredentials) and obj.get("kind") == "Job":
            return str(obj["metadata"]["labels"]["operator.ptah.run/operation"])
    return None


def created(decision: Decision, kind: str) -> list[Mapping[str, Any]]:
    """The manifests of `kind` the decision creates, in order."""
    return [
        obj
        for obj in decision.create
        if not isinstance(obj, OperationCredentials) and obj.get("kind") == kind
    ]


def event_reasons(decision: Decision) -> list[str]:
    return [e.reason for e in decision.events]


def _annotated(resource: Resource, changes: Mapping[str, str | None]) -> Mapping[str, str]:
    annotations = dict(resource.metadata.annotations or {})
    for key, value in changes.items():
        if value is None:
            annotations.pop(key, None)
        else:
            annotations[key] = value
    return annotations


def _lease_after(lease: LeaseState | None, decision: Decision) -> LeaseState | None:
    """The Lease once the decision's actions are taken: an acquire moves the epoch."""
    for action in decision.lease:
        if action.verb == LeaseVerb.ACQUIRE:
            epoch = (lease.epoch if lease else 0) + 1
            lease = LeaseState(action.name, action.namespace, action.holder, epoch, False)
        elif lease is not None and lease.holder == action.holder:
            lease = dataclasses.replace(lease, holder=None)
    return lease


@dataclass
class Worlds(Generic[WorldT, StatusT]):
    """One family's declaration, and the helpers built on it."""

    resource_field: str
    """The field of the family's World that holds its resource (`migration`, `schema`)."""
    status_type: type[StatusT]
    journal: Callable[[StatusT], Journal | None]
    reconcile: Callable[[WorldT], Decision]
    kind: str
    namespace: str
    name: str
    uid: str
    config_map: str
    config_map_uid: str
    files: Mapping[str, bytes]
    plans: Mapping[str, tuple[str, type[BaseModel]]]
    """For each kind of plan object a decision creates, the World field that holds them."""
    first_operation_id: int
    uid_prefix: str
    carried_out_also: Callable[[WorldT, Decision], Mapping[str, Any]] | None = None
    """What else of the World the controller changes when it carries a decision out."""
    _operation_ids: Iterator[int] = field(init=False, repr=False)
    _uids: Iterator[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._operation_ids = itertools.count(self.first_operation_id)
        self._uids = itertools.count(1)

    def next_operation_id(self) -> str:
        return f"op-{next(self._operation_ids):010x}"

    def new_uid(self) -> str:
        return f"{self.uid_prefix}{next(self._uids):012x}"

    # --- the base resource ---------------------------------------------------------------------

    def source_files(
        self,
        files: Mapping[str, bytes] | None = None,
        config_map_uid: str | None = None,
        refusal: str | None = None,
        source_policy_digest: str | None = None,
    ) -> SourceFiles:
        files = self.files if files is None else files
        content, manifest = digest_of_files(files)
        return SourceFiles(
            config_map_name=self.config_map,
            config_map_uid=config_map_uid or self.config_map_uid,
            files=dict(files),
            content_digest=content,
            manifest=manifest,
            refusal=refusal,
            source_policy_digest=source_policy_digest,
        )

    def resource(self, world: WorldT) -> Resource:
        found: Resource = getattr(world, self.resource_field)
        return found

    def with_resource(self, world: WorldT, resource: Resource) -> WorldT:
        return dataclasses.replace(world, **{self.resource_field: resource})

    # --- the controller, played ----------------------------------------------------------------

    def carry_out(self, world: WorldT, decision: Decision) -> WorldT:
        """The world after the controller carried the decision out (and nothing else happened)."""
        resource = self.resource(world)
        if decision.annotations:
            meta = resource.metadata.model_copy(
                update={"annotations": _annotated(resource, decision.annotations)}
            )
            resource = resource.model_copy(update={"metadata": meta})
        if decision.status is not None:
            status = self.status_type.model_validate(dict(decision.status))
            resource = resource.model_copy(update={"status": status})
        snapshots = set(world.snapshots)
        jobs = dict(world.jobs)
        results = dict(world.results)
        plans: dict[str, dict[str, Any]] = {
            kind: dict(getattr(world, held)) for kind, (held, _) in self.plans.items()
        }
        for obj in decision.create:
            if isinstance(obj, OperationCredentials):
                continue
            kind = obj["kind"]
            meta = obj["metadata"]
            if kind == "ConfigMap":
                snapshots.add(meta["name"])
            elif kind == "Job" and meta["name"] not in jobs:
                jobs[meta["name"]] = JobState(
                    name=meta["name"],
                    uid=self.new_uid(),
                    operation_id=meta["labels"][LABEL_OPERATION_ID],
                    phase=JobPhase.ACTIVE,
                    created_at=world.now,
                )
            elif kind in plans and meta["name"] not in plans[kind]:
                stamped = {**meta, "uid": self.new_uid(), "creationTimestamp": world.now}
                model = self.plans[kind][1]
                plans[kind][meta["name"]] = model.model_validate({**obj, "metadata": stamped})
        for ref in decision.delete:
            if ref.kind == "ConfigMap":
                snapshots.discard(ref.name)
                for operation_id in list(results):
                    if ref.name == "ptah-result-" + operation_id.removeprefix("op-"):
                        del results[operation_id]
            elif ref.kind == "Job":
                jobs.pop(ref.name, None)
        also = self.carried_out_also(world, decision) if self.carried_out_also else {}
        return dataclasses.replace(
            self.with_resource(world, resource),
            snapshots=frozenset(snapshots),
            jobs=jobs,
            results=results,
            lease=_lease_after(world.lease, decision),
            new_operation_id=self.next_operation_id(),
            **{self.plans[kind][0]: made for kind, made in plans.items()},
            **also,
        )

    def step(self, world: WorldT) -> WorldT:
        """One pass, carried out."""
        return self.carry_out(world, self.reconcile(world))

    # --- what the world holds ------------------------------------------------------------------

    def status(self, world: WorldT) -> StatusT:
        found = self.resource(world).status
        assert isinstance(found, self.status_type)
        return found

    def claim_of(self, world: WorldT) -> ActiveOperation:
        claim = self.status(world).active_operation
        assert claim is not None, "no claim in flight"
        return claim

    def claim_id(self, world: WorldT) -> str:
        return self.claim_of(world).operation_id

    # --- the runner, played --------------------------------------------------------------------

    def report(
        self, world: WorldT, operation: OperationType, *, target: str | None, **blocks: Any
    ) -> OperationResult:
        claim = self.claim_of(world)
        assert claim.type == operation, f"the claim is a {claim.type}, not a {operation}"
        payload: dict[str, Any] = {
            "contract": "ptah.run/result/v1",
            "operationID": claim.operation_id,
            "type": operation.value,
            "resource": {
                "kind": self.kind,
                "namespace": self.namespace,
                "name": self.name,
                "uid": self.uid,
            },
            "startedAt": (world.now - dt.timedelta(seconds=4)).isoformat(),
            "finishedAt": world.now.isoformat(),
            "targetIdentityDigest": target,
        }
        payload.update({k: v for k, v in blocks.items() if v is not None})
        return OperationResult(claim.operation_id, operation.value, world.now, payload)

    def with_result(
        self, world: WorldT, result: OperationResult, *, job: JobPhase | None = JobPhase.SUCCEEDED
    ) -> WorldT:
        """The runner reported; its Job ended (or is still ending), and, once ended, its
        container shows the runner's exit (JobState.report_witnessed)."""
        results = {**world.results, result.operation_id: result}
        jobs = dict(world.jobs)
        claim = self.claim_of(world)
        assert claim.job_name is not None
        if job is not None and claim.job_name in jobs:
            jobs[claim.job_name] = dataclasses.replace(
                jobs[claim.job_name],
                phase=job,
                finished_at=world.now,
                report_witnessed=job is not JobPhase.ACTIVE,
            )
        return dataclasses.replace(world, results=results, jobs=jobs)

    def read_failed(
        self, world: WorldT, operation: OperationType, reason: str = "ConnectionFailed"
    ) -> WorldT:
        return self.with_result(
            world,
            self.report(
                world,
                operation,
                target=None,
                error={"reason": reason, "message": "connection refused (OSError)"},
            ),
            job=JobPhase.FAILED,
        )

    def with_job(self, world: WorldT, phase: JobPhase, **changes: Any) -> WorldT:
        """The claim's Job in another state (ended, refused its snapshot, ...)."""
        claim = self.claim_of(world)
        assert claim.job_name is not None
        jobs = dict(world.jobs)
        jobs[claim.job_name] = dataclasses.replace(jobs[claim.job_name], phase=phase, **changes)
        return dataclasses.replace(world, jobs=jobs)

    def without_job(self, world: WorldT) -> WorldT:
        claim = self.claim_of(world)
        assert claim.job_name is not None
        jobs = {k: v for k, v in world.jobs.items() if k != claim.job_name}
        return dataclasses.replace(world, jobs=jobs)

    # --- what people do ------------------------------------------------------------------------

    def annotated(self, world: WorldT, key: str, value: str | None) -> WorldT:
        resource = self.resource(world)
        meta = resource.metadata.model_copy(
            update={"annotations": _annotated(resource, {key: value})}
        )
        return self.with_resource(world, resource.model_copy(update={"metadata": meta}))

    def edited(self, world: WorldT, **spec_changes: Any) -> WorldT:
        """A spec edit: the generation moves."""
        resource = self.resource(world)
        spec = resource.spec.model_copy(update=spec_changes)
        meta = resource.metadata.model_copy(
            update={"generation": (resource.metadata.generation or 1) + 1}
        )
        return self.with_resource(
            world, resource.model_copy(update={"spec": spec, "metadata": meta})
        )

    def suspended(self, world: WorldT) -> WorldT:
        return self.edited(world, suspend=True)

    def resumed(self, world: WorldT) -> WorldT:
        return self.edited(world, suspend=False)

    def with_status(self, world: WorldT, **changes: Any) -> WorldT:
        new_status = self.status(world).model_copy(update=changes)
        resource = self.resource(world)
        return self.with_resource(world, resource.model_copy(update={"status": new_status}))

    # --- what a decision says ------------------------------------------------------------------

    def status_of(self, world: WorldT, decision: Decision) -> StatusT:
        """The status after the decision (the old one when it writes none)."""
        if decision.status is None:
            return self.status(world)
        return self.status_type.model_validate(dict(decision.status))

    def entries_added(self, before: WorldT, decision: Decision) -> list[JournalEntry]:
        """The journal entries the decision wrote (a folded OperationFailed counts as written)."""
        if decision.status is None:
            return []
        after = self.journal(self.status_type.model_validate(dict(decision.status)))
        old_status = self.resource(before).status
        old = self.journal(self.status(before)) if old_status is not None else None
        seen = [e.model_dump() for e in (old.entries if old else [])]
        return [e for e in (after.entries if after else []) if e.model_dump() not in seen]

    def entry_types(self, before: WorldT, decision: Decision) -> list[JournalEntryType]:
        return [e.type for e in self.entries_added(before, decision)]

    def reason_of(
        self, world: WorldT, decision: Decision, kind: ConditionType = ConditionType.READY
    ) -> str | None:
        return condition_reason(self.status_of(world, decision), kind)


def condition_reason(status: StatusCommon, kind: ConditionType = ConditionType.READY) -> str | None:
    found = status.condition(kind)
    return None if found is None else found.reason
