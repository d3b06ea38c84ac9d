"""Requeue: the three ways a pass asks to be run again, and what a Draft's wishes become."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest

from ptah_operator.reconcile.decision import Decision, Requeue, RequeueKind
from ptah_operator.reconcile.draft import Effects

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
A_MINUTE = dt.timedelta(minutes=1)


@dataclass(kw_only=True)
class _Pass(Effects):
    @property
    def now(self) -> dt.datetime:
        return NOW


def test_a_decision_asks_for_nothing_by_default() -> None:
    assert Decision().requeue is Requeue.NONE
    assert Decision().requeue_after is None


def test_an_after_requeue_waits_a_positive_delay() -> None:
    assert Requeue.after(A_MINUTE).delay == A_MINUTE
    with pytest.raises(ValueError):
        Requeue.after(dt.timedelta(0))
    with pytest.raises(ValueError):
        Requeue(RequeueKind.NONE, A_MINUTE)


def test_a_time_not_after_now_is_due_through_the_own_write() -> None:
    assert Requeue.at(NOW, NOW) is Requeue.AFTER_OWN_WRITE
    assert Requeue.at(NOW - A_MINUTE, NOW) is Requeue.AFTER_OWN_WRITE
    assert Requeue.at(NOW + A_MINUTE, NOW) == Requeue.after(A_MINUTE)
    assert Decision(requeue=Requeue.AFTER_OWN_WRITE).requeue_after is None


@pytest.mark.parametrize(
    ("wakes", "own_write", "expected"),
    [
        ((), False, Requeue.NONE),
        ((2 * A_MINUTE, A_MINUTE), False, Requeue.after(A_MINUTE)),
        ((A_MINUTE,), True, Requeue.AFTER_OWN_WRITE),
        ((), True, Requeue.AFTER_OWN_WRITE),
    ],
)
def test_a_pass_wakes_at_its_earliest_wish(
    wakes: tuple[dt.timedelta, ...], own_write: bool, expected: Requeue
) -> None:
    draft = _Pass()
    for delay in wakes:
        draft.wake_in(delay)
    if own_write:
        draft.rely_on_own_write()
    assert draft.requeue() == expected
