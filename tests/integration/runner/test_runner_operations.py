"""`ptah-runner history|apply` as a child process with the environment a Job gives it, against
real PostgreSQL and MariaDB, reporting over TLS to the real result endpoint, which records into
the real API server."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import signal
import socket
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client as k8s_client

from ptah_operator.api.constants import OperationType
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.names import RESULT_KEY, result_record_name
from tests.integration.engine.migrations.mig_support import snapshot
from tests.integration.runner.runner_support import (
    RUNNER,
    SECRET,
    Endpoint,
    RunnerRun,
    document_for,
    job_env,
    new_operation_id,
    plan_for,
    read_record,
    record_object,
    reset_termination_log,
    run_runner,
    write_files,
)

pytestmark = pytest.mark.integration

HISTORY = OperationType.HISTORY
APPLY = OperationType.APPLY
FILES = {
    "0000000001_users.up.sql": b"CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(100) UNIQUE);\n",
    "0000000002_seed.up.sql": b"INSERT INTO users VALUES (1, 'a@example.com');\n",
}
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def _checksum(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture(params=["postgresql", "mariadb"])
def target(request: pytest.FixtureRequest) -> tuple[str, PtahMigration]:
    """(database URL, PtahMigration) for each engine. MariaDB runs with transactionMode none:
    in file mode its implicit commits around DDL make Ptah refuse the files (MIG-55)."""
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")
        migration: PtahMigration = request.getfixturevalue("pg_migration")
    else:
        url = request.getfixturevalue("maria_url")
        migration = request.getfixturevalue("maria_migration")
    return url, migration


def _assert_private(run: RunnerRun, url: str, *texts: str) -> None:
    """Nothing the runner wrote names the URL, a credential, SQL or a row (PRIV-01, PRIV-05)."""
    for where in (run.stderr, run.termination, *texts):
        assert url not in where
        assert "postgresql://" not in where
        assert "mysql://" not in where
        assert "CREATE TABLE" not in where
        assert "INSERT INTO" not in where
        assert SECRET not in where


def _assert_logs(run: RunnerRun, operation_id: str) -> None:
    lines = run.logs()
    assert lines, run.stderr
    assert all(line.get("operationID") == operation_id for line in lines), run.stderr


async def _history(
    migration: PtahMigration,
    url: str,
    endpoint: Endpoint,
    workdir: Path,
    api: k8s_client.ApiClient,
    files: dict[str, bytes] = FILES,
) -> tuple[RunnerRun, dict[str, Any]]:
    operation_id = new_operation_id()
    document = document_for(migration, HISTORY, operation_id, files)
    work = workdir / operation_id
    files_dir = write_files(work / "files", files)
    run = await run_runner(
        ["history", f"--files={files_dir}"], job_env(document, url, endpoint, work)
    )
    assert run.code == 0, (run.termination, run.stderr)
    record = await read_record(api, str(migration.metadata.namespace), operation_id)
    assert record is not None
    _assert_private(run, url, json.dumps(record))
    _assert_logs(run, operation_id)
    return run, record


async def _apply(
    migration: PtahMigration,
    url: str,
    endpoint: Endpoint,
    workdir: Path,
    versions: list[dict[str, Any]],
    target_identity: str,
    files: dict[str, bytes] = FILES,
    extra_env: dict[str, str] | None = None,
) -> tuple[str, RunnerRun, dict[str, Any]]:
    operation_id = new_operation_id()
    plan = plan_for(migration, files, versions, target_identity, "sha256:" + "b" * 64)
    document = document_for(migration, APPLY, operation_id, files, plan)
    work = workdir / operation_id
    files_dir = write_files(work / "files", files)
    env = {**job_env(document, url, endpoint, work), **(extra_env or {})}
    run = await run_runner(["apply", f"--files={files_dir}"], env)
    return operation_id, run, document


@pytest.mark.req("MIG-62", "MIG-34", "MIG-35", "SRC-CM-07", "PRIV-01", "PRIV-02", "RUN-13")
async def test_history_on_a_fresh_database_reads_everything_pending(
    target: tuple[str, PtahMigration],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, migration = target
    before = await snapshot(url)
    run, record = await _history(migration, url, endpoint, tmp_path, api_client)

    assert record["contract"] == "ptah.run/result/v1"
    assert record["type"] == "History"
    assert record["resource"] == {
        "kind": "PtahMigration",
        "namespace": migration.metadata.namespace,
        "name": migration.metadata.name,
        "uid": migration.metadata.uid,
    }
    assert DIGEST.match(record["targetIdentityDigest"])
    assert record["startedAt"].endswith("Z")
    assert record["finishedAt"].endswith("Z")
    assert "run" not in record
    assert "error" not in record
    history = record["history"]
    assert history["verdict"] == "ReadyToPlan"
    assert history["pendingCount"] == 2
    assert history["appliedCount"] == 0
    assert history["pending"] == [
        {
            "version": "0000000001",
            "description": "users",
            "checksum": _checksum(FILES["0000000001_users.up.sql"]),
        },
        {
            "version": "0000000002",
            "description": "seed",
            "checksum": _checksum(FILES["0000000002_seed.up.sql"]),
        },
    ]
    assert history["currentVersion"] is None
    assert history["dirty"] is None
    assert history["revisions"] == []
    assert DIGEST.match(history["fingerprint"])
    assert run.termination == "History ReadyToPlan"
    # A read writes nothing: not even the revision table.
    assert await snapshot(url) == before

    operation_id = record["operationID"]
    stored = await record_object(api_client, str(migration.metadata.namespace), operation_id)
    assert stored.metadata.name == result_record_name(operation_id)
    assert stored.immutable is True
    assert stored.metadata.labels == {
        "app.kubernetes.io/managed-by": "ptah-operator",
        "operator.ptah.run/owner-kind": "PtahMigration",
        "operator.ptah.run/owner-name": migration.metadata.name,
        "operator.ptah.run/owner-uid": migration.metadata.uid,
        "operator.ptah.run/operation-id": operation_id,
        "operator.ptah.run/operation": "History",
    }
    owner = stored.metadata.owner_references[0]
    assert (owner.kind, owner.uid, owner.controller) == (
        "PtahMigration",
        migration.metadata.uid,
        True,
    )


@pytest.mark.req("MIG-49", "JOB-09", "RUN-01", "RUN-02", "RUN-12", "RUN-13", "PATH-20")
async def test_apply_runs_the_expected_sequence(
    target: tuple[str, PtahMigration],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, migration = target
    _, read = await _history(migration, url, endpoint, tmp_path, api_client)
    versions = read["history"]["pending"]
    operation_id, run, _ = await _apply(
        migration, url, endpoint, tmp_path, versions, read["targetIdentityDigest"]
    )
    assert run.code == 0, (run.termination, run.stderr)
    record = await read_record(api_client, str(migration.metadata.namespace), operation_id)
    assert record is not None
    _assert_private(run, url, json.dumps(record))
    _assert_logs(run, operation_id)
    assert record["type"] == "Apply"
    assert record["run"] == {
        "outcome": "Applied",
        "selected": True,
        "appliedVersions": ["0000000001", "0000000002"],
        "failure": None,
        "message": "applied 2 migration(s)",
        "reason": "Applied",
    }
    assert record["targetIdentityDigest"] == read["targetIdentityDigest"]
    # The Apply's own reading, under the lock before it ran anything.
    assert record["history"]["verdict"] == "ReadyToPlan"
    assert "error" not in record
    assert run.termination == "Apply Applied"

    _, after = await _history(migration, url, endpoint, tmp_path, api_client)
    history = after["history"]
    assert history["verdict"] == "NothingPending"
    assert history["currentVersion"] == "0000000002"
    assert history["appliedCount"] == 2
    assert [r["version"] for r in history["revisions"]] == ["0000000002", "0000000001"]
    newest = history["revisions"][0]
    assert newest["state"] == "Applied"
    assert newest["checksum"] == _checksum(FILES["0000000002_seed.up.sql"])
    assert newest["description"] == "seed"
    assert newest["appliedAt"].endswith("Z")


@pytest.mark.req("MIG-50", "MIG-51", "RUN-20", "MIG-44", "JOB-09")
async def test_apply_of_another_sequence_is_refused_before_changing_anything(
    target: tuple[str, PtahMigration],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, migration = target
    _, read = await _history(migration, url, endpoint, tmp_path, api_client)
    pending = read["history"]["pending"]
    before = await snapshot(url)
    for versions in (
        pending[1:],  # skips the first pending migration
        [pending[0], {**pending[1], "checksum": "sha256:" + "e" * 64}],  # another file 2
    ):
        operation_id, run, _ = await _apply(
            migration, url, endpoint, tmp_path, versions, read["targetIdentityDigest"]
        )
        assert run.code == 0, (run.termination, run.stderr)
        record = await read_record(api_client, str(migration.metadata.namespace), operation_id)
        assert record is not None
        assert record["run"]["outcome"] == "Failed"
        assert record["run"]["selected"] is False
        assert record["run"]["appliedVersions"] == []
        assert record["run"]["failure"] is None
        assert "expected sequence" in record["run"]["message"]
        assert record["run"]["reason"] == "SequenceMismatch"
        assert "error" not in record
        assert await snapshot(url) == before


@pytest.mark.req("RUN-17", "PRIV-05", "PRIV-01", "MIG-43")
async def test_a_failing_statement_is_reported_by_position_and_error_class(
    target: tuple[str, PtahMigration],
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url, migration = target
    pg = url.startswith("postgres")
    # The duplicate is the SECRET value: the server's message quotes it, the result must not.
    second = (
        f"INSERT INTO users VALUES (2, '{SECRET}');\nINSERT INTO users VALUES (3, '{SECRET}');\n"
        if pg
        else f"INSERT INTO users VALUES (2, '{SECRET}'), (3, '{SECRET}');\n"
    )
    files = {**FILES, "0000000002_seed.up.sql": second.encode()}
    _, read = await _history(migration, url, endpoint, tmp_path, api_client, files)
    operation_id, run, _ = await _apply(
        migration,
        url,
        endpoint,
        tmp_path,
        read["history"]["pending"],
        read["targetIdentityDigest"],
        files,
    )
    assert run.code == 0, (run.termination, run.stderr)
    record = await read_record(api_client, str(migration.metadata.namespace), operation_id)
    assert record is not None
    _assert_private(run, url, json.dumps(record))
    result = record["run"]
    assert result["outcome"] == "Failed"
    assert result["selected"] is True
    assert result["appliedVersions"] == ["0000000001"]
    if pg:
        assert result["failure"] == {
            "version": "0000000002",
            "statementIndex": 2,
            "sqlstate": "23505",
            "mysqlErrno": None,
        }
        assert result["message"] == "migration 0000000002 failed: SQLSTATE 23505"
    else:
        assert result["failure"] == {
            "version": "0000000002",
            "statementIndex": 1,
            "sqlstate": None,
            "mysqlErrno": 1062,
        }
        assert result["message"] == "migration 0000000002 failed: MySQL error 1062"
    assert run.termination == "Apply Failed"
    # The failed file left a dirty row, so the next reading is Dirty (MIG-43).
    _, after = await _history(migration, url, endpoint, tmp_path, api_client, files)
    assert after["history"]["verdict"] == "Dirty"
    assert after["history"]["dirty"] == {"version": "0000000002", "description": "seed"}
    assert after["history"]["revisions"][0]["state"] == "Dirty"


@pytest.mark.req("RUN-18", "PRIV-05")
async def test_a_failed_commit_names_the_migration_and_error_class_but_no_statement(
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    files = {
        "0000000001_tables.up.sql": (
            b"CREATE TABLE parent (id INT PRIMARY KEY);\n"
            b"CREATE TABLE child (parent_id INT REFERENCES parent (id)"
            b" DEFERRABLE INITIALLY DEFERRED);\n"
        ),
        "0000000002_orphan.up.sql": b"INSERT INTO child VALUES (42);\n",
    }
    _, read = await _history(pg_migration, pg_url, endpoint, tmp_path, api_client, files)
    operation_id, run, _ = await _apply(
        pg_migration,
        pg_url,
        endpoint,
        tmp_path,
        read["history"]["pending"],
        read["targetIdentityDigest"],
        files,
    )
    assert run.code == 0, (run.termination, run.stderr)
    record = await read_record(api_client, str(pg_migration.metadata.namespace), operation_id)
    assert record is not None
    assert record["run"]["outcome"] == "Failed"
    assert record["run"]["failure"] is None
    assert record["run"]["message"] == "migration 0000000002 failed at commit: SQLSTATE 23503"
    # What the manager words status from (issue #18): the code and the error class.
    assert (record["run"]["reason"], record["run"]["sqlstate"]) == ("CommitFailed", "23503")
    assert record["run"]["stoppedAt"]["version"] == "0000000002"
    assert record["run"]["appliedVersions"] == ["0000000001"]


@pytest.mark.req("RUN-14", "RUN-13", "MIG-44")
async def test_apply_against_another_database_than_planned_runs_nothing(
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    _, read = await _history(pg_migration, pg_url, endpoint, tmp_path, api_client)
    before = await snapshot(pg_url)
    operation_id, run, _ = await _apply(
        pg_migration,
        pg_url,
        endpoint,
        tmp_path,
        read["history"]["pending"],
        "sha256:" + "0" * 64,  # the plan was read from another database
    )
    assert run.code == 0, (run.termination, run.stderr)
    record = await read_record(api_client, str(pg_migration.metadata.namespace), operation_id)
    assert record is not None
    assert record["run"]["outcome"] == "Failed"
    assert record["run"]["selected"] is False
    assert record["run"]["appliedVersions"] == []
    # The database the Secret held, which the run did not touch.
    assert record["targetIdentityDigest"] == read["targetIdentityDigest"]
    assert await snapshot(pg_url) == before


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.req("PRIV-06", "MIG-44", "RUN-15")
async def test_an_unreachable_database_is_a_result_without_its_url(
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    port = _closed_port()
    url = f"postgresql://owner:hunter2-secret@127.0.0.1:{port}/orders"
    namespace = str(pg_migration.metadata.namespace)

    operation_id = new_operation_id()
    document = document_for(pg_migration, HISTORY, operation_id, FILES)
    files_dir = write_files(tmp_path / "h" / "files", FILES)
    run = await run_runner(
        ["history", f"--files={files_dir}"], job_env(document, url, endpoint, tmp_path / "h")
    )
    assert run.code == 1, (run.termination, run.stderr)
    record = await read_record(api_client, namespace, operation_id)
    assert record is not None
    assert record["error"]["reason"] == "ConnectionFailed"
    assert "history" not in record
    assert "run" not in record
    assert record["targetIdentityDigest"] is None
    for text in (json.dumps(record), run.stderr, run.termination):
        assert "hunter2" not in text
        assert str(port) not in text
        assert "127.0.0.1" not in text
    _assert_private(run, url, json.dumps(record))

    (tmp_path / "a").mkdir()
    operation_id = new_operation_id()
    plan = plan_for(
        pg_migration,
        FILES,
        [{"version": "0000000001", "checksum": "sha256:" + "1" * 64}],
        "sha256:" + "a" * 64,
        "sha256:" + "b" * 64,
    )
    document = document_for(pg_migration, APPLY, operation_id, FILES, plan)
    files_dir = write_files(tmp_path / "a" / "files", FILES)
    run = await run_runner(
        ["apply", f"--files={files_dir}"], job_env(document, url, endpoint, tmp_path / "a")
    )
    assert run.code == 1, (run.termination, run.stderr)
    record = await read_record(api_client, namespace, operation_id)
    assert record is not None
    assert record["error"]["reason"] == "ConnectionFailed"
    # Nothing was selected, so nothing ran: Failed, not Unknown.
    assert record["run"]["outcome"] == "Failed"
    assert record["run"]["selected"] is False
    assert "hunter2" not in json.dumps(record)
    assert str(port) not in json.dumps(record)


@pytest.mark.req("RUN-01", "RUN-03", "RUN-12")
async def test_an_apply_stopped_while_it_runs_is_unknown(
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    files = {
        **FILES,
        "0000000003_slow.up.sql": b"SELECT pg_sleep(60);\n",
    }
    _, read = await _history(pg_migration, pg_url, endpoint, tmp_path, api_client, files)
    operation_id = new_operation_id()
    plan = plan_for(
        pg_migration,
        files,
        read["history"]["pending"],
        read["targetIdentityDigest"],
        read["history"]["fingerprint"],
    )
    document = document_for(pg_migration, APPLY, operation_id, files, plan)
    work = tmp_path / operation_id
    files_dir = write_files(work / "files", files)
    env = job_env(document, pg_url, endpoint, work)
    reset_termination_log(env)
    proc = await asyncio.create_subprocess_exec(
        RUNNER,
        "apply",
        f"--files={files_dir}",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    namespace = str(pg_migration.metadata.namespace)
    # Wait until the slow statement runs (the first two files are recorded), then stop it.
    for _ in range(200):
        rows = await _applied_versions(pg_url)
        if rows == [1, 2]:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1, stderr.decode()
    record = await read_record(api_client, namespace, operation_id)
    assert record is not None
    assert record["run"]["outcome"] == "Unknown"
    assert record["run"]["selected"] is True
    assert record["error"]["reason"] == "Interrupted"
    # How far it is known to have got: read back from the table after the interruption.
    assert record["run"]["appliedVersions"] == ["0000000001", "0000000002"]
    # Where it stopped: the file it was in, which its rolled-back transaction left no row for.
    assert record["run"]["stoppedAt"] == {"version": "0000000003"}


async def _applied_versions(url: str) -> list[int]:
    from ptah_operator.engine.migrations.connection import DatabaseError, connect

    db = await connect(url)
    try:
        _, rows = await db.fetch("SELECT version FROM schema_migrations ORDER BY version")
        return [int(r[0]) for r in rows]
    except DatabaseError:
        return []
    finally:
        await db.close()


async def test_an_endpoint_that_is_down_ends_with_result_not_reported(
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    operation_id = new_operation_id()
    document = document_for(pg_migration, HISTORY, operation_id, FILES)
    files_dir = write_files(tmp_path / "files", FILES)
    env = job_env(
        document,
        pg_url,
        endpoint,
        tmp_path,
        result_url=f"https://127.0.0.1:{_closed_port()}/v1/results",
        retry_seconds=3,
    )
    run = await run_runner(["history", f"--files={files_dir}"], env)
    assert run.code == 4, (run.termination, run.stderr)
    assert run.termination == "result not reported"
    # It kept trying for its budget, and no longer.
    assert 2 <= run.seconds < 20
    attempts = [line for line in run.logs() if line["event"] == "result endpoint not reached"]
    assert len(attempts) >= 2
    assert await read_record(api_client, str(pg_migration.metadata.namespace), operation_id) is None


async def test_a_bad_token_is_refused_and_nothing_is_stored(
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    operation_id = new_operation_id()
    namespace = str(pg_migration.metadata.namespace)
    document = document_for(pg_migration, HISTORY, operation_id, FILES)
    files_dir = write_files(tmp_path / "files", FILES)
    # The token of another operation: valid for that one, not for this.
    wrong = endpoint.token(namespace, new_operation_id())
    env = job_env(document, pg_url, endpoint, tmp_path, token=wrong, retry_seconds=30)
    run = await run_runner(["history", f"--files={files_dir}"], env)
    assert run.code == 4, (run.termination, run.stderr)
    assert run.termination == "result not reported"
    refused = [line for line in run.logs() if line["event"] == "result refused"]
    assert refused
    assert refused[0]["status"] == 401
    assert run.seconds < 20  # a refusal is final: no retrying for the whole budget
    assert await read_record(api_client, namespace, operation_id) is None
    assert wrong not in run.stderr


async def test_a_replayed_report_is_answered_from_the_one_record(
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    _, record = await _history(pg_migration, pg_url, endpoint, tmp_path, api_client)
    namespace = str(pg_migration.metadata.namespace)
    operation_id = record["operationID"]
    stored = await record_object(api_client, namespace, operation_id)
    body = stored.data["result.json"].encode()
    url = f"{endpoint.base_url}/{namespace}/{operation_id}"
    token = endpoint.token(namespace, operation_id)
    context = ssl.create_default_context(cafile=str(endpoint.ca_file))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as http:

        async def post(data: bytes, bearer: str = token, to: str = url) -> tuple[int, Any]:
            headers = {"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"}
            async with http.post(to, data=data, headers=headers) as resp:
                return resp.status, await resp.json()

        assert await post(body) == (
            200,
            {"record": result_record_name(operation_id), "result": "exists"},
        )
        different = json.loads(body)
        different["history"]["pendingCount"] = 7
        status, answer = await post(json.dumps(different).encode())
        assert status == 409
        assert "different" in answer["error"]
        status, _ = await post(body, bearer="0" * 64)
        assert status == 401
        status, _ = await post(b"x" * (1024 * 1024 + 1))
        assert status == 413
        other = new_operation_id()
        status, answer = await post(
            body,
            bearer=endpoint.token(namespace, other),
            to=f"{endpoint.base_url}/{namespace}/{other}",
        )
        assert status == 400
        assert "operationID" in answer["error"]
    core: Any = k8s_client.CoreV1Api(api_client)
    found = await core.list_namespaced_config_map(
        namespace, label_selector="operator.ptah.run/operation=History"
    )
    assert [cm.metadata.name for cm in found.items] == [result_record_name(operation_id)]
    # Two different reports of one operation in flight: the record now believes neither and
    # names both by digest (docs/security.md, "Result records").
    replaced = json.loads(
        (await record_object(api_client, namespace, operation_id)).data[RESULT_KEY]
    )
    assert set(replaced["conflict"]) == {"recorded", "received"}
    assert "history" not in replaced


async def test_a_bad_operation_document_runs_nothing_and_says_why(
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    operation_id = new_operation_id()
    document = document_for(pg_migration, HISTORY, operation_id, FILES)
    document["contract"] = "ptah.run/operation/v9"
    files_dir = write_files(tmp_path / "files", FILES)
    run = await run_runner(
        ["history", f"--files={files_dir}"], job_env(document, pg_url, endpoint, tmp_path)
    )
    assert run.code == 2
    assert run.termination == "bad operation document: contract must be ptah.run/operation/v1"
    assert await read_record(api_client, str(pg_migration.metadata.namespace), operation_id) is None


@pytest.mark.req("MIG-49")
async def test_an_apply_that_could_not_report_does_not_start(
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    _, read = await _history(pg_migration, pg_url, endpoint, tmp_path, api_client)
    before = await snapshot(pg_url)
    _, run, _ = await _apply(
        pg_migration,
        pg_url,
        endpoint,
        tmp_path,
        read["history"]["pending"],
        read["targetIdentityDigest"],
        extra_env={"PTAH_RESULT_CA_FILE": str(tmp_path / "no-such-ca.crt")},
    )
    assert run.code == 2
    assert run.termination.startswith("bad configuration:")
    assert await snapshot(pg_url) == before
