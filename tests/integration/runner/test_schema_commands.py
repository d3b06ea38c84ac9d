"""`ptah-runner observe|plan|apply` of a PtahSchema as a child process with the environment a
Job gives it, against real PostgreSQL and MariaDB, talking over TLS to the real result endpoint,
which stores into the real API server: drift aggregates, a plan uploaded in pieces beside its
report, a published plan fetched from its chunks and applied, and what an Apply refuses."""

from __future__ import annotations

import asyncio
import json
import re
import signal
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from ptah_operator.api.constants import OperationType
from ptah_operator.api.contracts.result import ApplyOutcomeReport, SchemaOperationReport
from ptah_operator.api.fingerprints import sha256_digest
from ptah_operator.api.plans import PtahSchemaPlan
from ptah_operator.api.schema import PtahSchema
from ptah_operator.engine.migrations.connection import connect
from ptah_operator.engine.schema.apply import acquire_lock
from ptah_operator.engine.schema.connection import Connection
from tests.integration.engine.migrations.mig_support import snapshot
from tests.integration.engine.schema.schema_roundtrip import execute
from tests.integration.runner.runner_support import (
    RUNNER,
    SECRET,
    Endpoint,
    RunnerRun,
    job_env,
    run_runner,
    write_files,
)
from tests.integration.runner.schema_support import (
    apply_document,
    checked_report,
    claim,
    create_schema,
    joined_text,
    new_operation_id,
    publish_plan,
    read_document,
    read_report,
    stored_pieces,
)

pytestmark = pytest.mark.integration

OBSERVE = OperationType.OBSERVE
PLAN = OperationType.PLAN
APPLY = OperationType.APPLY
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")

PG_FILES = {
    "customers.sql": b"CREATE TABLE customers (id bigint PRIMARY KEY, email text NOT NULL);\n",
    "orders.sql": (
        b"CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL"
        b" REFERENCES customers (id), total numeric(10,2));\n"
        b"CREATE INDEX orders_customer ON orders (customer_id);\n"
    ),
}
MARIA_FILES = {
    "customers.sql": (
        b"CREATE TABLE customers (id BIGINT PRIMARY KEY, email VARCHAR(200) NOT NULL);\n"
    ),
    "orders.sql": (
        b"CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id BIGINT NOT NULL,"
        b" total DECIMAL(10,2), INDEX orders_customer (customer_id));\n"
    ),
}


@pytest.fixture(params=["postgresql", "mariadb"])
def target(request: pytest.FixtureRequest) -> tuple[str, PtahSchema, dict[str, bytes]]:
    """(database URL, PtahSchema, desired files) for each engine."""
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")
        schema: PtahSchema = request.getfixturevalue("pg_schema")
        return url, schema, PG_FILES
    url = request.getfixturevalue("maria_url")
    schema = request.getfixturevalue("maria_schema")
    return url, schema, MARIA_FILES


def _assert_private(run: RunnerRun, url: str, *texts: str) -> None:
    """Nothing the runner wrote or reported names the URL, SQL or a row (PRIV-01, PRIV-05)."""
    for where in (run.stderr, run.termination, *texts):
        assert url not in where
        assert "postgresql://" not in where
        assert "mysql://" not in where
        for keyword in ("CREATE TABLE", "CREATE INDEX", "ALTER TABLE", "DROP ", "INSERT INTO"):
            assert keyword not in where, where
        assert SECRET not in where


def _assert_logs(run: RunnerRun, operation_id: str) -> None:
    lines = run.logs()
    assert lines, run.stderr
    assert all(line.get("operationID") == operation_id for line in lines), run.stderr


async def _identity(url: str) -> str:
    db = await connect(url)
    try:
        return await db.identity_digest()
    finally:
        await db.close()


async def _read(
    command: OperationType,
    schema: PtahSchema,
    url: str,
    files: dict[str, bytes],
    endpoint: Endpoint,
    api: k8s_client.ApiClient,
    workdir: Path,
    *,
    env: dict[str, str] | None = None,
    code: int = 0,
) -> tuple[RunnerRun, dict[str, Any]]:
    """Claim and run an Observe or a Plan of `files`; its run and its stored report."""
    operation_id = new_operation_id()
    await claim(api, schema, operation_id, command)
    document = read_document(schema, command, operation_id, files)
    work = workdir / operation_id
    files_dir = write_files(work / "files", files)
    run = await run_runner(
        [command.value.lower(), f"--files={files_dir}"],
        {**job_env(document, url, endpoint, work), **(env or {})},
    )
    assert run.code == code, (run.termination, run.stderr)
    record = await read_report(api, str(schema.metadata.namespace), operation_id)
    assert record is not None
    _assert_private(run, url, json.dumps(record))
    _assert_logs(run, operation_id)
    return run, record


async def _apply(
    schema: PtahSchema,
    plan: PtahSchemaPlan,
    url: str,
    endpoint: Endpoint,
    api: k8s_client.ApiClient,
    workdir: Path,
    *,
    document: dict[str, Any] | None = None,
    code: int = 0,
) -> tuple[RunnerRun, dict[str, Any]]:
    operation_id = new_operation_id()
    await claim(api, schema, operation_id, APPLY, plan)
    document = {**(document or apply_document(schema, operation_id, plan))}
    document["operationID"] = operation_id
    work = workdir / operation_id
    work.mkdir(parents=True)
    run = await run_runner(["apply"], job_env(document, url, endpoint, work))
    assert run.code == code, (run.termination, run.stderr)
    record = await read_report(api, str(schema.metadata.namespace), operation_id)
    assert record is not None
    _assert_private(run, url, json.dumps(record))
    _assert_logs(run, operation_id)
    return run, record


async def _planned(
    schema: PtahSchema,
    url: str,
    files: dict[str, bytes],
    endpoint: Endpoint,
    api: k8s_client.ApiClient,
    workdir: Path,
) -> tuple[SchemaOperationReport, str]:
    """A Plan that finds changes: its report as the manager reads it, and its uploaded text."""
    _, record = await _read(PLAN, schema, url, files, endpoint, api, workdir)
    report = checked_report(record, schema, PLAN)
    assert report.plan is not None
    assert report.plan.changes
    pieces = await stored_pieces(api, str(schema.metadata.namespace), report.operation_id)
    return report, joined_text(pieces)


@pytest.mark.req("SCH-54", "PRIV-03")
async def test_observe_reports_drift_aggregates_only(
    target: tuple[str, PtahSchema, dict[str, bytes]],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, schema, files = target
    before = await snapshot(url)
    run, record = await _read(OBSERVE, schema, url, files, endpoint, api_client, tmp_path)

    report = checked_report(record, schema, OBSERVE)
    assert report.target_identity_digest == await _identity(url)
    assert report.error is None
    assert report.plan is None
    drift = report.drift
    assert drift is not None
    assert DIGEST.match(drift.digest)
    assert drift.dialect == ("postgresql" if "postgresql" in url else "mariadb")
    categories = {c.category: (c.count, c.highest_severity) for c in drift.categories}
    assert categories["tables_added"][0] == 2
    assert drift.total == sum(count for count, _ in categories.values())
    assert drift.highest_severity is not None
    # Aggregates only: no statement, reason or object name leaves the runner (PRIV-03).
    assert set(record["drift"]) == {"digest", "dialect", "total", "highestSeverity", "categories"}
    assert "customers" not in json.dumps(record)
    assert run.termination == f"Observe: {drift.total} difference(s)"
    # A read changes nothing.
    assert await snapshot(url) == before


@pytest.mark.req("SCH-56", "SCH-57", "PRIV-05")
async def test_plan_uploads_its_pieces_and_the_fetched_plan_converges(
    target: tuple[str, PtahSchema, dict[str, bytes]],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, schema, files = target
    namespace = str(schema.metadata.namespace)
    before = await snapshot(url)
    report, text = await _planned(schema, url, files, endpoint, api_client, tmp_path)

    plan = report.plan
    assert plan is not None
    assert report.target_identity_digest == await _identity(url)
    # The pieces are the plan file, stored beside the report and owned by the schema.
    pieces = await stored_pieces(api_client, namespace, report.operation_id)
    assert [p.index for p in plan.pieces] == list(range(len(pieces)))
    assert plan.digest == sha256_digest(text.encode())
    assert plan.size == len(text.encode())
    for listed, stored in zip(plan.pieces, pieces, strict=True):
        data = stored.data["piece"].encode()
        assert (listed.digest, listed.size) == (sha256_digest(data), len(data))
        assert stored.immutable is True
        owner = stored.metadata.owner_references[0]
        assert (owner.kind, owner.uid) == ("PtahSchema", schema.metadata.uid)
    assert json.loads(text)["contractVersion"] == "ptah.schema.plan/v1"
    assert plan.statement_count == len(json.loads(text)["statements"])
    assert plan.severity.highest is not None
    assert not plan.severity.destructive
    assert all(f.statement_index is not None for f in plan.findings)
    assert DIGEST.match(plan.observed_fingerprint)
    # Planning and the dry run changed nothing.
    assert await snapshot(url) == before

    published = await publish_plan(api_client, schema, text, report, chunk_chars=300)
    assert len(published.spec.chunks) > 1
    run, record = await _apply(schema, published, url, endpoint, api_client, tmp_path)
    applied = checked_report(record, schema, APPLY)
    assert applied.apply is not None
    assert applied.apply.outcome is ApplyOutcomeReport.APPLIED
    assert applied.apply.plan_digest == published.spec.digest
    assert applied.apply.statements_executed == plan.statement_count
    assert applied.target_identity_digest == published.spec.target_identity_digest
    assert applied.error is None
    assert run.termination.startswith("Apply Applied")

    # The proof: a fresh coherent plan finds nothing, and uploads nothing.
    _, again = await _read(PLAN, schema, url, files, endpoint, api_client, tmp_path)
    converged = checked_report(again, schema, PLAN)
    assert converged.plan is not None
    assert converged.plan.changes is False
    assert converged.plan.pieces == []
    assert converged.plan.digest is None
    assert await stored_pieces(api_client, namespace, converged.operation_id) == []


@pytest.mark.req("SCH-57")
async def test_apply_refuses_bytes_other_than_the_plan_and_changes_nothing(
    target: tuple[str, PtahSchema, dict[str, bytes]],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, schema, files = target
    report, text = await _planned(schema, url, files, endpoint, api_client, tmp_path)
    before = await snapshot(url)

    # Chunks whose data is not what their digests say: the endpoint serves nothing.
    tampered = text.replace("customers", "customerz")
    broken = await publish_plan(api_client, schema, text, report, chunk_data={0: tampered})
    run, record = await _apply(schema, broken, url, endpoint, api_client, tmp_path, code=1)
    refused = checked_report(record, schema, APPLY)
    assert refused.apply is not None
    assert refused.apply.outcome is ApplyOutcomeReport.REFUSED
    assert refused.apply.statements_executed == 0
    assert refused.error is not None
    assert refused.error.reason == "PlanUnavailable"
    assert "409" in refused.error.message

    # A consistent plan object whose bytes are not the ones the Apply was bound to.
    other = await publish_plan(
        api_client, schema, tampered, report, spec_digest=sha256_digest(tampered.encode())
    )
    operation_id = new_operation_id()
    document = apply_document(schema, operation_id, other)
    document["plan"]["digest"] = report.plan.digest if report.plan else None
    run, record = await _apply(
        schema, other, url, endpoint, api_client, tmp_path, document=document
    )
    refused = checked_report(record, schema, APPLY)
    assert refused.apply is not None
    assert refused.apply.outcome is ApplyOutcomeReport.REFUSED
    assert refused.apply.reason == "PlanDigestMismatch"
    assert refused.apply.plan_digest == sha256_digest(tampered.encode())
    assert run.termination.startswith("Apply Refused (PlanDigestMismatch)")
    assert await snapshot(url) == before


@pytest.mark.req("RUN-14")
async def test_apply_refuses_a_database_other_than_planned(
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    namespace: str,
    pg_url: str,
    tmp_path: Path,
) -> None:
    schema = await create_schema(api_client, namespace, "elsewhere", "PostgreSQL")
    report, text = await _planned(schema, pg_url, PG_FILES, endpoint, api_client, tmp_path)
    published = await publish_plan(api_client, schema, text, report)
    # The Secret now names another database of the same server, which the plan never read.
    other_url = pg_url.rsplit("/", 1)[0] + "/postgres"
    before = await snapshot(other_url)

    _run, record = await _apply(schema, published, other_url, endpoint, api_client, tmp_path)
    refused = checked_report(record, schema, APPLY)
    assert refused.apply is not None
    assert refused.apply.outcome is ApplyOutcomeReport.REFUSED
    assert refused.apply.reason == "TargetIdentityChanged"
    assert refused.apply.statements_executed == 0
    assert refused.target_identity_digest == await _identity(other_url)
    assert refused.target_identity_digest != published.spec.target_identity_digest
    assert await snapshot(other_url) == before


async def test_a_stale_plan_is_refused_under_the_lock(
    target: tuple[str, PtahSchema, dict[str, bytes]],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, schema, files = target
    report, text = await _planned(schema, url, files, endpoint, api_client, tmp_path)
    published = await publish_plan(api_client, schema, text, report)
    await execute(url, "CREATE TABLE meanwhile (id INT PRIMARY KEY)")
    before = await snapshot(url)

    _run, record = await _apply(schema, published, url, endpoint, api_client, tmp_path)
    refused = checked_report(record, schema, APPLY)
    assert refused.apply is not None
    assert refused.apply.outcome is ApplyOutcomeReport.REFUSED
    assert refused.apply.reason == "StalePlan"
    assert refused.apply.plan_digest == published.spec.digest
    assert await snapshot(url) == before


@pytest.mark.req("SCH-59", "PRIV-05")
async def test_an_apply_error_is_unknown_with_its_position_and_class_only(
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    namespace: str,
    pg_url: str,
    tmp_path: Path,
) -> None:
    schema = await create_schema(api_client, namespace, "dupes", "PostgreSQL")
    await execute(pg_url, "CREATE TABLE items (id int PRIMARY KEY, code text)")
    files = {
        "items.sql": b"CREATE TABLE items (id int PRIMARY KEY, code text);\n"
        b"CREATE UNIQUE INDEX items_code ON items (code);\n"
    }
    report, text = await _planned(schema, pg_url, files, endpoint, api_client, tmp_path)
    published = await publish_plan(api_client, schema, text, report)
    # Rows are not the schema: the plan is still fresh, and its unique index now fails.
    await execute(pg_url, f"INSERT INTO items VALUES (1, '{SECRET}'), (2, '{SECRET}')")

    _run, record = await _apply(schema, published, pg_url, endpoint, api_client, tmp_path)
    unknown = checked_report(record, schema, APPLY)
    assert unknown.apply is not None
    assert unknown.apply.outcome is ApplyOutcomeReport.UNKNOWN
    assert unknown.apply.reason == "ApplyOutcomeUnknown"
    assert unknown.apply.failure is not None
    assert unknown.apply.failure.sqlstate == "23505"
    assert unknown.apply.failure.statement_index == 0
    assert unknown.apply.statements_executed == 0
    assert "items_code" not in json.dumps(record)


async def test_plan_reports_severity_findings_and_protected_tables(
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    namespace: str,
    pg_url: str,
    tmp_path: Path,
) -> None:
    schema = await create_schema(
        api_client,
        namespace,
        "guarded",
        "PostgreSQL",
        policy={"protectedTables": ["public.accounts"], "allowDestructive": False},
    )
    await execute(
        pg_url,
        "CREATE TABLE accounts (id int PRIMARY KEY, legacy text)",
        "CREATE TABLE notes (id int PRIMARY KEY)",
    )
    files = {
        "schema.sql": b"CREATE TABLE accounts (id int PRIMARY KEY);\n"
        b"CREATE TABLE notes (id int PRIMARY KEY, body text);\n"
    }
    report, _ = await _planned(schema, pg_url, files, endpoint, api_client, tmp_path)
    plan = report.plan
    assert plan is not None
    assert plan.severity.destructive is True
    assert plan.severity.highest == "Critical"
    assert plan.protected_tables == ["public.accounts"]
    critical = [f for f in plan.findings if f.severity == "Critical"]
    assert critical
    assert critical[0].code == "DestructiveChange"
    assert critical[0].object == "public.accounts"
    assert critical[0].category == "columns_removed"
    # The most severe findings come first.
    assert plan.findings[0].severity == "Critical"


async def test_a_plan_that_cannot_take_the_schema_lock_says_so(
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    namespace: str,
    pg_url: str,
    tmp_path: Path,
) -> None:
    schema = await create_schema(api_client, namespace, "locked", "PostgreSQL")
    holder = await Connection.open(pg_url)
    try:
        assert await acquire_lock(holder, 1)
        run, record = await _read(
            PLAN,
            schema,
            pg_url,
            PG_FILES,
            endpoint,
            api_client,
            tmp_path,
            env={"PTAH_LOCK_TIMEOUT_SECONDS": "1"},
            code=1,
        )
    finally:
        await holder.close()
    report = checked_report(record, schema, PLAN)
    assert report.error is not None
    assert report.error.reason == "LockNotAcquired"
    assert report.plan is None
    assert run.termination.startswith("Plan: LockNotAcquired")
    assert await stored_pieces(api_client, namespace, report.operation_id) == []


async def test_files_that_do_not_give_the_bound_digest_are_refused(
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    namespace: str,
    pg_url: str,
    tmp_path: Path,
) -> None:
    schema = await create_schema(api_client, namespace, "refused", "PostgreSQL")
    operation_id = new_operation_id()
    await claim(api_client, schema, operation_id, OBSERVE)
    document = read_document(schema, OBSERVE, operation_id, PG_FILES)
    work = tmp_path / operation_id
    files_dir = write_files(work / "files", {**PG_FILES, "extra.sql": b"-- more\n"})
    run = await run_runner(
        ["observe", f"--files={files_dir}"], job_env(document, pg_url, endpoint, work)
    )
    assert run.code == 1, run.stderr
    record = await read_report(api_client, namespace, operation_id)
    assert record is not None
    assert record["error"]["reason"] == "SnapshotRefused"
    assert record["targetIdentityDigest"] is None

    # A schema Apply reads no files; a schema Observe reads them.
    apply_id = new_operation_id()
    bad = read_document(schema, OBSERVE, apply_id, PG_FILES)
    run = await run_runner(["plan", f"--files={files_dir}"], job_env(bad, pg_url, endpoint, work))
    assert run.code == 2
    assert run.termination == "bad operation document: type is not plan"


async def test_a_plan_told_to_stop_reports_that_it_was_interrupted(
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    namespace: str,
    pg_url: str,
    tmp_path: Path,
) -> None:
    schema = await create_schema(api_client, namespace, "stopped", "PostgreSQL")
    operation_id = new_operation_id()
    await claim(api_client, schema, operation_id, PLAN)
    document = read_document(schema, PLAN, operation_id, PG_FILES)
    work = tmp_path / operation_id
    files_dir = write_files(work / "files", PG_FILES)
    env = {**job_env(document, pg_url, endpoint, work), "PTAH_LOCK_TIMEOUT_SECONDS": "120"}
    holder = await Connection.open(pg_url)
    try:
        assert await acquire_lock(holder, 1)
        proc = await asyncio.create_subprocess_exec(
            RUNNER,
            "plan",
            f"--files={files_dir}",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        # The runner waits for the schema lock the test holds; then it is told to stop.
        await asyncio.sleep(3)
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        await holder.close()
    assert proc.returncode == 1, stderr.decode()
    record = await read_report(api_client, namespace, operation_id)
    assert record is not None
    assert record["error"]["reason"] == "Interrupted"
    assert "plan" not in record
    assert (work / "termination-log").read_text().startswith("Plan: Interrupted")


async def test_each_apply_reads_files_or_not_as_its_family_does(
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    namespace: str,
    pg_url: str,
    tmp_path: Path,
) -> None:
    schema = await create_schema(api_client, namespace, "invocation", "PostgreSQL")
    report, text = await _planned(schema, pg_url, PG_FILES, endpoint, api_client, tmp_path)
    plan = await publish_plan(api_client, schema, text, report)
    document = apply_document(schema, new_operation_id(), plan)
    work = tmp_path / "invocation"
    files_dir = write_files(work / "files", PG_FILES)
    run = await run_runner(
        ["apply", f"--files={files_dir}"], job_env(document, pg_url, endpoint, work)
    )
    assert run.code == 2
    assert run.termination == "bad invocation: a schema Apply reads no --files"
    assert await read_report(api_client, namespace, document["operationID"]) is None


def _with_unique_email(files: dict[str, bytes]) -> dict[str, bytes]:
    index = b"CREATE UNIQUE INDEX customers_email ON customers (email);\n"
    return {**files, "customers.sql": files["customers.sql"] + index}


@pytest.mark.req("SCH-56")
async def test_a_plan_the_rows_would_break_is_refused_by_its_trial_and_nothing_is_published(
    target: tuple[str, PtahSchema, dict[str, bytes]],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, schema, files = target
    pg = "postgresql" in url
    namespace = str(schema.metadata.namespace)
    await execute(url, *(f.decode() for f in files.values()))
    await execute(url, "INSERT INTO customers VALUES (1, 'same@x'), (2, 'same@x')")
    before = await snapshot(url)
    run, record = await _read(
        PLAN, schema, url, _with_unique_email(files), endpoint, api_client, tmp_path, code=1
    )
    report = checked_report(record, schema, PLAN)
    assert report.error is not None
    assert report.plan is None
    if pg:
        assert report.error.reason == "DryRunRefused"
        assert "SQLSTATE 23505" in report.error.message
        assert "rolled back" in report.error.message
    else:
        assert report.error.reason == "PrecheckRefused"
        assert "uniqueRows" in report.error.message
    assert "statement 0" in report.error.message
    assert "same@x" not in json.dumps(record) + run.stderr
    assert await stored_pieces(api_client, namespace, report.operation_id) == []
    assert await snapshot(url) == before

    # Without the duplicate the same plan passes its trial, and the report says what it did.
    await execute(url, "UPDATE customers SET email = 'other@x' WHERE id = 2")
    _, record = await _read(
        PLAN, schema, url, _with_unique_email(files), endpoint, api_client, tmp_path
    )
    trial = record["plan"]["trial"]
    if pg:
        assert trial == {
            "checked": ["statementsRunAndRolledBack"],
            "statementsRun": 1,
            "statements": 1,
            "notRolledBack": ["sequenceValues", "effectsOutsideTheTransaction"],
        }
    else:
        assert trial["checked"] == ["statementsPrepared", "uniqueRows"]
        assert trial["rowChecks"] == {"uniqueRows": 1}
