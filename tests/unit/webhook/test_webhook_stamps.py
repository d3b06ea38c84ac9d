"""The approver stamp's edges that `make mutate` found unpinned (issue #11): the authenticated
user's UID is recorded, a request without a usable username is refused with its message, and
every warning says exactly what was replaced. The other stamp tests are in
test_webhook_checks.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from ptah_operator.api.common import UserInfo
from ptah_operator.webhook.stamps import Stamp, UnauthenticatedError, stamp, user_from_request

NOW = datetime(2026, 8, 30, 12, 30, 5, tzinfo=UTC)


@pytest.mark.req("APR-04")
def test_the_authenticated_users_uid_is_recorded_when_it_is_a_name() -> None:
    assert user_from_request({"username": "alice", "uid": "u-1"}).uid == "u-1"
    assert user_from_request({"username": "alice", "uid": ""}).uid is None
    assert user_from_request({"username": "alice", "uid": 7}).uid is None


@pytest.mark.req("APR-04")
@pytest.mark.parametrize("info", [None, {}, {"username": ""}, {"username": 7}, {"uid": "u-1"}])
def test_a_request_without_a_usable_username_is_refused(info: dict[str, Any] | None) -> None:
    with pytest.raises(UnauthenticatedError) as refused:
        user_from_request(info)
    assert str(refused.value) == "the request carries no authenticated user to record"


@pytest.mark.req("APR-04")
def test_each_warning_says_what_was_replaced() -> None:
    user = UserInfo(username="alice@example.com")
    forged = {"spec": {"approvedBy": {"username": "mallory"}, "approvedAt": "2020-01-01T00:00:00Z"}}
    assert stamp("PtahMigrationApproval", forged, user, NOW).warnings == [
        "spec.approvedBy was replaced: admission records the authenticated user alice@example.com",
        "spec.approvedAt was replaced with the time of admission",
    ]


def test_a_kind_without_a_stamp_gets_no_patch_and_no_warning() -> None:
    assert stamp("PtahMigration", {"spec": {}}, UserInfo(username="c"), NOW) == Stamp([], [])
