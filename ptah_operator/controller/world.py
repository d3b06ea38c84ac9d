"""Reading the informer caches into the parts of a World both families share.

Contract: everything here reads caches only, never the API server, and turns raw objects into
the pure layer's types: a source ConfigMap into `SourceFiles`, a policy key into `PolicyFile`,
a Job and its Pods into `JobState`, a result record into `OperationResult`, a Lease into
`LeaseState`, a schema Plan's uploaded piece records into `PlanText`. `SharedCaches.common(...)`
gathers, for one resource, the fields `MigrationWorld` and `SchemaWorld` have alike
(`CommonWorld`), so each family's shell adds only its own.

A result record is `ptah-result-<operation hex>` (key `result.json`); an uploaded piece of a
plan file is `ptah-result-<operation hex>-<index>`, whose one data key `piece` holds the piece
(docs/design/schema-path.md, "The piece record").
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

import structlog

from ptah_operator.api.common import CommonSpec, ReceivedReport
from ptah_operator.api.constants import (
    ANNOTATION_LEASE_HOLDER_UID,
    ANNOTATION_RESULT_ATTEMPT,
    ANNOTATION_RESULT_SEAL,
    GROUP,
    LABEL_OPERATION_ID,
    LABEL_SNAPSHOT,
    VERSION,
    Kind,
    OperationType,
)
from ptah_operator.api.content import MAX_SNAPSHOT_BYTES, ContentError, digest_of_files
from ptah_operator.api.contracts.codes import ExitCode
from ptah_operator.api.fields import parse_time
from ptah_operator.api.kinds import from_manifest, kind_info
from ptah_operator.api.names import (
    PIECE_KEY,
    RESULT_KEY,
    RESULT_PREFIX,
    job_name,
    realm_lease_name,
    result_record_name,
)
from ptah_operator.api.names import PIECE_RECORD as _PIECE_RECORD
from ptah_operator.api.realm import PtahRealm
from ptah_operator.api.result_seal import ResultSeal, body_digest
from ptah_operator.api.source_policy import SourcePolicyError, parse_source_policy
from ptah_operator.controller.indexes import (
    BY_COORDINATION_KEY,
    BY_JOB_UID,
    BY_OWNER_UID,
    BY_POD_NAME_STEM,
    PRIMARY_INDEXES,
    index_job_owner_uid,
    index_job_uid,
    index_owner_uid,
    index_pod_name_stem,
    job_pod_keys,
    job_uid_of_pod,
    pod_name_stem,
    spec_of,
)
from ptah_operator.controller.witness import (
    REPORTING_CONTAINERS,
    job_reporting_digest,
    pod_reporting_digest,
)
from ptah_operator.reconcile.schema.world import PlanText
from ptah_operator.reconcile.world import (
    FAILED_CREATE,
    POD_START_REASONS,
    Claimant,
    JobPhase,
    JobState,
    LeaseState,
    OperationResult,
    PodProblem,
    PolicyFile,
    SourceFiles,
)
from ptah_operator.runtime.informer import Informer
from ptah_operator.runtime.manager import Manager
from ptah_operator.runtime.resources import CONFIG_MAPS, JOBS, LEASES, PODS, Resource
from ptah_operator.runtime.store import KubeObject, metadata

log = structlog.get_logger(__name__)


def ptah_resource(kind: Kind) -> Resource:
    """The `Resource` of one of our kinds, from the api layer's table of kinds."""
    info = kind_info(kind)
    return Resource(GROUP, VERSION, info.plural, str(kind), info.namespaced)


MIGRATIONS = ptah_resource(Kind.PTAH_MIGRATION)
SCHEMAS = ptah_resource(Kind.PTAH_SCHEMA)
REALMS = ptah_resource(Kind.PTAH_REALM)

SOURCE_CONTAINERS = frozenset({"source", "fetch"})
REPORTED_EXITS = frozenset({ExitCode.REPORTED, ExitCode.NOT_DONE})
"""The runner's exit codes after the endpoint stored (201) or already held (200) its report."""
JOB_END_SKEW = dt.timedelta(seconds=60)
"""How much later than its Job's end (a condition the Job controller writes by its clock, in
whole seconds) the reporting container may have ended by its node's clock and still be what
ended it. Wide enough for a node's clock a little ahead (a few seconds would disbelieve every
run on that node); the exit code and the single reporting container do the real work."""
SNAPSHOT_REFUSED_EXIT = ExitCode.REFUSED
"""The exit code of the runner's `source` and `fetch` init containers for files that do not
give the bound digest (or a Git commit no longer reachable)."""


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


# --- one object at a time ----------------------------------------------------------------------


def source_files(configmap: KubeObject, keys: Iterable[str] | None) -> SourceFiles:
    """The selected keys of a source ConfigMap as files, with their digest or a refusal."""
    meta = metadata(configmap)
    everything: dict[str, bytes] = {
        k: str(v).encode() for k, v in (configmap.get("data") or {}).items()
    }
    everything.update(
        {k: base64.b64decode(v) for k, v in (configmap.get("binaryData") or {}).items()}
    )
    wanted = list(keys) if keys is not None else sorted(everything)
    missing = [k for k in wanted if k not in everything]
    files = {k: everything[k] for k in wanted if k in everything}
    refusal: str | None = None
    if missing:
        refusal = f"ConfigMap {meta.get('name')} has no key {missing[0]}"
    elif sum(len(v) for v in files.values()) > MAX_SNAPSHOT_BYTES:
        refusal = f"the selected files are larger than {MAX_SNAPSHOT_BYTES} bytes"
    try:
        digest, manifest = digest_of_files(files)
    except ContentError as error:
        digest, manifest = digest_of_files({})
        refusal = refusal or str(error)
    return SourceFiles(
        config_map_name=str(meta.get("name")),
        config_map_uid=str(meta.get("uid")),
        files=files,
        content_digest=digest,
        manifest=manifest,
        refusal=refusal,
    )


def key_bytes(configmap: KubeObject | None, key: str) -> bytes | None:
    """A ConfigMap key's bytes as a Pod would see them mounted; None when absent."""
    if configmap is None:
        return None
    data = configmap.get("data") or {}
    if key in data:
        return str(data[key]).encode()
    binary = configmap.get("binaryData") or {}
    if key in binary:
        return base64.b64decode(binary[key])
    return None


def policy_digest(configmap: KubeObject | None, key: str) -> str | None:
    """SHA-256 of a ConfigMap key's bytes; None when absent."""
    raw = key_bytes(configmap, key)
    return None if raw is None else "sha256:" + hashlib.sha256(raw).hexdigest()


def source_policy_file(configmap: KubeObject | None, name: str, key: str) -> PolicyFile:
    """A source policy as the cluster holds it: its digest, and the policy parsed (or why it
    cannot be)."""
    raw = key_bytes(configmap, key)
    if raw is None:
        return PolicyFile(name, key, None)
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    try:
        return PolicyFile(name, key, digest, policy=parse_source_policy(raw))
    except SourcePolicyError as error:
        return PolicyFile(name, key, digest, error=str(error))


class ProblemOnsets:
    """When the manager first saw each Job's Pod unable to start, in memory.

    The Pod API puts no time on a container's `state.waiting`, and the Job controller's
    FailedCreate is an Event, not a Job condition; a Pod's creation or a Job's start is not when
    its problem began (an image pulled for minutes before a Secret was found missing; a Pod
    evicted and its replacement refused). So the manager times a problem from the first pass
    that saw it, per Job and per Pod (or per Job for no Pod created), and forgets it once the
    Job shows none. A manager that restarts, or a new leader, times it again: the attempt ends
    up to one grace later, never sooner. Entries not seen for `MEMORY` are dropped."""

    MEMORY: ClassVar[dt.timedelta] = dt.timedelta(hours=1)

    def __init__(self) -> None:
        self._seen: dict[str, dict[str, tuple[dt.datetime, dt.datetime]]] = {}

    def __len__(self) -> int:
        return sum(len(keys) for keys in self._seen.values())

    def since(self, job_uid: str, key: str, now: dt.datetime) -> dt.datetime:
        """When `key` of the Job was first seen (now, the first time); marks it seen now."""
        self._prune(now)
        keys = self._seen.setdefault(job_uid, {})
        first = keys[key][0] if key in keys else now
        keys[key] = (first, now)
        return first

    def clear(self, job_uid: str, now: dt.datetime) -> None:
        """The Job shows no problem: a problem that comes back is timed anew."""
        self._seen.pop(job_uid, None)
        self._prune(now)

    def _prune(self, now: dt.datetime) -> None:
        for job_uid in list(self._seen):
            keys = self._seen[job_uid]
            for key in [k for k, (_, last) in keys.items() if now - last > self.MEMORY]:
                del keys[key]
            if not keys:
                del self._seen[job_uid]


_REASON_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{0,63}")


def _reason_word(value: Any) -> str | None:
    """Kubernetes' one-word reason (`Error`, `OOMKilled`, `BackoffLimitExceeded`), or None for
    anything else: a reason is a word, never a sentence someone wrote."""
    text = value if isinstance(value, str) else ""
    return text if _REASON_WORD.fullmatch(text) else None


def container_ending(container: KubeObject) -> str:
    """How a container ended, by its name, exit code and Kubernetes' reason word only. Its
    termination message is text the container wrote (a hostile image writes there whatever it
    was given, a Secret's value), so it never leaves the Pod: status, Events and logs get this
    instead (issue #18; PRIV-04, PRIV-05). The Pod's log keeps the detail."""
    terminated = (container.get("state") or {}).get("terminated") or {}
    name = str(container.get("name") or "")
    name = name if _K8S_CONTAINER.fullmatch(name) else "(unnamed)"
    code = terminated.get("exitCode")
    ending = (
        f"container {name} exited {code}" if isinstance(code, int) else f"container {name} ended"
    )
    word = _reason_word(terminated.get("reason"))
    return f"{ending} ({word})" if word else ending


_K8S_CONTAINER = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")


def job_state(
    job: KubeObject,
    pods: Iterable[KubeObject] = (),
    onsets: ProblemOnsets | None = None,
    now: dt.datetime | None = None,
) -> JobState:
    """A Job reduced to what a decision uses; `pods` are the Job's Pods (for the init
    container's verdict on the snapshot, and the failing container's last line). Only a Pod
    whose controlling owner reference is this Job counts (not one by its labels, nor one made
    by another Job of the same name). A Pod that cannot start is
    timed by `onsets` at `now`; without them, from the Pod's creation or the Job's start."""
    meta = metadata(job)
    uid = str(meta.get("uid"))
    pods = [p for p in pods if job_uid_of_pod(p) == uid]
    conditions = (job.get("status") or {}).get("conditions") or []
    phase, reason, finished = JobPhase.ACTIVE, None, None
    for condition in conditions:
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            phase = JobPhase.SUCCEEDED
            finished = parse_time(condition.get("lastTransitionTime"))
        elif condition.get("type") == "Failed":
            phase, reason = JobPhase.FAILED, _reason_word(condition.get("reason"))
            finished = parse_time(condition.get("lastTransitionTime"))
    snapshot_refused, message = _containers_ended(pods)
    witnessed = finished is not None and report_witnessed(pods, finished, job_reporting_digest(job))
    problem = None if snapshot_refused else pod_problem(job, pods, phase)
    if onsets is not None and now is not None:
        if problem is None:
            onsets.clear(uid, now)
        else:
            key, found = problem
            problem = key, replace(found, since=onsets.since(uid, key, now))
    return JobState(
        name=str(meta.get("name")),
        uid=uid,
        operation_id=str((meta.get("labels") or {}).get(LABEL_OPERATION_ID, "")),
        phase=phase,
        reason=reason,
        message=message,
        finished_at=finished,
        snapshot_refused=snapshot_refused,
        pod_problem=problem[1] if problem is not None else None,
        suspended=bool((job.get("spec") or {}).get("suspend")),
        created_at=parse_time(meta.get("creationTimestamp")),
        deleting=meta.get("deletionTimestamp") is not None,
        report_witnessed=witnessed,
    )


def report_witnessed(
    pods: Iterable[KubeObject], finished: dt.datetime, template: str | None
) -> bool:
    """Whether the Job that ended at `finished` shows its runner reporting (JobState's
    `report_witnessed`): of all its Pods, one reporting container, terminated with exit code
    0 or 1, restartCount 0, and ended by `finished` + JOB_END_SKEW, in a Pod that runs what the
    Job's template runs (`template`, witness.py's digest). A container killed (137, 143), one
    that could not report (4), one still running or never started, two of them (a Pod made
    beside the Job's own), or one in a Pod someone made with other commands, mounts or DNS,
    and the record is not the run's word."""
    reporting = [
        (pod, container)
        for pod in pods
        for container in (pod.get("status") or {}).get("containerStatuses") or []
        if container.get("name") in REPORTING_CONTAINERS
    ]
    if len(reporting) != 1 or finished.tzinfo is None or template is None:
        return False
    pod, container = reporting[0]
    if pod_reporting_digest(pod) != template:
        return False
    terminated = (container.get("state") or {}).get("terminated") or {}
    code = terminated.get("exitCode")
    ended = parse_time(terminated.get("finishedAt"))
    return (
        type(code) is int
        and code in REPORTED_EXITS
        and type(container.get("restartCount")) is int
        and container.get("restartCount") == 0
        and ended is not None
        and ended.tzinfo is not None
        and ended <= finished + JOB_END_SKEW
    )


def _containers_ended(pods: Iterable[KubeObject]) -> tuple[bool, str | None]:
    """Whether a source init container refused the snapshot, and how the last container that
    failed (or refused) ended (`container_ending`), over the Job's Pods."""
    snapshot_refused, message = False, None
    for pod in pods:
        status = pod.get("status") or {}
        for container in status.get("initContainerStatuses") or []:
            terminated = (container.get("state") or {}).get("terminated") or {}
            if (
                container.get("name") in SOURCE_CONTAINERS
                and terminated.get("exitCode") == SNAPSHOT_REFUSED_EXIT
            ):
                snapshot_refused = True
                message = container_ending(container)
        for container in status.get("containerStatuses") or []:
            terminated = (container.get("state") or {}).get("terminated") or {}
            if terminated.get("exitCode") not in (None, 0):
                message = container_ending(container)
    return snapshot_refused, message


def pod_running(pod: KubeObject) -> bool:
    """Whether a Pod may still run a container: not yet Succeeded or Failed (a Pod being
    deleted runs until its containers stop, and a Pending one may still start)."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def running_operations(
    jobs: Iterable[tuple[KubeObject, Iterable[KubeObject]]],
    named: Iterable[tuple[str, str, Iterable[KubeObject]]],
    namespace: str | None = None,
) -> frozenset[str]:
    """The operations of a resource with a Pod still running: a Pod whose controlling owner
    reference is one of its Jobs (`jobs`: each Job with the Pods found under its UID), or, for
    `named` (the claim's operation id, its Job's name, and the Pods found under that name), a
    Pod named `<job name>-<suffix>` in `namespace`, as a Pod orphaned by its Job's deletion
    still is. A Pod's name cannot change, where its labels can, so removing a label does not
    end a run (issue #18); a Pod made under such a name can only keep a run open (until its
    hard cap). This counts for keeping a run open only: it never makes a Pod a Job's
    (`job_state`)."""
    found: set[str] = set()
    for job, pods in jobs:
        uid = str(metadata(job).get("uid"))
        operation = (metadata(job).get("labels") or {}).get(LABEL_OPERATION_ID)
        if operation and any(job_uid_of_pod(p) == uid and pod_running(p) for p in pods):
            found.add(str(operation))
    for operation, name, pods in named:
        for pod in pods:
            meta = metadata(pod)
            if namespace is not None and meta.get("namespace") != namespace:
                continue
            if pod_name_stem(str(meta.get("name", ""))) == name and pod_running(pod):
                found.add(operation)
    return frozenset(found)


_K8S_NAME = r"[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?"
_KEY = r"[-._a-zA-Z0-9]+"
_MISSING = (
    # The kubelet's words.
    re.compile(rf'\b(?P<kind>secret|configmap) "(?P<name>{_K8S_NAME})" not found', re.I),
    re.compile(
        rf"couldn't find key (?P<key>{_KEY}) in (?P<kind>Secret|ConfigMap) "
        rf"{_K8S_NAME}/(?P<name>{_K8S_NAME})"
    ),
    # hack/localstack/processpods.py's (the runner's integration tests run Pods as processes).
    re.compile(rf"\b(?P<kind>secret|configMap) (?P<name>{_K8S_NAME})( for volume \S+)?: HTTP 404"),
    re.compile(rf"\b(?P<kind>secret|configMap) (?P<name>{_K8S_NAME}) has no key (?P<key>{_KEY})"),
)


def missing_object(message: str | None) -> str | None:
    """What a Pod's message says is missing, by kind, name and key only (never the message)."""
    for pattern in _MISSING:
        found = pattern.search(message or "")
        if found is None:
            continue
        kind = "Secret" if found["kind"].lower() == "secret" else "ConfigMap"
        key = found.groupdict().get("key")
        if key is not None:
            return f"{kind} {found['name']} has no key {key}"
        return f"{kind} {found['name']} not found"
    return None


def pod_problem(
    job: KubeObject, pods: list[KubeObject], phase: JobPhase
) -> tuple[str, PodProblem] | None:
    """Why the Job's Pod cannot start, if it cannot: a container waiting for a reason that
    does not pass by itself (POD_START_REASONS), a Pod failed for one (processpods.py
    fails it at once), or, for a Job the Job controller started that has no Pod at all, no
    Pod created (FAILED_CREATE). With it, the key its onset is timed under (the Pod, or
    FAILED_CREATE), whatever reason it shows meanwhile (an image flips between ErrImagePull
    and ImagePullBackOff)."""
    for pod in pods:
        status = pod.get("status") or {}
        key = str(metadata(pod).get("uid") or metadata(pod).get("name"))
        since = parse_time(metadata(pod).get("creationTimestamp"))
        containers = [
            *(status.get("initContainerStatuses") or []),
            *(status.get("containerStatuses") or []),
        ]
        for container in containers:
            waiting = (container.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in POD_START_REASONS:
                return key, PodProblem(
                    str(waiting["reason"]), missing_object(waiting.get("message")), since
                )
        if status.get("phase") == "Failed" and status.get("reason") in POD_START_REASONS:
            reason, message = str(status["reason"]), status.get("message")
            return key, PodProblem(reason, missing_object(message), since)
    job_status = job.get("status") or {}
    started = parse_time(job_status.get("startTime"))
    if (
        not pods
        and phase == JobPhase.ACTIVE
        and started is not None
        and not job_status.get("active")
        and not job_status.get("succeeded")
        and not job_status.get("failed")
    ):
        return FAILED_CREATE, PodProblem(FAILED_CREATE, None, started)
    return None


def is_piece_record(configmap: KubeObject) -> bool:
    """Whether a ConfigMap is an uploaded piece of a plan file (not a report)."""
    return _PIECE_RECORD.fullmatch(str(metadata(configmap).get("name", ""))) is not None


Claimed = tuple[str, int, ReceivedReport | None]
"""A resource's claim as its records are read: operation id, attempt, and the report the
result endpoint wrote into it (status.activeOperation.report)."""


def operation_result(
    configmap: KubeObject, seal: ResultSeal, claim: Claimed | None = None
) -> OperationResult | None:
    """The result a record holds, when its seal opens for the resource that owns it (the
    owner-uid label), its name and the text it holds; None for anything else (`sealed` tells
    which). `claim` is the resource's claim (operation id, attempt): a record of the claimed
    operation is its result only when it was stored under that attempt."""
    meta = metadata(configmap)
    try:
        text = (configmap.get("data") or {})[RESULT_KEY]
        payload = json.loads(text)
    except (KeyError, ValueError, TypeError):
        log.warning("unreadable result record", name=meta.get("name"))
        return None
    if not isinstance(payload, dict) or not sealed(configmap, seal, payload):
        return None
    attempt = record_attempt(configmap)
    operation_id = str(payload.get("operationID", ""))
    if claim is not None and claim[0] == operation_id and claim[1] != attempt:
        return None
    return OperationResult(
        operation_id=operation_id,
        operation_type=str(payload.get("type", "")),
        received_at=parse_time(meta.get("creationTimestamp")) or now_utc(),
        payload=payload,
        record_name=str(meta.get("name")),
    )


_ATTEMPT = re.compile(r"[1-9][0-9]{0,8}")


def record_attempt(configmap: KubeObject) -> int | None:
    """The attempt a record says it was stored under (the seal covers it), or None."""
    value = (metadata(configmap).get("annotations") or {}).get(ANNOTATION_RESULT_ATTEMPT)
    return int(value) if isinstance(value, str) and _ATTEMPT.fullmatch(value) else None


def sealed(configmap: KubeObject, seal: ResultSeal, payload: Mapping[str, Any]) -> bool:
    """Whether the record's seal is the endpoint's for its namespace, the operation its body
    names, the resource that owns it, its own name (one of the operation's, with the
    operation's label), its attempt and the text it holds; a record being deleted is none."""
    meta = metadata(configmap)
    owners = [
        str(ref.get("uid"))
        for ref in meta.get("ownerReferences") or []
        if isinstance(ref, Mapping) and ref.get("controller")
    ]
    if len(owners) != 1 or meta.get("deletionTimestamp"):
        return False
    namespace, operation_id = str(meta.get("namespace")), str(payload.get("operationID"))
    name = str(meta.get("name"))
    if (meta.get("labels") or {}).get(LABEL_OPERATION_ID) != operation_id:
        return False
    attempt = record_attempt(configmap)
    if attempt is None or name not in seal.record_names(namespace, operation_id, attempt):
        return False
    text = (configmap.get("data") or {}).get(RESULT_KEY)
    presented = (meta.get("annotations") or {}).get(ANNOTATION_RESULT_SEAL)
    return (
        isinstance(text, str)
        and attempt is not None
        and seal.opens(
            presented, namespace, operation_id, owners[0], text, name=name, attempt=attempt
        )
    )


def unsealed_records(owned: Iterable[KubeObject], seal: ResultSeal) -> list[str]:
    """The names of the result records among a resource's ConfigMaps that are readable but
    whose seal does not open: not the endpoint's, so not results (logged by name only)."""
    names: list[str] = []
    for cm in owned:
        name = str(metadata(cm).get("name", ""))
        if not name.startswith(RESULT_PREFIX) or is_piece_record(cm):
            continue
        if metadata(cm).get("deletionTimestamp"):
            continue
        try:
            payload = json.loads((cm.get("data") or {})[RESULT_KEY])
        except (KeyError, ValueError, TypeError):
            continue
        if not isinstance(payload, dict) or not sealed(cm, seal, payload):
            names.append(name)
    return names


class UnsealedReports:
    """Which unsealed records the manager has reported already, per resource: only the ones
    still there (one that goes and comes back is reported again), for at most `max_resources`
    resources (least recently seen forgotten first), a resource forgotten once deleted."""

    def __init__(self, max_resources: int = 4096) -> None:
        self.max_resources = max_resources
        self._seen: OrderedDict[str, tuple[str, frozenset[str]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def new(self, key: str, uid: str, names: Iterable[str]) -> list[str]:
        """The names among `names` (the resource's unsealed records now) not reported yet."""
        now = frozenset(names)
        seen_uid, reported = self._seen.pop(key, (uid, frozenset()))
        if seen_uid != uid:
            reported = frozenset()
        if now:
            self._seen[key] = (uid, now)
            while len(self._seen) > self.max_resources:
                self._seen.popitem(last=False)
        return sorted(now - reported)

    def forget(self, key: str) -> None:
        self._seen.pop(key, None)


def plan_piece(configmap: KubeObject) -> tuple[str, int, str] | None:
    """(operation id, index, text) of an uploaded piece record, or None when it is not one or
    holds no readable text (the lifecycle then finds the piece missing)."""
    meta = metadata(configmap)
    match = _PIECE_RECORD.fullmatch(str(meta.get("name", "")))
    if match is None:
        return None
    operation_id = str((meta.get("labels") or {}).get(LABEL_OPERATION_ID) or "")
    if not operation_id:
        operation_id = "op-" + match.group(1)
    data = configmap.get("data") or {}
    binary = configmap.get("binaryData") or {}
    if PIECE_KEY in data:
        text = str(data[PIECE_KEY])
    elif PIECE_KEY in binary:
        try:
            text = base64.b64decode(binary[PIECE_KEY]).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            log.warning("unreadable plan piece record", name=meta.get("name"))
            return None
    else:
        log.warning("plan piece record without its text", name=meta.get("name"))
        return None
    return operation_id, int(match.group(2)), text


def plan_texts(configmaps: Iterable[KubeObject]) -> dict[str, PlanText]:
    """The uploaded plan files among a resource's ConfigMaps, by operation id."""
    pieces: dict[str, dict[int, str]] = {}
    for configmap in configmaps:
        piece = plan_piece(configmap)
        if piece is not None:
            operation_id, index, text = piece
            pieces.setdefault(operation_id, {})[index] = text
    return {op: PlanText(op, dict(sorted(found.items()))) for op, found in pieces.items()}


def lease_state(lease: KubeObject, now: dt.datetime) -> LeaseState:
    meta, spec = metadata(lease), spec_of(lease)
    holder = spec.get("holderIdentity") or None
    renewed = parse_time(spec.get("renewTime")) or parse_time(spec.get("acquireTime"))
    duration = int(spec.get("leaseDurationSeconds") or 0)
    expired = holder is None or renewed is None or renewed + dt.timedelta(seconds=duration) < now
    return LeaseState(
        name=str(meta.get("name")),
        namespace=str(meta.get("namespace")),
        holder=holder,
        epoch=int(spec.get("leaseTransitions") or 0),
        expired=expired,
        holder_uid=(meta.get("annotations") or {}).get(ANNOTATION_LEASE_HOLDER_UID),
    )


# --- one resource's shared part of the World ---------------------------------------------------


@dataclass(frozen=True)
class CommonWorld:
    """The World fields MigrationWorld and SchemaWorld share, under the same names."""

    source: SourceFiles | None = None
    verification_policy: PolicyFile | None = None
    source_policy: PolicyFile | None = None
    snapshots: frozenset[str] = frozenset()
    jobs: Mapping[str, JobState] = field(default_factory=dict)
    running_pods: frozenset[str] = frozenset()
    results: Mapping[str, OperationResult] = field(default_factory=dict)
    claimants: tuple[Claimant, ...] = ()
    realm: PtahRealm | None = None
    realm_missing: bool = False
    lease: LeaseState | None = None
    manager_namespace: str = "ptah-system"

    def fields(self) -> dict[str, Any]:
        """The fields as keyword arguments of a World (shallow: values stay as they are)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class SharedCaches:
    """The informers both families read, taken from the manager (shared by resource)."""

    def __init__(self, manager: Manager, lease_namespace: str, seal: ResultSeal) -> None:
        self.lease_namespace = lease_namespace
        self.seal = seal
        """Opens the result endpoint's records; a record it does not open is no result."""
        self.migrations = manager.informer(MIGRATIONS, indexers=PRIMARY_INDEXES)
        self.schemas = manager.informer(SCHEMAS, indexers=PRIMARY_INDEXES)
        self.configmaps = manager.informer(CONFIG_MAPS, indexers={BY_OWNER_UID: index_owner_uid})
        self.jobs = manager.informer(JOBS, indexers={BY_OWNER_UID: index_job_owner_uid})
        self.pods = manager.informer(
            PODS,
            indexers={
                BY_JOB_UID: index_job_uid,
                BY_OWNER_UID: index_owner_uid,
                BY_POD_NAME_STEM: index_pod_name_stem,
            },
        )
        self.onsets = ProblemOnsets()
        """When each Job's Pod was first seen unable to start (the Pod API has no such time)."""
        self.realms = manager.informer(REALMS)
        self.leases = manager.informer(LEASES, lease_namespace)
        self.by_kind = {Kind.PTAH_MIGRATION: self.migrations, Kind.PTAH_SCHEMA: self.schemas}
        """Each family's resources, by kind."""

    @property
    def claimant_informers(self) -> tuple[Informer, ...]:
        return (self.migrations, self.schemas)

    def owned_configmaps(self, uid: str) -> list[KubeObject]:
        return self.configmaps.store.by_index(BY_OWNER_UID, uid)

    def common(
        self,
        spec: CommonSpec,
        namespace: str,
        uid: str,
        now: dt.datetime,
        owned_configmaps: list[KubeObject] | None = None,
        claim: Claimed | None = None,
    ) -> CommonWorld:
        """What the caches say about one resource's source, operations, census and Lease;
        `claim` is its claim's operation id and attempt, when it has one."""
        source, verification_policy, source_policy = self.sources(spec, namespace)
        owned = owned_configmaps if owned_configmaps is not None else self.owned_configmaps(uid)
        snapshots, results = owned_records(owned, self.seal, claim)
        jobs = self.job_states(namespace, uid, now)
        running_pods = running_operations(
            ((j, self._pods_of(j)) for j in self._owned_jobs(namespace, uid)),
            self._named_pods(namespace, claim[0] if claim is not None else None),
            namespace,
        )
        claimants = self.claimants(spec.target.coordination_key)
        realm, realm_missing = self.realm(spec.target.realm)
        return CommonWorld(
            source=source,
            verification_policy=verification_policy,
            source_policy=source_policy,
            snapshots=snapshots,
            jobs=jobs,
            results=results,
            running_pods=running_pods,
            claimants=claimants,
            realm=realm,
            realm_missing=realm_missing,
            lease=self.lease(spec.target.coordination_key, now),
            manager_namespace=self.lease_namespace,
        )

    def sources(
        self, spec: CommonSpec, namespace: str
    ) -> tuple[SourceFiles | None, PolicyFile | None, PolicyFile | None]:
        """The source ConfigMap's files, the verification policy, the source policy."""
        configmaps = self.configmaps.store
        source_policy: PolicyFile | None = None
        named = spec.config_map or spec.git
        policy_ref = named.source_policy_from if named is not None else None
        if policy_ref is not None:
            holder = configmaps.get(f"{namespace}/{policy_ref.name}")
            source_policy = source_policy_file(holder, policy_ref.name, policy_ref.key)
        source: SourceFiles | None = None
        if spec.config_map is not None:
            configmap = configmaps.get(f"{namespace}/{spec.config_map.name}")
            if configmap is not None:
                source = source_files(configmap, spec.config_map.keys)
                if source_policy is not None:
                    source = replace(source, source_policy_digest=source_policy.digest)
        verification_policy: PolicyFile | None = None
        if spec.artifact is not None:
            ref = spec.artifact.verification_policy_from
            holder = configmaps.get(f"{namespace}/{ref.name}")
            verification_policy = PolicyFile(ref.name, ref.key, policy_digest(holder, ref.key))
        return source, verification_policy, source_policy

    def job_states(self, namespace: str, uid: str, now: dt.datetime) -> dict[str, JobState]:
        """The resource's Jobs, each with the Pods it made (by its UID, not its name), by name."""
        return {
            state.name: state
            for state in (
                job_state(j, self._pods_of(j), self.onsets, now)
                for j in self._owned_jobs(namespace, uid)
            )
        }

    def _owned_jobs(self, namespace: str, uid: str) -> list[KubeObject]:
        """The resource's Jobs: under its UID in the owner index, and in its namespace (a Job
        is keyed by its name alone in the World; one carrying the UID elsewhere is not it)."""
        return [
            j
            for j in self.jobs.store.by_index(BY_OWNER_UID, uid)
            if metadata(j).get("namespace") == namespace
        ]

    def _named_pods(
        self, namespace: str, operation_id: str | None
    ) -> list[tuple[str, str, list[KubeObject]]]:
        """The Pods in `namespace` named after each Job the claimed operation may have (its
        Job's name follows from its type and id), for `running_operations`."""
        if operation_id is None:
            return []
        named = []
        for operation_type in OperationType:
            name = job_name(operation_type, operation_id)
            pods = self.pods.store.by_index(BY_POD_NAME_STEM, f"{namespace}/{name}")
            named.append((operation_id, name, pods))
        return named

    def _pods_of(self, job: KubeObject) -> list[KubeObject]:
        """The Pods a Job controls (by its UID)."""
        return [p for key in job_pod_keys(job) for p in self.pods.store.by_index(BY_JOB_UID, key)]

    def claimants(self, coordination_key: str) -> tuple[Claimant, ...]:
        """Every resource of every family under the coordination key (the census)."""
        return tuple(
            Claimant(
                kind=str(other.get("kind")),
                namespace=str(metadata(other).get("namespace")),
                name=str(metadata(other).get("name")),
                uid=str(metadata(other).get("uid")),
                shared_realm=bool((spec_of(other).get("target") or {}).get("sharedRealm")),
                suspended=bool(spec_of(other).get("suspend")),
            )
            for informer in self.claimant_informers
            for other in informer.store.by_index(BY_COORDINATION_KEY, coordination_key)
        )

    def realm(self, name: str | None) -> tuple[PtahRealm | None, bool]:
        """The PtahRealm a resource names, and whether it names one that does not exist."""
        if not name:
            return None, False
        realm_obj = self.realms.store.get(name)
        if realm_obj is None:
            return None, True
        return from_manifest(PtahRealm, realm_obj), False

    def lease(self, coordination_key: str, now: dt.datetime) -> LeaseState | None:
        """The realm Lease of the coordination key, when it exists."""
        lease_obj = self.leases.store.get(
            f"{self.lease_namespace}/{realm_lease_name(coordination_key)}"
        )
        return lease_state(lease_obj, now) if lease_obj is not None else None


def owned_records(
    owned: list[KubeObject], seal: ResultSeal, claim: Claimed | None = None
) -> tuple[frozenset[str], dict[str, OperationResult]]:
    """Among a resource's ConfigMaps: the names of its snapshots, and its results by operation
    (only records whose seal opens; of the claimed operation, only its attempt's). Of two
    records of one operation (its own name and the fallback), the one under its own name; two
    of one attempt that differ are a conflict, as the endpoint's conflict record is. The
    claimed operation's record is its result only when its digest is the one the claim
    remembers (`claim_checked`)."""
    snapshots = frozenset(
        str(metadata(cm).get("name"))
        for cm in owned
        if (metadata(cm).get("labels") or {}).get(LABEL_SNAPSHOT)
    )
    results: dict[str, OperationResult] = {}
    texts: dict[str, str] = {}
    """The text of each record read, by its name."""
    read: dict[str, list[tuple[int | None, str]]] = {}
    """The attempt and text of every record each operation's results were read from."""
    for cm in owned:
        name = str(metadata(cm).get("name", ""))
        if name.startswith(RESULT_PREFIX) and not is_piece_record(cm):
            result = operation_result(cm, seal, claim)
            if result is None:
                continue
            text = str((cm.get("data") or {}).get(RESULT_KEY))
            texts[name] = text
            read.setdefault(result.operation_id, []).append((record_attempt(cm), text))
            kept = results.get(result.operation_id)
            if kept is None or result_record_name(result.operation_id) == name:
                results[result.operation_id] = result
    for operation_id, records in read.items():
        differing = {
            (attempt, text)
            for attempt, text in records
            if any(a == attempt and t != text for a, t in records)
        }
        if differing:
            ordered = sorted(text for _, text in differing)
            results[operation_id] = _conflicting(results[operation_id], ordered[0], ordered[-1])
    if claim is not None and claim[0] in results:
        kept = results[claim[0]]
        text = texts.get(kept.record_name or result_record_name(claim[0]), "")
        results[claim[0]] = claim_checked(kept, text, claim)
    return snapshots, results


def claim_checked(result: OperationResult, text: str, claim: Claimed) -> OperationResult:
    """The claimed operation's result as the claim allows it (docs/security.md, "A deleted and
    replaced record"): the record whose digest the claim remembers for its attempt is the
    result; any other, or every one once the claim marks a conflict, is a conflict; a record
    the claim remembers nothing of (the endpoint's patch not made yet, or failed, or a record
    the previous version stored) is unconfirmed. Both are no result (reconcile/reports.py)."""
    if "conflict" in result.payload:
        return result
    report = claim[2]
    if report is None or report.attempt != claim[1]:
        envelope = _envelope(result)
        envelope["unconfirmed"] = {"received": body_digest(text)}
        return replace(result, payload=envelope)
    if report.conflict or report.digest != body_digest(text):
        envelope = _envelope(result)
        envelope["conflict"] = {"recorded": report.digest, "received": body_digest(text)}
        return replace(result, payload=envelope)
    return result


def _envelope(result: OperationResult) -> dict[str, Any]:
    return {
        k: result.payload[k]
        for k in ("contract", "operationID", "type", "resource")
        if k in result.payload
    }


def _conflicting(result: OperationResult, text: str, other: str) -> OperationResult:
    """The result of two different sealed records of one attempt: their envelope and the
    digests of both, which is no result (reconcile/reports.py), as the conflict record is."""
    envelope = _envelope(result)
    envelope["conflict"] = {"recorded": body_digest(text), "received": body_digest(other)}
    return replace(result, payload=envelope)
