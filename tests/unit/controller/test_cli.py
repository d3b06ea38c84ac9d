"""Flags of `ptah-operator` and the manager's bind address."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptah_operator.cli.manager import _seconds, build_parser, options_from
from ptah_operator.runtime.manager import parse_bind_address


def test_bind_addresses() -> None:
    assert parse_bind_address(":8080") == (None, 8080)
    assert parse_bind_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_bind_address("[::1]:9090") == ("::1", 9090)
    assert parse_bind_address("0") is None
    with pytest.raises(ValueError):
        parse_bind_address("localhost")


def test_durations() -> None:
    assert _seconds("15") == 15
    assert _seconds("1.5s") == 1.5
    assert _seconds("500ms") == 0.5
    assert _seconds("2m") == 120


def test_leader_election_flags() -> None:
    args = build_parser().parse_args(
        [
            "--leader-elect",
            "--leader-election-namespace=ops",
            "--leader-election-identity=me",
            "--leader-election-lease-duration=6s",
            "--leader-election-renew-deadline=4s",
            "--leader-election-retry-period=1s",
            "--metrics-bind-address=127.0.0.1:0",
        ]
    )
    options = options_from(args)
    le = options.leader_election
    assert le is not None
    assert (le.namespace, le.name, le.identity) == ("ops", "ptah-operator-leader", "me")
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (6, 4, 1)
    assert options.metrics_bind_address == "127.0.0.1:0"


def test_defaults_match_controller_runtime() -> None:
    options = options_from(build_parser().parse_args([]))
    assert options.leader_election is None
    assert options.metrics_bind_address == ":8080"
    assert options.graceful_shutdown_timeout == 30


def test_bad_timings_are_refused() -> None:
    args = build_parser().parse_args(
        ["--leader-elect", "--leader-election-namespace=ops", "--leader-election-renew-deadline=20"]
    )
    with pytest.raises(ValueError):
        options_from(args)


def test_previous_result_keys_are_a_repeatable_flag() -> None:
    """Four eyes: records sealed under a result key replaced since still open (review 4)."""
    assert build_parser().parse_args([]).previous_result_key_file == []
    args = build_parser().parse_args(
        ["--previous-result-key-file", "/keys/a", "--previous-result-key-file", "/keys/b"]
    )
    assert args.previous_result_key_file == [Path("/keys/a"), Path("/keys/b")]
