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

RESULT_GRACE = dt.timedelta(seconds=60)
"""How long a Job that ended may wait for its result to show in the cache before it counts as
having left none. The runner stores its result before it exits, so the record is normally a
moment behind the Job's end; a minute covers a slow watch without delaying a real loss much."""

REALM_RECHECK = dt.timedelta(seconds=60)
"""A realm refusal is taken again at least once a minute (SCH-50)."""

LEASE_WAIT = dt.timedelta(seconds=10)
"""How soon an Apply that found the realm Lease held by another operation asks again."""

PLAN_PUBLISH_CHECK = dt.timedelta(seconds=5)
"""How soon a pass looks again for a plan it decided to publish (its UID comes from the API
server, and an approval names it)."""

CLEANUP_CHECK = dt.timedelta(seconds=2)
"""How soon a retry that had to remove its failed attempt's Job and record looks again."""

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
