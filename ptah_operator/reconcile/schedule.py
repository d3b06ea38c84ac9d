"""When things happen again: the spec's two intervals and the delays the lifecycle waits for.

The seeds give two clocks, `spec.interval` (a healthy resource reads its database again) and
`spec.execution.failureRetryInterval` (a failed read runs again, a Failed resource starts
over). The delays below are this operator's own choices where the seeds give none; each says
why it is the size it is.
"""

from __future__ import annotations

import datetime as dt

from ptah_operator.api.constants import MAX_INTERVAL, MIN_INTERVAL
from ptah_operator.api.fields import parse_duration
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.schema import PtahSchema
from ptah_operator.reconcile.jobs import ACTIVE_DEADLINE_SECONDS

RESULT_GRACE = dt.timedelta(seconds=60)
"""How long a Job that ended may wait for its result to show in the cache before it counts as
having left none. The runner stores its result before it exits, so the record is normally a
moment behind the Job's end; a minute covers a slow watch without delaying a real loss much."""

RUN_CAP = dt.timedelta(seconds=ACTIVE_DEADLINE_SECONDS) + dt.timedelta(minutes=15)
"""The longest an Apply or a read is followed, from its Job's creation (from the claim while no
Job was seen; reconcile/runs.py `cap`): the Job's activeDeadlineSeconds (the Job controller ends it then, unless someone suspended or edited it)
and a margin for its Pods to stop and its result to show. A run still not over then ends
Unknown (an Apply is held and read back); nothing holds the claim and the realm Lease for ever
(issue #18; docs/design/lifecycle-decisions.md, "When a run is over")."""

POD_STOP_MARGIN = dt.timedelta(minutes=15)
"""How long past its hard cap a run waits for its Pods to stop (its Job deleted at the cap takes
them with it, each within its termination grace). A Pod still running then is stuck on its node
or was made by someone else under the Job's name; the run ends Unknown all the same, so no Pod
holds a claim and the realm Lease for ever (issue #18, fourth review)."""

POD_CACHE_GRACE = dt.timedelta(seconds=10)
"""How long a dispatched run whose Job is gone (no result, no Pod of it in the cache) waits
before it ends: an orphaned Pod of it may be a moment behind in the Pod cache, and ending the
run would read back a database it may still change (issue #18, fifth review)."""

POD_STOP_CHECK = dt.timedelta(seconds=30)
"""How often a run past its hard cap, with a Pod of it still running, looks again (the Pod's
own events wake it sooner)."""

REALM_RECHECK = dt.timedelta(seconds=60)
"""A realm refusal is taken again at least once a minute (SCH-50)."""

LEASE_WAIT = dt.timedelta(seconds=10)
"""How soon an Apply that found the realm Lease held by another operation asks again."""

PLAN_PUBLISH_CHECK = dt.timedelta(seconds=5)
"""How soon a pass looks again for a plan it decided to publish (its UID comes from the API
server, and an approval names it)."""

CLEANUP_CHECK = dt.timedelta(seconds=2)
"""How soon a retry that had to remove its failed attempt's Job and record looks again."""

FINISHED_JOB_KEPT = dt.timedelta(minutes=5)
"""How long the Job of an Apply that succeeded is kept after it finished (JOB-07: finished
Jobs about five minutes), the same as a read's Job by its TTL (RunnerConfig.job_ttl_seconds).
An Apply Job is created with the failed Apply's day, since its outcome is not known then; the
operator removes it once the run is on record as having succeeded."""

POD_START_GRACE = dt.timedelta(minutes=2)
"""How long a Job's Pod may show a reason it cannot start for (a missing Secret or key, an image
that cannot be pulled, no Pod created) before the attempt counts as failed. A Secret made a
moment after the resource, or a registry that answers late, gets that long."""

JOB_RECREATE_CHECK = dt.timedelta(seconds=10)
"""How soon a claim whose Job is not in the cache yet asks for it again."""


def _within_bounds(value: str) -> dt.timedelta:
    """A spec duration held within the bounds the CRD enforces, for an object stored before
    the CRD enforced them: `0s` must not read the database in a loop."""
    return min(
        max(parse_duration(value), parse_duration(MIN_INTERVAL)), parse_duration(MAX_INTERVAL)
    )


def interval(migration: PtahMigration | PtahSchema) -> dt.timedelta:
    """spec.interval: how often a resting resource reads its database again."""
    return _within_bounds(migration.spec.interval)


def failure_retry_interval(migration: PtahMigration | PtahSchema) -> dt.timedelta:
    """spec.execution.failureRetryInterval: how long a failure waits before it is retried."""
    return _within_bounds(migration.spec.execution.failure_retry_interval)
