"""A PtahMigration whose files live in an OCI artifact or a Git repository, on the whole stack.

The registry (Debian's docker-registry) and the Git server (git http-backend) are real, and so
are the Resolve, Verify, History and Apply Jobs that read them: the manager never reaches
either (SRC-GIT-01); every operation that needs the files fetches them again in an init
container and holds them to the pinned digest.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from localstack.stack import LocalStack

from ptah_operator.engine.sources.verification import MIGRATIONS_ARTIFACT_TYPE
from tests.e2e.scenario import Scenario
from tests.support.sources import oci_client, unique

pytestmark = pytest.mark.e2e

SCHEMA_ARTIFACT_TYPE = "application/vnd.stokaro.ptah.schema.v1"
FIRST = {
    "0000000001_create_customers.up.sql": b"CREATE TABLE customers (id bigint PRIMARY KEY);\n",
    "0000000002_create_orders.up.sql": b"CREATE TABLE orders (id bigint PRIMARY KEY);\n",
}
SECOND = {
    **FIRST,
    "0000000003_create_items.up.sql": b"CREATE TABLE items (id bigint PRIMARY KEY);\n",
}


def _policy(s: Scenario, *types: str) -> None:
    body = "version: 1\nartifact_types:\n" + "".join(f"  - {t}\n" for t in types)
    s.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "verification"},
            "data": {"policy.yaml": body},
        }
    )


def _push(stack: LocalStack, reference: str, files: dict[str, bytes], artifact_type: str) -> str:
    from ptah_operator.engine.sources.oci import parse_ref

    assert stack.registry is not None
    return oci_client(stack.registry).push(parse_ref(reference), files, artifact_type)


def _artifact(stack: LocalStack, reference: str) -> dict[str, Any]:
    """The source block naming `reference` as the Jobs' Pods reach the registry."""
    return {
        "artifact": {
            "ociRef": stack.pod_url(reference),
            "verificationPolicyFrom": {"name": "verification", "key": "policy.yaml"},
        }
    }


def _job_types(s: Scenario) -> list[str]:
    return sorted(
        {j["metadata"]["labels"]["operator.ptah.run/operation"] for j in s.jobs(name="orders")}
    )


@pytest.mark.req("MIG-06", "MIG-07", "SRC-OCI-01", "SRC-OCI-02", "SRC-OCI-05", "JOB-01")
def test_an_oci_artifact_is_resolved_verified_read_approved_and_applied(
    e2e_stack: LocalStack,
) -> None:
    assert e2e_stack.registry is not None
    s = Scenario(e2e_stack)
    reference = e2e_stack.registry.ref(unique("acme/orders-migrations"), "stable")
    digest = _push(e2e_stack, reference, FIRST, MIGRATIONS_ARTIFACT_TYPE)
    _policy(s, MIGRATIONS_ARTIFACT_TYPE)
    s.migration(source=_artifact(e2e_stack, reference))

    waiting = s.wait_phase("AwaitingApproval")
    source = waiting["source"]
    assert source["ociDigest"] == digest
    assert source["artifactType"] == MIGRATIONS_ARTIFACT_TYPE
    assert s.condition("ArtifactResolved")["reason"] == "DigestResolved"
    assert s.condition("ArtifactVerified")["reason"] == "PolicySatisfied"
    assert {"Resolve", "Verify", "History"} <= set(_job_types(s))
    assert s.tables() == set()

    s.approve(wait=True)
    done = s.wait_phase("InSync")
    assert done["lastRun"]["outcome"] == "Applied"
    assert {"customers", "orders"} <= s.tables()


@pytest.mark.req("MIG-07", "SRC-OCI-03", "SRC-OCI-04")
def test_a_schema_artifact_at_a_migration_reference_is_refused_and_nothing_runs(
    e2e_stack: LocalStack,
) -> None:
    assert e2e_stack.registry is not None
    s = Scenario(e2e_stack)
    reference = e2e_stack.registry.ref(unique("acme/orders"), "stable")
    _push(e2e_stack, reference, FIRST, SCHEMA_ARTIFACT_TYPE)
    _policy(s, MIGRATIONS_ARTIFACT_TYPE)
    s.migration(apply="Always", source=_artifact(e2e_stack, reference))

    blocked = s.wait_phase("Blocked")
    assert s.condition("Ready")["reason"] == "PolicyRefused"
    verified = s.condition("ArtifactVerified")
    assert verified["status"] == "False"
    # By code: the registry's own text (the artifact type) never reaches conditions (#18).
    assert "ArtifactTypeNotAccepted" in verified["message"]
    assert SCHEMA_ARTIFACT_TYPE not in verified["message"]
    assert "plan" not in blocked
    assert set(_job_types(s)) == {"Resolve", "Verify"}
    assert s.tables() == set()

    # The person fixes the policy's side: the replaced policy is read at once.
    _policy(s, MIGRATIONS_ARTIFACT_TYPE, SCHEMA_ARTIFACT_TYPE)
    s.wait_phase("InSync")
    assert {"customers", "orders"} <= s.tables()


@pytest.mark.req(
    "MIG-06",
    "SRC-GIT-02",
    "SRC-GIT-03",
    "SRC-GIT-04",
    "SRC-GIT-05",
    "SRC-GIT-06",
    "SRC-GIT-07",
    "SRC-GIT-15",
    "SRC-GIT-16",
)
def test_a_git_branch_is_followed_commit_by_commit(e2e_stack: LocalStack) -> None:
    assert e2e_stack.git is not None
    s = Scenario(e2e_stack)
    repo = e2e_stack.git.create_repo()
    first = repo.commit({f"db/{k}": v for k, v in FIRST.items()}, "first migrations")
    repo.push("main")
    url = e2e_stack.pod_url(repo.url)
    git = {"repository": url, "ref": "main", "path": "db"}
    s.migration(apply="Always", source={"git": git})

    done = s.wait_phase("InSync")
    source = done["source"]
    assert (source["commit"], source["repository"], source["ref"], source["path"]) == (
        first,
        url,
        "main",
        "db",
    )
    resolved = s.condition("ArtifactResolved")
    assert resolved["reason"] == "CommitResolved"
    assert first in resolved["message"]
    assert {"customers", "orders"} <= s.tables()
    apply_jobs = s.jobs("Apply", name="orders")
    init = [c["name"] for c in apply_jobs[0]["spec"]["template"]["spec"]["initContainers"]]
    assert init == ["fetch", "source"]

    # A commit that leaves the selected files as they were keeps everything as it is.
    unrelated = repo.commit({"README.md": b"orders database\n"}, "docs only")
    repo.push("main")
    s.request_read()
    _wait_for_commit(s, unrelated)
    assert s.status()["phase"] == "InSync"

    # A commit that adds a migration is planned and, under Always, applied.
    added = repo.commit({f"db/{k}": v for k, v in SECOND.items() if k not in FIRST}, "add items")
    repo.push("main")
    s.request_read()
    _wait_for_commit(s, added)
    s.wait(
        lambda st: st.get("lastRun", {}).get("appliedVersions") == ["0000000003"],
        "the run of 0000000003",
    )
    s.wait_phase("InSync")
    assert "items" in s.tables()


def _wait_for_commit(s: Scenario, commit: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = s.status()
        if (status.get("source") or {}).get("commit") == commit and status.get("phase") in {
            "InSync",
            "AwaitingApproval",
            "Planning",
            "Applying",
            "VerifyingHistory",
        }:
            return
        time.sleep(1)
    raise AssertionError(f"commit {commit} was never resolved: {s.status()}")


def _ssh_secret(s: Scenario, name: str, known_hosts: str) -> None:
    """A deploy key, and `known_hosts` pinning the server's key for the host the Pods reach."""
    stack = s.stack
    assert stack.ssh_git is not None
    known_hosts = known_hosts.replace("[127.0.0.1]", f"[{stack.pod_host}]")
    s.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name},
            "type": "kubernetes.io/ssh-auth",
            "stringData": {
                "ssh-privatekey": stack.ssh_git.client_key.read_text(),
                "known_hosts": known_hosts,
            },
        }
    )


@pytest.mark.req("SRC-GIT-02", "SRC-GIT-03", "SRC-GIT-05", "SRC-GIT-07")
def test_a_git_repository_over_ssh_converges_and_an_unpinned_host_key_is_refused(
    e2e_stack: LocalStack,
) -> None:
    assert e2e_stack.git is not None
    assert e2e_stack.ssh_git is not None
    ssh = e2e_stack.ssh_git
    s = Scenario(e2e_stack)
    repo = e2e_stack.git.create_repo()
    first = repo.commit({f"db/{k}": v for k, v in FIRST.items()}, "first migrations")
    repo.push("main")
    _ssh_secret(s, "deploy-key", ssh.known_hosts_line())
    url = e2e_stack.pod_url(ssh.url_for(repo.name))
    git = {"repository": url, "ref": "main", "path": "db", "secretRef": {"name": "deploy-key"}}
    s.migration(apply="Always", source={"git": git})
    done = s.wait_phase("InSync")
    assert done["source"]["commit"] == first
    assert {"customers", "orders"} <= s.tables()

    # Another namespace and database (one resource per database): a Secret pinning another key.
    other = Scenario(e2e_stack)
    _ssh_secret(other, "wrong-pin", ssh.other_host_key_line())
    wrong = {**git, "secretRef": {"name": "wrong-pin"}}
    other.migration(name="pinned-wrong", apply="Always", source={"git": wrong})
    failed = other.wait(
        lambda st: any(
            c["type"] == "ReconciliationFailed" and c["status"] == "True"
            for c in st.get("conditions") or []
        ),
        "ReconciliationFailed",
        name="pinned-wrong",
    )
    condition = next(c for c in failed["conditions"] if c["type"] == "ReconciliationFailed")
    assert condition["reason"] == "SourceUnreachable"
    assert "(HostKeyNotPinned)" in condition["message"]
    assert "IDENTIFICATION" not in condition["message"]
    assert "source" not in failed or not failed["source"]
