"""`ptah-runner resolve`, `verify` and `fetch` as child processes, against the real Git server,
the real OCI registry and (resolve, verify) the real result endpoint recording into the API
server."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client
from localstack.gitserver import GitRepo, GitServer
from localstack.registry import OciRegistry
from localstack.sshserver import SshGitServer

from ptah_operator.api.content import MANIFEST_KEY, digest_of_files
from ptah_operator.api.contracts.operation import (
    ArtifactSource,
    GitSource,
    OperationError,
    parse_source_argument,
    parse_source_operation,
)
from ptah_operator.api.migration import PtahMigration
from ptah_operator.engine.sources.verification import (
    MIGRATIONS_ARTIFACT_TYPE,
    SCHEMA_ARTIFACT_TYPE,
)
from tests.integration.runner.runner_support import (
    Endpoint,
    RunnerRun,
    create_migration,
    job_env,
    new_operation_id,
    read_record,
    run_runner,
)
from tests.support.sources import (
    MIGRATION_POLICY,
    MIGRATIONS,
    MORE_MIGRATIONS,
    oci_client,
    pushed,
)

pytestmark = pytest.mark.integration

DIGEST = digest_of_files(MIGRATIONS)[0]
PASSWORD = "git-pa55-7731"


def _in_db(files: dict[str, bytes]) -> dict[str, bytes | None]:
    return {f"db/{name}": data for name, data in files.items()}


@pytest.fixture
def repo(git_server: GitServer) -> GitRepo:
    repo = git_server.create_repo()
    repo.commit({**_in_db(MIGRATIONS), "README": b"x"})
    repo.push()
    return repo


def _plain_env(workdir: Path, registry: OciRegistry | None = None) -> dict[str, str]:
    """What an init container that fetches gets: no URL, no result endpoint."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "PTAH_TERMINATION_LOG": str(workdir / "termination-log"),
    }
    if registry is not None:
        env["PTAH_INSECURE_REGISTRIES"] = registry.host
    if "PYTHONPATH" in os.environ:  # a worktree's run tests its own code, not the venv's
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _credentials(directory: Path, username: str, password: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "username").write_text(username)
    (directory / "password").write_text(password)
    return directory


def _git_source(repo: GitRepo, commit: str | None = None, ref: str = "main") -> dict[str, Any]:
    source: dict[str, Any] = {"kind": "Git", "repository": repo.url, "ref": ref, "path": "db"}
    if commit is not None:
        source["commit"] = commit
    return source


async def _fetch(
    source: dict[str, Any],
    digest: str,
    out: Path,
    env: dict[str, str],
    credentials: Path | None = None,
) -> RunnerRun:
    args = ["fetch", f"--source={json.dumps(source)}", f"--digest={digest}", f"--out={out}"]
    if credentials is not None:
        args.append(f"--credentials={credentials}")
    return await run_runner(args, env, limit=120)


# -- the documents ---------------------------------------------------------------------------


def _document(
    migration: PtahMigration, operation_type: str, source: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "contract": "ptah.run/operation/v1",
        "operationID": new_operation_id(),
        "type": operation_type,
        "resource": {
            "kind": "PtahMigration",
            "namespace": migration.metadata.namespace,
            "name": migration.metadata.name,
            "uid": migration.metadata.uid,
        },
        "source": source,
        **extra,
    }


def test_source_documents_parse() -> None:
    resource = {"kind": "PtahSchema", "namespace": "app", "name": "orders", "uid": "u-1"}
    doc = {
        "contract": "ptah.run/operation/v1",
        "operationID": "op-0123456789",
        "type": "Resolve",
        "resource": resource,
        "source": {"kind": "Git", "repository": "https://g.example/r.git", "ref": "main"},
        "sourcePolicy": {"maxBytes": 1000},
        "somethingElse": True,
    }
    operation = parse_source_operation(json.dumps(doc), "Resolve")
    assert operation.source == GitSource("https://g.example/r.git", "main", None)
    assert operation.max_bytes == 1000
    with pytest.raises(OperationError, match="type must be Verify"):
        parse_source_operation(json.dumps(doc), "Verify")
    verify = {**doc, "type": "Verify", "source": {"kind": "Artifact", "ociRef": "oci://r/a:v1"}}
    with pytest.raises(OperationError, match=r"source\.ociDigest is required"):
        parse_source_operation(json.dumps(verify), "Verify")
    digest = "sha256:" + "a" * 64
    verify["source"] = {"kind": "Artifact", "ociRef": "oci://r/a:v1", "ociDigest": digest}
    assert parse_source_operation(json.dumps(verify), "Verify").source == ArtifactSource(
        "oci://r/a:v1", digest
    )
    with pytest.raises(OperationError, match=r"source\.commit is required"):
        parse_source_argument(json.dumps(doc["source"]))
    with pytest.raises(OperationError, match=r"sourcePolicy\.maxBytes"):
        parse_source_operation(json.dumps({**doc, "sourcePolicy": {"maxBytes": "1"}}), "Resolve")


# -- fetch -----------------------------------------------------------------------------------


@pytest.mark.req("SRC-GIT-06", "SRC-GIT-07", "JOB-02", "JOB-03")
async def test_fetch_writes_the_snapshot_layout_and_source_accepts_it(
    repo: GitRepo, tmp_path: Path
) -> None:
    commit = repo.rev_parse("HEAD")
    repo.commit(_in_db(MORE_MIGRATIONS))  # the ref moves on: the commit is fetched by history
    repo.push()
    env = _plain_env(tmp_path)
    fetched = tmp_path / "fetched"
    run = await _fetch(_git_source(repo, commit), DIGEST, fetched, env)
    assert run.code == 0, (run.termination, run.stderr)
    written = {path.name: path.read_bytes() for path in fetched.iterdir()}
    assert written == {**MIGRATIONS, MANIFEST_KEY: digest_of_files(MIGRATIONS)[1]}

    files = tmp_path / "files"
    run = await run_runner(
        ["source", f"--snapshot={fetched}", f"--digest={DIGEST}", f"--out={files}"], env
    )
    assert run.code == 0, (run.termination, run.stderr)
    assert {path.name: path.read_bytes() for path in files.iterdir()} == MIGRATIONS


@pytest.mark.req("SRC-GIT-06")
async def test_fetch_refuses_files_other_than_the_bound_digest(
    repo: GitRepo, tmp_path: Path
) -> None:
    commit = repo.rev_parse("HEAD")
    other = digest_of_files(MORE_MIGRATIONS)[0]
    out = tmp_path / "out"
    run = await _fetch(_git_source(repo, commit), other, out, _plain_env(tmp_path))
    assert run.code == 3
    assert run.termination.startswith("source refused: the fetched files give ")
    assert other in run.termination
    assert not out.exists()  # nothing is written for the next container
    assert "CREATE TABLE" not in run.termination + run.stderr


@pytest.mark.req("SRC-GIT-09", "SRC-GIT-14")
async def test_fetch_refuses_an_unreachable_commit_and_a_submodule(
    repo: GitRepo, tmp_path: Path
) -> None:
    base = repo.rev_parse("HEAD")
    recorded = repo.commit(_in_db(MORE_MIGRATIONS))
    repo.push()
    repo.reset_hard(base)
    repo.gitlink("db/vendored", base)
    with_submodule = repo.commit()
    repo.push(force=True)
    env = _plain_env(tmp_path)
    run = await _fetch(_git_source(repo, recorded), DIGEST, tmp_path / "a", env)
    assert run.code == 3
    assert run.termination.startswith("source refused: commit ")
    assert "not in the history of main" in run.termination
    run = await _fetch(_git_source(repo, with_submodule), DIGEST, tmp_path / "b", env)
    assert run.code == 3
    assert (
        run.termination
        == "source refused: db holds a submodule 'vendored'; submodules are not read"
    )


async def test_fetch_of_an_unreachable_server_is_unavailable(tmp_path: Path) -> None:
    source = {
        "kind": "Git",
        "repository": "http://127.0.0.1:9/r.git",
        "ref": "main",
        "path": None,
        "commit": "1" * 40,
    }
    run = await _fetch(source, DIGEST, tmp_path / "out", _plain_env(tmp_path))
    assert run.code == 1
    assert run.termination == "source unavailable: the Git server 127.0.0.1:9 cannot be reached"


async def test_fetch_with_credentials_keeps_them_out_of_everything(
    git_server: GitServer, tmp_path: Path
) -> None:
    private = git_server.create_repo(auth=("bob", PASSWORD))
    commit = private.commit(_in_db(MIGRATIONS))
    private.push()
    env = _plain_env(tmp_path)
    good = _credentials(tmp_path / "good", "bob", PASSWORD)
    run = await _fetch(_git_source(private, commit), DIGEST, tmp_path / "a", env, good)
    assert run.code == 0, (run.termination, run.stderr)
    run = await _fetch(_git_source(private, commit), DIGEST, tmp_path / "b", env)
    assert run.code == 1
    assert "asks for credentials" in run.termination
    bad = _credentials(tmp_path / "bad", "bob", "not-" + PASSWORD)
    run = await _fetch(_git_source(private, commit), DIGEST, tmp_path / "c", env, bad)
    assert run.code == 1
    assert "refused the credentials" in run.termination
    assert PASSWORD not in run.stderr + run.termination


@pytest.mark.req("SRC-OCI-06", "JOB-03")
async def test_fetch_of_an_artifact_is_by_digest(oci_registry: OciRegistry, tmp_path: Path) -> None:
    ref, digest = pushed(oci_registry)
    oci_client(oci_registry).push(ref, MORE_MIGRATIONS, MIGRATIONS_ARTIFACT_TYPE)  # tag moves
    env = _plain_env(tmp_path, oci_registry)
    source = {"kind": "Artifact", "ociRef": str(ref), "ociDigest": digest}
    fetched = tmp_path / "fetched"
    run = await _fetch(source, DIGEST, fetched, env)
    assert run.code == 0, (run.termination, run.stderr)
    files = tmp_path / "files"
    run = await run_runner(
        ["source", f"--snapshot={fetched}", f"--digest={DIGEST}", f"--out={files}"], env
    )
    assert run.code == 0, (run.termination, run.stderr)
    assert {path.name: path.read_bytes() for path in files.iterdir()} == MIGRATIONS

    unlisted = _plain_env(tmp_path / "unlisted")  # the registry is plain HTTP: not listed
    run = await _fetch(source, DIGEST, tmp_path / "x", unlisted)
    assert run.code == 1
    assert run.termination.startswith("source unavailable: the TLS connection to the registry ")


async def test_fetch_usage_errors(tmp_path: Path) -> None:
    env = _plain_env(tmp_path)
    run = await _fetch({"kind": "Git"}, DIGEST, tmp_path / "o", env)
    assert run.code == 2
    assert run.termination.startswith("bad invocation: ")
    run = await run_runner(
        ["fetch", "--source={}", "--digest=sha256:nope", f"--out={tmp_path}"], env
    )
    assert run.code == 2


# -- resolve and verify, reporting to the real endpoint ---------------------------------------


async def _report(
    arguments: list[str],
    document: dict[str, Any],
    endpoint: Endpoint,
    api: k8s_client.ApiClient,
    workdir: Path,
    registry: OciRegistry | None = None,
) -> tuple[RunnerRun, dict[str, Any]]:
    work = workdir / document["operationID"]
    work.mkdir(parents=True)
    env = job_env(document, None, endpoint, work)
    if registry is not None:
        env["PTAH_INSECURE_REGISTRIES"] = registry.host
    run = await run_runner(arguments, env, limit=120)
    record = await read_record(api, document["resource"]["namespace"], document["operationID"])
    assert record is not None, (run.code, run.termination, run.stderr)
    assert record["contract"] == "ptah.run/result/v1"
    assert record["type"] == document["type"]
    assert record["resource"] == document["resource"]
    assert record["startedAt"].endswith("Z")
    assert record["finishedAt"].endswith("Z")
    assert all(line.get("operationID") == document["operationID"] for line in run.logs())
    return run, record


@pytest.fixture
async def migration(api_client: k8s_client.ApiClient, namespace: str) -> PtahMigration:
    return await create_migration(api_client, namespace)


@pytest.mark.req("SRC-GIT-01", "SRC-GIT-02", "SRC-GIT-03", "SRC-GIT-04", "JOB-01")
async def test_resolve_reports_the_commit_and_content_digest_of_a_git_source(
    git_server: GitServer,
    migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    private = git_server.create_repo(auth=("bob", PASSWORD))
    commit = private.commit({**_in_db(MIGRATIONS), "db/sub/x.sql": b"not selected"})
    private.tag("v1", annotated=True)
    private.commit(_in_db(MORE_MIGRATIONS))
    private.push()
    credentials = _credentials(tmp_path / "credentials", "bob", PASSWORD)
    source = {"kind": "Git", "repository": private.url, "ref": "v1", "path": "db"}
    document = _document(migration, "Resolve", source, sourcePolicy={"maxBytes": 100000})
    run, record = await _report(
        ["resolve", f"--credentials={credentials}"], document, endpoint, api_client, tmp_path
    )
    assert run.code == 0, (run.termination, run.stderr)
    assert "error" not in record
    assert record["resolve"] == {
        "kind": "Git",
        "repository": private.url,
        "ref": "v1",
        "path": "db",
        "commit": commit,
        "contentDigest": DIGEST,
        "fileCount": 2,
        "totalBytes": sum(len(data) for data in MIGRATIONS.values()),
    }
    assert run.termination.startswith(f"resolved v1 to commit {commit}")
    everything = run.stderr + run.termination + json.dumps(record)
    assert PASSWORD not in everything
    assert "CREATE TABLE" not in everything


@pytest.mark.req("SRC-GIT-10", "SRC-GIT-14", "SRC-POL-04", "SRC-POL-05")
async def test_resolve_reports_why_a_git_source_is_refused(
    repo: GitRepo,
    migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    older = repo.rev_parse("HEAD")
    repo.commit({"db/0000000003_lfs.up.sql": b"version https://git-lfs.github.com/spec/v1\n"})
    repo.push()
    cases = [
        (_git_source(repo, ref=older), None, "CommitNotAdvertised", "is at no branch or tag tip"),
        (_git_source(repo, ref="nope"), None, "RefNotFound", "no branch or tag nope"),
        (_git_source(repo), None, "SourceRefused", "is a Git LFS pointer"),
        (
            {**_git_source(repo, ref=older), "ref": "HEAD~0"},
            None,
            "RefNotFound",
            "not a valid branch, tag or commit id",
        ),
    ]
    for source, policy, reason, words in cases:
        document = _document(migration, "Resolve", source, sourcePolicy=policy)
        run, record = await _report(["resolve"], document, endpoint, api_client, tmp_path)
        assert run.code == 1, (run.termination, run.stderr)
        assert "resolve" not in record
        assert record["error"]["reason"] == reason
        assert words in record["error"]["message"]
        assert run.termination == f"Resolve: {reason}: {record['error']['message']}"
    document = _document(
        migration, "Resolve", _git_source(repo, ref=older), sourcePolicy={"maxBytes": 10}
    )
    repo.tag("pin", older)
    repo.push()
    run, record = await _report(["resolve"], document, endpoint, api_client, tmp_path)
    assert run.code == 1
    assert record["error"]["reason"] == "SourceRefused"
    assert "over the source policy's maxBytes of 10 bytes" in record["error"]["message"]


@pytest.mark.req("SRC-OCI-01")
async def test_resolve_reports_the_digest_behind_an_oci_reference(
    oci_registry: OciRegistry,
    migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    ref, digest = pushed(oci_registry)
    source = {"kind": "Artifact", "ociRef": str(ref)}
    document = _document(migration, "Resolve", source)
    run, record = await _report(["resolve"], document, endpoint, api_client, tmp_path, oci_registry)
    assert run.code == 0, (run.termination, run.stderr)
    assert record["resolve"] == {"kind": "Artifact", "ociRef": str(ref), "ociDigest": digest}

    absent = {"kind": "Artifact", "ociRef": oci_registry.ref("acme/absent", "v1")}
    document = _document(migration, "Resolve", absent)
    run, record = await _report(["resolve"], document, endpoint, api_client, tmp_path, oci_registry)
    assert run.code == 1
    assert record["error"]["reason"] == "SourceUnreachable"
    assert "is not in the registry" in record["error"]["message"]


@pytest.mark.req("SRC-OCI-02", "SRC-OCI-03", "SRC-OCI-04", "SRC-OCI-06")
async def test_verify_accepts_by_policy_and_reports_the_content_digest(
    oci_registry: OciRegistry,
    migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    ref, migrations = pushed(oci_registry)
    schema = oci_client(oci_registry).push(ref, {"schema.hcl": b"t {}\n"}, SCHEMA_ARTIFACT_TYPE)
    policy = tmp_path / "policy.yaml"
    policy.write_bytes(MIGRATION_POLICY)
    policy_digest = "sha256:" + hashlib.sha256(MIGRATION_POLICY).hexdigest()
    arguments = ["verify", f"--policy={policy}"]

    source = {"kind": "Artifact", "ociRef": str(ref), "ociDigest": migrations}
    run, record = await _report(
        arguments,
        _document(migration, "Verify", source),
        endpoint,
        api_client,
        tmp_path,
        oci_registry,
    )
    assert run.code == 0, (run.termination, run.stderr)
    assert record["verify"] == {
        "accepted": True,
        "artifactType": MIGRATIONS_ARTIFACT_TYPE,
        "policyDigest": policy_digest,
        "contentDigest": DIGEST,
    }

    # The tag now names the schema artifact; the digest Verify was given is what it reads.
    source = {"kind": "Artifact", "ociRef": str(ref), "ociDigest": schema}
    run, record = await _report(
        arguments,
        _document(migration, "Verify", source),
        endpoint,
        api_client,
        tmp_path,
        oci_registry,
    )
    assert run.code == 0  # a refusal is a verdict, not a failure
    assert record["verify"] == {
        "accepted": False,
        "artifactType": SCHEMA_ARTIFACT_TYPE,
        "policyDigest": policy_digest,
        "refusal": f"artifact type {SCHEMA_ARTIFACT_TYPE} is not one the policy accepts",
    }
    assert run.termination.startswith("artifact refused: artifact type")

    policy.write_bytes(
        b"version: 2\nartifact_types: [application/vnd.stokaro.ptah.migrations.v1]\n"
    )
    source = {"kind": "Artifact", "ociRef": str(ref), "ociDigest": migrations}
    run, record = await _report(
        arguments,
        _document(migration, "Verify", source),
        endpoint,
        api_client,
        tmp_path,
        oci_registry,
    )
    assert run.code == 0
    assert record["verify"]["accepted"] is False
    assert record["verify"]["refusal"] == "the verification policy is invalid: version must be 1"

    gone = {"kind": "Artifact", "ociRef": str(ref), "ociDigest": "sha256:" + "0" * 64}
    run, record = await _report(
        arguments,
        _document(migration, "Verify", gone),
        endpoint,
        api_client,
        tmp_path,
        oci_registry,
    )
    assert run.code == 1
    assert "verify" not in record
    assert record["error"]["reason"] == "SourceUnreachable"


# -- Git over SSH ----------------------------------------------------------------------------


@pytest.mark.req("SRC-GIT-02", "SRC-GIT-03")
async def test_resolve_over_ssh_takes_only_the_host_key_the_secret_pins(
    repo: GitRepo,
    ssh_git_server: SshGitServer,
    migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    tmp_path: Path,
) -> None:
    url = ssh_git_server.url_for(repo.name)
    source = {"kind": "Git", "repository": url, "ref": "main", "path": "db"}
    secret = ssh_git_server.client_files(tmp_path / "secret")
    document = _document(migration, "Resolve", source)
    run, record = await _report(
        ["resolve", f"--credentials={secret}"], document, endpoint, api_client, tmp_path
    )
    assert run.code == 0, (run.termination, run.stderr)
    assert record["resolve"]["commit"] == repo.rev_parse("HEAD")
    assert record["resolve"]["contentDigest"] == DIGEST

    wrong = ssh_git_server.client_files(
        tmp_path / "wrong", known_hosts=ssh_git_server.other_host_key_line()
    )
    unpinned = ssh_git_server.client_files(tmp_path / "unpinned", known_hosts="")
    for directory, code in ((wrong, "HostKeyNotPinned"), (unpinned, "KnownHostsMissing")):
        document = _document(migration, "Resolve", source)
        run, record = await _report(
            ["resolve", f"--credentials={directory}"], document, endpoint, api_client, tmp_path
        )
        assert run.code == 1, (run.termination, run.stderr)
        assert record["error"]["reason"] == "SourceUnreachable"
        assert f"({code})" in record["error"]["message"]
        assert record["error"]["code"] == code
        everything = run.stderr + run.termination + json.dumps(record)
        for ssh_text in ("IDENTIFICATION", "Offending", "SHA256:", "known_hosts:1"):
            assert ssh_text not in everything


@pytest.mark.req("SRC-GIT-08")
async def test_fetch_over_ssh_writes_the_recorded_commits_files(
    repo: GitRepo, ssh_git_server: SshGitServer, tmp_path: Path
) -> None:
    commit = repo.rev_parse("HEAD")
    repo.commit(_in_db(MORE_MIGRATIONS))
    repo.push()
    source = {**_git_source(repo, commit), "repository": ssh_git_server.url_for(repo.name)}
    secret = ssh_git_server.client_files(tmp_path / "secret")
    env = _plain_env(tmp_path)
    run = await _fetch(source, DIGEST, tmp_path / "out", env, secret)
    assert run.code == 0, (run.termination, run.stderr)
    assert {p.name for p in (tmp_path / "out").iterdir()} == {*MIGRATIONS, MANIFEST_KEY}
    run = await _fetch(source, DIGEST, tmp_path / "none", env)
    assert run.code == 1
    assert run.termination.startswith("source unavailable: ")
    assert "(KnownHostsMissing)" in run.termination
