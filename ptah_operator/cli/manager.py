"""`ptah-operator`: the manager process.

Contract: loads the client configuration (`--kubeconfig`, else in-cluster when
KUBERNETES_SERVICE_HOST is set, else $KUBECONFIG / ~/.kube/config), configures JSON logging,
builds the controllers (PtahMigration and PtahSchema, sharing one set of lifecycle metrics;
without the webhook server only observers, since no operation could report), serves the admission webhooks and the result endpoint over TLS on every
replica (standbys too: any replica answers admission and stores results), and runs the
`Manager` until SIGTERM or SIGINT. With `--register-webhooks-url` (the local stack) it
registers the webhooks itself at that URL with `--tls-ca-file` as their caBundle; in a cluster
deploy/webhooks.yaml does. Exits 0 after a graceful shutdown (Lease released), 1 when
leadership is lost or the runtime fails, 2 on bad flags or configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator import __version__
from ptah_operator.api import images, source_hosts
from ptah_operator.api.common import ExecutionBinding
from ptah_operator.api.constants import ANNOTATION_LEASE_HOLDER_UID, Kind
from ptah_operator.api.result_seal import ResultSeal
from ptah_operator.controller import observe
from ptah_operator.controller.cache import CACHE_TRANSFORMS
from ptah_operator.controller.executor import OperationSecretFactory
from ptah_operator.controller.family import FamilyReconciler
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.migration import MigrationControllerConfig, MigrationReconciler
from ptah_operator.controller.registry import ControllerRegistry
from ptah_operator.controller.schema import SchemaControllerConfig, SchemaReconciler
from ptah_operator.controller.status_metrics import CertificateExpiry, StatusCollector
from ptah_operator.reconcile.world import RunnerConfig
from ptah_operator.results.credentials import operation_secret_factory, read_result_key_file
from ptah_operator.results.endpoint import add_routes as add_result_routes
from ptah_operator.results.records import KubernetesResultStore, load_result_key
from ptah_operator.runtime.api_metrics import instrument as instrument_api_client
from ptah_operator.runtime.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    LeaderElectionConfig,
    default_identity,
)
from ptah_operator.runtime.logging import configure_logging
from ptah_operator.runtime.manager import (
    DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT,
    Manager,
    ManagerOptions,
    parse_bind_address,
)
from ptah_operator.webhook.app import add_routes as add_webhook_routes
from ptah_operator.webhook.lookup import ApiObjectLookup, CachedLookup, StoreGet
from ptah_operator.webhook.registration import (
    DEPLOY_SERVICE,
    DEPLOY_SERVICE_PORT,
    UrlEndpoint,
    mutating_webhook_configuration,
    validating_webhook_configuration,
)
from ptah_operator.webhook.tls import HttpsServer, start_https_server
from ptah_operator.webhook.writers import WriterSeal

log = structlog.get_logger(__name__)

DEFAULT_LEADER_ELECTION_ID = "ptah-operator-leader"
DEFAULT_RUNNER_IMAGE = f"ghcr.io/ptah-operator/ptah-operator:{__version__}"
DEFAULT_OPERATOR_NAMESPACE = "ptah-system"
ALL_ADDRESSES = "0.0.0.0"  # noqa: S104 (":9443" means every address of the Pod, as kubectl expects)
RUNNER_PROTOCOL_VERSION = 1
EXIT_USAGE = 2
_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def _seconds(value: str) -> float:
    """A duration: "15", "15s", "1.5s", "500ms" or "2m"."""
    text = value.strip()
    for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def _listed(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _allowed_digest(item: str) -> str:
    if images.is_digest(item):
        return item
    digest = images.image_digest(item)
    if digest is None:
        raise ValueError(
            "--allowed-runner-images takes digests (sha256:<64 hex> or name@sha256:<64 hex>)"
        )
    return digest


def check_runner_image_flags(args: argparse.Namespace) -> None:
    """The runner image is pinned by digest, and every allowed runner image is a digest (issue
    #18): a tag could be moved under the Jobs. Without a webhook server nothing runs (observers
    only), so the image is not asked for."""
    if parse_bind_address(args.webhook_bind_address) is None:
        return
    for item in args.allowed_runner_images:
        _allowed_digest(item)
    if images.pinned_image(args.runner_image) is not None:
        raise ValueError(
            "--runner-image must be pinned by digest (name@sha256:<64 hex>): a moved tag would "
            "change what every Job runs"
        )


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
    parser.add_argument(
        "--operator-namespace",
        help="namespace of realm Leases and the result key (default: the leader election "
        "namespace, the pod's namespace, or ptah-system)",
    )
    parser.add_argument(
        "--webhook-bind-address",
        default=":9443",
        help='address of the admission webhooks and the result endpoint (TLS; "0" = off)',
    )
    parser.add_argument("--tls-cert-file", type=Path, help="serving certificate (PEM)")
    parser.add_argument("--tls-key-file", type=Path, help="serving key (PEM)")
    parser.add_argument(
        "--tls-ca-file",
        type=Path,
        help="the CA that signed the serving certificate: runners trust it, webhooks name it",
    )
    parser.add_argument(
        "--result-key-file",
        type=Path,
        help="the key result tokens are derived from (default: Secret ptah-operator-result-key)",
    )
    parser.add_argument(
        "--previous-result-key-file",
        type=Path,
        action="append",
        default=[],
        help="a result key used before the current one (repeatable): records of spec writers, "
        "operation tokens and result records made under it still count (nothing new is made "
        "under it); see docs/design/lifecycle-decisions.md and docs/security.md",
    )
    parser.add_argument(
        "--result-url",
        help="where runners report (default: the webhook Service's /v1/results)",
    )
    parser.add_argument(
        "--register-webhooks-url",
        help="register the admission webhooks at this base URL (local stack), e.g. "
        "https://127.0.0.1:9443",
    )
    parser.add_argument(
        "--runner-image",
        default=os.environ.get("PTAH_RUNNER_IMAGE", DEFAULT_RUNNER_IMAGE),
        help="the image operation Jobs run (default: this release's image)",
    )
    parser.add_argument(
        "--allowed-runner-images",
        type=_listed,
        default=[],
        metavar="DIGEST,...",
        help="digests (sha256:<hex>, or name@sha256:<hex>) a resource's spec.execution.image "
        "may be pinned to; any other image is refused (default: none, only --runner-image)",
    )
    parser.add_argument(
        "--allowed-source-hosts",
        type=_listed,
        default=_listed(os.environ.get("PTAH_ALLOWED_SOURCE_HOSTS", "")),
        metavar="HOST[:PORT],...",
        help="Git and OCI registry hosts a source's secretRef may be sent to; a secretRef for "
        "any other host is refused (default: none, sources are read anonymously)",
    )
    parser.add_argument(
        "--insecure-registry",
        action="append",
        default=[],
        metavar="HOST:PORT",
        help="an OCI registry the runner may reach over plain HTTP (repeatable; local registries)",
    )
    parser.add_argument("--workers", type=int, default=4, help="concurrent reconciles")
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
        transforms=CACHE_TRANSFORMS,
    )


def operator_namespace(args: argparse.Namespace) -> str:
    if args.operator_namespace:
        return str(args.operator_namespace)
    if args.leader_election_namespace:
        return str(args.leader_election_namespace)
    if _SERVICE_ACCOUNT_NAMESPACE.exists():
        return _SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    return DEFAULT_OPERATOR_NAMESPACE


def check_serving_flags(args: argparse.Namespace) -> None:
    if parse_bind_address(args.webhook_bind_address) is None:
        return
    missing = [
        flag
        for flag, value in (
            ("--tls-cert-file", args.tls_cert_file),
            ("--tls-key-file", args.tls_key_file),
            ("--tls-ca-file", args.tls_ca_file),
        )
        if value is None
    ]
    if missing:
        raise ValueError(
            f"{', '.join(missing)} required to serve the webhooks and results "
            "(or --webhook-bind-address=0)"
        )
    for path in (args.tls_cert_file, args.tls_key_file, args.tls_ca_file):
        if not path.is_file():
            raise ValueError(f"{path} is not a readable file")


async def register_webhooks(api_client: client.ApiClient, base_url: str, ca_pem: bytes) -> None:
    """Create or replace the webhook configurations that point at `base_url` (local stack)."""
    api: Any = client.AdmissionregistrationV1Api(api_client)
    endpoint = UrlEndpoint(base_url)
    for manifest, read, create, replace in (
        (
            mutating_webhook_configuration(endpoint, ca_pem),
            api.read_mutating_webhook_configuration,
            api.create_mutating_webhook_configuration,
            api.replace_mutating_webhook_configuration,
        ),
        (
            validating_webhook_configuration(endpoint, ca_pem),
            api.read_validating_webhook_configuration,
            api.create_validating_webhook_configuration,
            api.replace_validating_webhook_configuration,
        ),
    ):
        name = manifest["metadata"]["name"]
        try:
            current = await read(name)
        except ApiException as error:
            if error.status != 404:
                raise
            await create(manifest)
            continue
        manifest["metadata"]["resourceVersion"] = current.metadata.resource_version
        await replace(name, manifest)
    log.info("webhooks registered", url=base_url)


def build_runner_config(args: argparse.Namespace, namespace: str) -> RunnerConfig:
    """How this manager's operation Jobs run, and where their runners report."""
    result_url = args.result_url or (
        f"https://{DEPLOY_SERVICE}.{namespace}.svc:{DEPLOY_SERVICE_PORT}/v1/results"
    )
    return RunnerConfig(
        image=args.runner_image,
        result_url=result_url,
        binding=ExecutionBinding(
            image=args.runner_image,
            runner_version=__version__,
            protocol_version=RUNNER_PROTOCOL_VERSION,
        ),
        insecure_registries=tuple(args.insecure_registry),
        allowed_images=frozenset(_allowed_digest(item) for item in args.allowed_runner_images),
        allowed_source_hosts=source_hosts.normalized_hosts(args.allowed_source_hosts),
    )


def build_family_reconcilers(
    manager: Manager,
    args: argparse.Namespace,
    runner: RunnerConfig,
    namespace: str,
    operation_secret: OperationSecretFactory,
    result_seal: ResultSeal | None = None,
) -> tuple[MigrationReconciler, SchemaReconciler]:
    """The PtahMigration and PtahSchema controllers, sharing one set of lifecycle metrics, each
    taking as results only records `result_seal` opens (none without it)."""
    result_seal = result_seal or ResultSeal()
    lifecycle_metrics = LifecycleMetrics(manager.metrics.registry)
    migrations = MigrationReconciler(
        manager,
        MigrationControllerConfig(
            runner=runner,
            lease_namespace=namespace,
            operation_secret=operation_secret,
            workers=args.workers,
            lifecycle_metrics=lifecycle_metrics,
            result_seal=result_seal,
        ),
    )
    schemas = SchemaReconciler(
        manager,
        SchemaControllerConfig(
            runner=runner,
            lease_namespace=namespace,
            operation_secret=operation_secret,
            workers=args.workers,
            lifecycle_metrics=lifecycle_metrics,
            result_seal=result_seal,
        ),
    )
    caches = migrations.caches
    manager.metrics.registry.register(
        StatusCollector(
            {str(kind): informer.store for kind, informer in caches.by_kind.items()},
            caches.leases.store,
            ANNOTATION_LEASE_HOLDER_UID,
            caches.jobs.store,
        )
    )
    if getattr(args, "tls_cert_file", None) is not None:
        manager.metrics.registry.register(CertificateExpiry(args.tls_cert_file))
    return migrations, schemas


def build_https_app(
    api_client: client.ApiClient,
    reconcilers: Sequence[FamilyReconciler[Any, Any]],
    result_key: bytes,
    allowed_images: frozenset[str] = frozenset(),
    previous_result_keys: Sequence[bytes] = (),
    allowed_source_hosts: frozenset[str] = frozenset(),
) -> web.Application:
    """The admission webhooks (reading the reconcilers' caches first) and the result endpoint;
    records of spec writers, and tokens and result records, made under a previous result key
    still open."""
    app = web.Application(client_max_size=2 * 1024 * 1024)
    cached: dict[Kind, StoreGet] = {}
    for reconciler in reconcilers:
        cached[reconciler.family.kind] = reconciler.primaries.store.get
        cached[reconciler.family.plan] = reconciler.plans.store.get
    add_webhook_routes(
        app,
        CachedLookup(cached, ApiObjectLookup(api_client)),
        seal=WriterSeal.derived_from(result_key, previous_result_keys),
        allowed_images=allowed_images,
        allowed_source_hosts=allowed_source_hosts,
    )
    add_result_routes(app, KubernetesResultStore(api_client), result_key, previous_result_keys)
    return app


async def start_serving(
    args: argparse.Namespace,
    api_client: client.ApiClient,
    manager: Manager,
    namespace: str,
    registry: ControllerRegistry,
) -> HttpsServer | None:
    """Register the family controllers and serve the webhooks and results; without a webhook
    server, register only the observers (no operation could report) and serve nothing."""
    serving = parse_bind_address(args.webhook_bind_address)
    if serving is None:
        log.warning("no webhook server: resources are observed only, nothing runs")
        registry.register("ptahmigration", observe.migration_observer)
        registry.register("ptahschema", observe.schema_observer)
        return None
    ca_pem = args.tls_ca_file.read_bytes()
    result_key = await load_result_key(api_client, namespace, key_file=args.result_key_file)
    host, port = serving
    runner = build_runner_config(args, namespace)
    operation_secret = operation_secret_factory(result_key, ca_pem)
    previous_keys = [read_result_key_file(path) for path in args.previous_result_key_file]
    result_seal = ResultSeal.derived_from(result_key, previous_keys)
    migrations, schemas = build_family_reconcilers(
        manager, args, runner, namespace, operation_secret, result_seal
    )
    registry.register("ptahmigration", lambda _m: migrations.controller)
    registry.register("ptahschema", lambda _m: schemas.controller)
    app = build_https_app(
        api_client,
        (migrations, schemas),
        result_key,
        runner.allows(),
        previous_keys,
        allowed_source_hosts=runner.allowed_source_hosts,
    )
    server = await start_https_server(
        app, args.tls_cert_file, args.tls_key_file, host=host or ALL_ADDRESSES, port=port
    )
    log.info("serving webhooks and results", url=server.url)
    if args.register_webhooks_url:
        await register_webhooks(api_client, args.register_webhooks_url, ca_pem)
    return server


async def _serve(args: argparse.Namespace, options: ManagerOptions) -> int:
    configuration = await load_client_configuration(args.kubeconfig)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    namespace = operator_namespace(args)
    async with client.ApiClient(configuration) as api_client:
        manager = Manager(api_client, options)
        instrument_api_client(api_client, manager.metrics.registry)
        registry = ControllerRegistry()
        server = await start_serving(args, api_client, manager, namespace, registry)
        registry.build(manager)
        le = options.leader_election
        log.info(
            "starting",
            controllers=[c.name for c in manager.controllers],
            leader_election=le.name if le else None,
            identity=le.identity if le else None,
        )
        try:
            return await manager.run(stop)
        finally:
            if server is not None:
                await server.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level)
    try:
        options = options_from(args)
        check_serving_flags(args)
        check_runner_image_flags(args)
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
