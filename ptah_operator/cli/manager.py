"""`ptah-operator`: the manager process.

Contract: loads the client configuration (`--kubeconfig`, else in-cluster when
KUBERNETES_SERVICE_HOST is set, else $KUBECONFIG / ~/.kube/config), configures JSON logging,
builds the controllers of `default_registry()`, and runs the `Manager` until SIGTERM or
SIGINT. Exits 0 after a graceful shutdown (Lease released), 1 when leadership is lost or the
runtime fails, 2 on bad flags or configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import structlog
from kubernetes_asyncio import client, config

from ptah_operator.controller.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    LeaderElectionConfig,
    default_identity,
)
from ptah_operator.controller.logging import configure_logging
from ptah_operator.controller.manager import (
    DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
    Manager,
    ManagerOptions,
    parse_bind_address,
)
from ptah_operator.controller.registry import default_registry

log = structlog.get_logger(__name__)

DEFAULT_LEADER_ELECTION_ID = "ptah-operator-leader"
EXIT_USAGE = 2
_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def _seconds(value: str) -> float:
    """A duration: "15", "15s", "1.5s", "500ms" or "2m"."""
    text = value.strip()
    for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ptah-operator", description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster or ~/.kube)")
    parser.add_argument(
        "--metrics-bind-address",
        default=":8080",
        help='address of /metrics, /healthz, /readyz ("host:port", port 0 = any, "0" = off)',
    )
    parser.add_argument("--leader-elect", action="store_true", help="run only while leading")
    parser.add_argument("--leader-election-namespace", help="namespace of the leader Lease")
    parser.add_argument("--leader-election-id", default=DEFAULT_LEADER_ELECTION_ID)
    parser.add_argument(
        "--leader-election-identity", help="holder identity (default: hostname_uuid)"
    )
    parser.add_argument(
        "--leader-election-lease-duration", type=_seconds, default=DEFAULT_LEASE_DURATION
    )
    parser.add_argument(
        "--leader-election-renew-deadline", type=_seconds, default=DEFAULT_RENEW_DEADLINE
    )
    parser.add_argument(
        "--leader-election-retry-period", type=_seconds, default=DEFAULT_RETRY_PERIOD
    )
    parser.add_argument(
        "--graceful-shutdown-timeout",
        type=_seconds,
        default=DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
        help="how long reconciles in flight may run on after SIGTERM",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    return parser


def _leader_election_namespace(flag: str | None) -> str:
    if flag:
        return flag
    if _SERVICE_ACCOUNT_NAMESPACE.exists():
        return _SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    raise ValueError("--leader-election-namespace is required when not running in a cluster")


async def load_client_configuration(kubeconfig: str | None) -> client.Configuration:
    configuration = client.Configuration()
    if kubeconfig:
        await config.load_kube_config(
            config_file=kubeconfig, client_configuration=configuration, persist_config=False
        )
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    else:
        await config.load_kube_config(client_configuration=configuration, persist_config=False)
    return configuration


def options_from(args: argparse.Namespace) -> ManagerOptions:
    parse_bind_address(args.metrics_bind_address)
    leader_election = None
    if args.leader_elect:
        leader_election = LeaderElectionConfig(
            namespace=_leader_election_namespace(args.leader_election_namespace),
            name=args.leader_election_id,
            identity=args.leader_election_identity or default_identity(),
            lease_duration=args.leader_election_lease_duration,
            renew_deadline=args.leader_election_renew_deadline,
            retry_period=args.leader_election_retry_period,
        )
    return ManagerOptions(
        metrics_bind_address=args.metrics_bind_address,
        leader_election=leader_election,
        graceful_shutdown_timeout=args.graceful_shutdown_timeout,
    )


async def _serve(args: argparse.Namespace, options: ManagerOptions) -> int:
    configuration = await load_client_configuration(args.kubeconfig)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with client.ApiClient(configuration) as api_client:
        manager = Manager(api_client, options)
        default_registry().build(manager)
        le = options.leader_election
        log.info(
            "starting",
            controllers=[c.name for c in manager.controllers],
            leader_election=le.name if le else None,
            identity=le.identity if le else None,
        )
        return await manager.run(stop)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level)
    try:
        options = options_from(args)
    except ValueError as error:
        log.error("bad configuration", error=str(error))
        return EXIT_USAGE
    try:
        return asyncio.run(_serve(args, options))
    except config.ConfigException as error:
        log.error("cannot load the client configuration", error=str(error))
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
