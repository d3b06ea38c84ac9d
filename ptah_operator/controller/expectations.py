"""Expectations: what a resource's last pass wrote, until the informer caches show it.

Contract: after a pass wrote a resource's status (or its annotations) or created a Job, the
next pass of that resource waits (the shell requeues it every `EXPECTATION_POLL` seconds)
until the caches hold the write and the Job, or `EXPECTATION_TIMEOUT` passed since the last
thing expected. A World built from a cache one write behind would otherwise take a Job it
created for absent (an undispatched Apply may be withdrawn while its Job in fact exists) or
decide from a status that is no longer current.

The mechanism is kube-controller-manager's `ControllerExpectations`
(`pkg/controller/controller_utils.go`), which its ReplicaSet and Job controllers use so as not
to create Pods twice: a controller records what it expects before it acts, the informer side
observes it, and `SatisfiedExpectations` gates the next sync; expired expectations count as
satisfied, so a lost event delays a controller but never wedges it. The counterparts here:

    created_job(key, job)      ExpectCreations, one named Job at a time (as the
                               UIDTrackingControllerExpectations track deletions by key)
    wrote(key, version)        (none there: our own status write, by the version it replaced)
    not unmet(key, obj, seen)  SatisfiedExpectations; it also observes (CreationObserved),
                               by asking the Job cache rather than being told by a handler
    forget(key)                DeleteExpectations
    EXPECTATION_TIMEOUT        ExpectationsTimeout (5 minutes there, 30 s here: a pass is cheap)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from ptah_operator.runtime.clock import Clock
from ptah_operator.runtime.store import KubeObject, metadata

log = structlog.get_logger(__name__)

EXPECTATION_TIMEOUT = 30.0
"""Seconds a pass waits at most for the caches to show its own writes."""
EXPECTATION_POLL = 0.5


@dataclass
class _Expected:
    deadline: float
    stale_versions: set[str] = field(default_factory=set)
    """The resourceVersions the pass's writes replaced: a cache showing one is behind."""
    jobs: set[str] = field(default_factory=set)
    """Keys ("namespace/name") of Jobs created and not yet seen in the cache."""


class Expectations:
    """What a resource's last pass wrote, until the caches show it."""

    def __init__(self, clock: Clock, timeout: float = EXPECTATION_TIMEOUT) -> None:
        self._clock = clock
        self._timeout = timeout
        # Invariants, for every key in _by_key:
        # - the entry holds at least one expectation (a stale version or a Job) whenever
        #   `unmet` returns; an entry found empty there is deleted, so "no entry" means
        #   "nothing expected" and costs nothing on the next pass;
        # - `deadline` is `timeout` after the last expectation was added, never earlier:
        #   every write of a pass pushes it on, so a pass that writes twice waits for both;
        # - a resourceVersion stays in `stale_versions` only while the cached object still
        #   shows it; the first pass that sees another version drops them all (the cache has
        #   moved past every write this pass replaced, as versions only move forward);
        # - a Job key stays in `jobs` only while the Job cache does not hold it.
        self._by_key: dict[str, _Expected] = {}

    def __len__(self) -> int:
        """Resources with something expected."""
        return len(self._by_key)

    def _entry(self, key: str) -> _Expected:
        deadline = self._clock.now() + self._timeout
        entry = self._by_key.get(key)
        if entry is None:
            entry = self._by_key[key] = _Expected(deadline)
        entry.deadline = deadline
        return entry

    def wrote(self, key: str, replaced_version: str) -> None:
        """The resource was written over `replaced_version`."""
        self._entry(key).stale_versions.add(replaced_version)

    def created_job(self, key: str, job_key: str) -> None:
        self._entry(key).jobs.add(job_key)

    def unmet(self, key: str, obj: KubeObject, job_seen: Callable[[str], bool]) -> bool:
        """Whether the caches are still behind this resource's last pass (and not for too
        long). Met expectations are forgotten."""
        entry = self._by_key.get(key)
        if entry is None:
            return False
        if str(metadata(obj).get("resourceVersion")) not in entry.stale_versions:
            entry.stale_versions.clear()
        entry.jobs = {job for job in entry.jobs if not job_seen(job)}
        if not entry.stale_versions and not entry.jobs:
            del self._by_key[key]
            return False
        if self._clock.now() >= entry.deadline:
            log.warning("caches did not show the last pass's writes in time", key=key)
            del self._by_key[key]
            return False
        return True

    def forget(self, key: str) -> None:
        self._by_key.pop(key, None)
