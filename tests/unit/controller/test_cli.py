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


# --- the runner image (issue #18) --------------------------------------------------------------

PINNED = "registry.example/ptah@sha256:" + "a" * 64
MIRRORED = "sha256:" + "b" * 64


def test_the_runner_image_and_its_allowlist_reach_the_job_builder() -> None:
    from ptah_operator.cli.manager import build_runner_config, check_runner_image_flags

    args = build_parser().parse_args(
        [f"--runner-image={PINNED}", f"--allowed-runner-images={MIRRORED},{PINNED}"]
    )
    check_runner_image_flags(args)
    runner = build_runner_config(args, "ptah-system")
    assert runner.image == PINNED
    assert runner.allowed_images == frozenset({MIRRORED, "sha256:" + "a" * 64})


def test_the_allowed_source_hosts_reach_the_job_builder() -> None:
    from ptah_operator.cli.manager import build_runner_config

    args = build_parser().parse_args(
        [f"--runner-image={PINNED}", "--allowed-source-hosts=Git.Internal, registry.internal:5000"]
    )
    runner = build_runner_config(args, "ptah-system")
    assert runner.allowed_source_hosts == frozenset({"git.internal", "registry.internal:5000"})
    default = build_runner_config(build_parser().parse_args([]), "ptah-system")
    assert default.allowed_source_hosts == frozenset()


@pytest.mark.parametrize(
    "flags",
    [
        ["--runner-image=registry.example/ptah:0.1.0"],
        [],
        [f"--runner-image={PINNED}", "--allowed-runner-images=registry.example/ptah:latest"],
        [f"--runner-image={PINNED}", "--allowed-runner-images=sha256:abc"],
    ],
    ids=["a tag", "the default tag", "a tag allowed", "a short digest allowed"],
)
def test_an_unpinned_runner_image_is_refused_at_start(flags: list[str]) -> None:
    from ptah_operator.cli.manager import check_runner_image_flags

    args = build_parser().parse_args(flags)
    with pytest.raises(ValueError, match="digest"):
        check_runner_image_flags(args)


def test_an_observing_manager_runs_no_job_and_asks_for_no_image() -> None:
    from ptah_operator.cli.manager import check_runner_image_flags

    check_runner_image_flags(build_parser().parse_args(["--webhook-bind-address=0"]))


def test_no_flag_takes_a_tag_for_the_runner_image() -> None:
    """The local stack runs the image containerd pinned, so nothing needs a tag any more."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(
            ["--runner-image=localhost/ptah-operator:dev", "--allow-unpinned-runner-image"]
        )


def test_previous_result_keys_are_a_repeatable_flag() -> None:
    """Four eyes: records sealed under a result key replaced since still open (review 4)."""
    assert build_parser().parse_args([]).previous_result_key_file == []
    args = build_parser().parse_args(
        ["--previous-result-key-file", "/keys/a", "--previous-result-key-file", "/keys/b"]
    )
    assert args.previous_result_key_file == [Path("/keys/a"), Path("/keys/b")]
