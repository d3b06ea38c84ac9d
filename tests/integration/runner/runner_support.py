"""Helpers for the runner's integration tests (imported, not collected): a PtahMigration on the
real API server, the result endpoint over TLS in the test loop, and `ptah-runner` as a child
process with the environment a Job gives it."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web
from kubernetes_asyncio import client as k8s_client
from localstack.certs import CertificateAuthority

from ptah_operator.api.constants import GROUP, VERSION, OperationType
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.names import RESULT_KEY, result_record_name
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.reconcile.jobs import operation_document
from ptah_operator.results.credentials import operation_token
from ptah_operator.results.endpoint import add_routes, server_ssl_context
from ptah_operator.results.records import ClaimedReport, KubernetesResultStore, ResourceClaim

RUNNER = str(Path(sys.executable).parent / "ptah-runner")
SECRET = "SECRET-ROW-VALUE-7731"


def new_operation_id() -> str:
    return "op-" + secrets.token_hex(5)


def migration_manifest(
    name: str,
    namespace: str,
    engine: str = "PostgreSQL",
    transaction_mode: str | None = None,
) -> dict[str, Any]:
    policy: dict[str, Any] = {}
    if transaction_mode is not None:
        policy["transactionMode"] = transaction_mode
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PtahMigration",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "target": {
                "engine": engine,
                "coordinationKey": f"{namespace}/{name}",
                "urlFrom": {"name": f"{name}-database", "key": "url"},
            },
            "configMap": {"name": f"{name}-migrations"},
            "policy": policy,
        },
    }


async def create_namespace(api: k8s_client.ApiClient, prefix: str) -> str:
    core: Any = k8s_client.CoreV1Api(api)
    name = f"{prefix}-{secrets.token_hex(3)}"
    await core.create_namespace({"metadata": {"name": name}})
    return name


async def create_migration(
    api: k8s_client.ApiClient,
    namespace: str,
    name: str = "orders",
    engine: str = "PostgreSQL",
    transaction_mode: str | None = None,
) -> PtahMigration:
    custom: Any = k8s_client.CustomObjectsApi(api)
    created = await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "ptahmigrations",
        migration_manifest(name, namespace, engine, transaction_mode),
    )
    return from_manifest(PtahMigration, created)


def plan_for(
    migration: PtahMigration,
    files: dict[str, bytes],
    versions: list[dict[str, Any]],
    target_identity_digest: str,
    history_fingerprint: str,
) -> PtahMigrationPlan:
    digest, _ = digest_of_files(files)
    return from_manifest(
        PtahMigrationPlan,
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "PtahMigrationPlan",
            "metadata": {
                "name": f"{migration.metadata.name}-plan",
                "namespace": migration.metadata.namespace,
                "uid": "plan-uid-1",
            },
            "spec": {
                "migrationRef": {
                    "name": migration.metadata.name,
                    "uid": migration.metadata.uid,
                },
                "planContractVersion": 2,
                "source": {"kind": "ConfigMap", "contentDigest": digest, "configMapUID": "c-1"},
                "engine": migration.spec.target.engine.value,
                "targetIdentityDigest": target_identity_digest,
                "historyFingerprint": history_fingerprint,
                "executionBinding": {"image": "ptah"},
                "toVersion": versions[-1]["version"],
                "versions": versions,
                "fingerprint": "sha256:" + "d" * 64,
            },
        },
    )


class InFlightStore(KubernetesResultStore):
    """The real store, except for the claim: the manager writes an operation's claim before its
    Job exists, and these tests run the runner with no manager, so the operation `job_env` last
    made an environment for is the one in flight for its resource (else the stored claim)."""

    def __init__(self, api: k8s_client.ApiClient) -> None:
        super().__init__(api)
        self.in_flight: dict[tuple[str, str], str] = {}
        self.reports: dict[tuple[str, str], tuple[str, ClaimedReport]] = {}
        """The report the endpoint wrote into a claim these tests only pretend is there."""

    async def resource_claim(self, kind: str, namespace: str, name: str) -> ResourceClaim | None:
        found = await super().resource_claim(kind, namespace, name)
        if found is None:
            return None
        pretended = self.in_flight.get((namespace, name))
        if pretended is None or pretended == found.operation_id:
            return found
        kept = self.reports.get((namespace, name))
        report = kept[1] if kept is not None and kept[0] == pretended else None
        return found._replace(operation_id=pretended, report=report)

    async def write_report(
        self, kind: str, namespace: str, name: str, claim: ResourceClaim, report: ClaimedReport
    ) -> bool:
        pretended = self.in_flight.get((namespace, name))
        stored = await super().resource_claim(kind, namespace, name)
        if pretended is None or stored is None or pretended == stored.operation_id:
            return await super().write_report(kind, namespace, name, claim, report)
        self.reports[(namespace, name)] = (pretended, report)
        return True


@dataclass
class Endpoint:
    """The result endpoint served over TLS on 127.0.0.1 in the test's loop."""

    base_url: str
    key: bytes
    ca_file: Path
    runner: web.AppRunner
    store: InFlightStore

    def token(self, namespace: str, operation_id: str) -> str:
        return operation_token(self.key, namespace, operation_id)


async def start_endpoint(api: k8s_client.ApiClient, directory: Path) -> Endpoint:
    authority = CertificateAuthority(directory / "ca", name="results-ca")
    pair = authority.issue("results", "ptah-results", server=True, ips=["127.0.0.1"])
    key = secrets.token_bytes(32)
    app = web.Application()
    store = InFlightStore(api)
    add_routes(app, store, key)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(
        runner, "127.0.0.1", 0, ssl_context=server_ssl_context(pair.cert_path, pair.key_path)
    )
    await site.start()
    port = runner.addresses[0][1]
    return Endpoint(f"https://127.0.0.1:{port}/v1/results", key, authority.cert_path, runner, store)


@dataclass
class RunnerRun:
    code: int
    stderr: str
    termination: str
    seconds: float

    def logs(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stderr.splitlines() if line.startswith("{")]


def write_files(directory: Path, files: dict[str, bytes]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return directory


def job_env(
    document: dict[str, Any],
    url: str | None,
    endpoint: Endpoint,
    workdir: Path,
    *,
    token: str | None = None,
    result_url: str | None = None,
    retry_seconds: float | None = None,
) -> dict[str, str]:
    """The environment the Job's run container gets (plus where its termination log goes)."""
    namespace = document["resource"]["namespace"]
    endpoint.store.in_flight[(namespace, document["resource"]["name"])] = document["operationID"]
    token_file = workdir / "token"
    token_file.write_text(
        token if token is not None else endpoint.token(namespace, document["operationID"])
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "PTAH_OPERATION": json.dumps(document, sort_keys=True),
        "PTAH_RESULT_URL": result_url or endpoint.base_url,
        "PTAH_RESULT_TOKEN_FILE": str(token_file),
        "PTAH_RESULT_CA_FILE": str(endpoint.ca_file),
        "PTAH_TERMINATION_LOG": str(workdir / "termination-log"),
    }
    if url is not None:
        env["PTAH_DATABASE_URL"] = url
    if os.environ.get("PYTHONPATH"):
        # So a worktree's runner runs its own code rather than the installed one's.
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if retry_seconds is not None:
        env["PTAH_RESULT_RETRY_SECONDS"] = str(retry_seconds)
    return env


def reset_termination_log(env: dict[str, str]) -> Path:
    termination = Path(env["PTAH_TERMINATION_LOG"])
    termination.write_text("")
    return termination


def read_text(path: Path) -> str:
    return path.read_text().strip()


async def run_runner(args: list[str], env: dict[str, str], limit: float = 180) -> RunnerRun:
    """Run the venv's `ptah-runner` as a child process without blocking the test's loop (the
    endpoint it reports to is served by that loop)."""
    termination = reset_termination_log(env)
    loop = asyncio.get_running_loop()
    started = loop.time()
    proc = await asyncio.create_subprocess_exec(
        RUNNER,
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), limit)
    return RunnerRun(
        code=proc.returncode if proc.returncode is not None else -1,
        stderr=stderr.decode(),
        termination=read_text(termination),
        seconds=loop.time() - started,
    )


def document_for(
    migration: PtahMigration,
    operation_type: OperationType,
    operation_id: str,
    files: dict[str, bytes],
    plan: PtahMigrationPlan | None = None,
) -> dict[str, Any]:
    digest, _ = digest_of_files(files)
    return operation_document(migration, operation_type, operation_id, digest, plan)


async def read_record(
    api: k8s_client.ApiClient, namespace: str, operation_id: str
) -> dict[str, Any] | None:
    """The stored result, or None when no record exists."""
    core: Any = k8s_client.CoreV1Api(api)
    found = await core.list_namespaced_config_map(
        namespace, label_selector=f"operator.ptah.run/operation-id={operation_id}"
    )
    # A schema Plan's uploaded pieces carry the operation id too; they are not its report.
    reports = [
        item for item in found.items if "operator.ptah.run/plan-piece" not in item.metadata.labels
    ]
    if not reports:
        return None
    assert len(reports) == 1
    record = reports[0]
    assert record.metadata.name == result_record_name(operation_id)
    text: str = record.data[RESULT_KEY]
    result: dict[str, Any] = json.loads(text)
    return result


async def record_object(api: k8s_client.ApiClient, namespace: str, operation_id: str) -> Any:
    core: Any = k8s_client.CoreV1Api(api)
    return await core.read_namespaced_config_map(result_record_name(operation_id), namespace)
