"""`make demo`: a PtahMigration, then a PtahSchema, taken to InSync through a person's approval.

On the local stack (a real kube-apiserver, etcd and controller manager; a real node: containerd,
kube-scheduler, a kubelet, kube-proxy and cluster DNS; PostgreSQL; the operator installed in
the cluster from deploy/ as docs/install.md says, two replicas with leader election, its
admission webhooks behind their Service), this applies a ConfigMap of migration files and a PtahMigration, waits
for the plan, shows it, approves it as a person (alice, through `kubectl ptah approve`), waits
for the run and its verification, and shows the resource and the tables the run created.
Then the same for a desired schema on a second database: the operator observes it, publishes a
plan whose SQL `kubectl ptah plan` shows, alice approves that exact plan, and a fresh
no-change plan proves the Apply converged the database (`--migration-only` skips this part).

`--keep` leaves the stack running and prints how to reach it; Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from localstack.controlplane import REPO
from localstack.stack import LocalStack, wait_for

NAMESPACE = "application"
MIGRATIONS = {
    "0000000001_create_customers.up.sql": (
        "CREATE TABLE customers (\n  id bigint PRIMARY KEY,\n  email text NOT NULL UNIQUE\n);\n"
    ),
    "0000000002_create_orders.up.sql": (
        "CREATE TABLE orders (\n  id bigint PRIMARY KEY,\n"
        "  customer_id bigint NOT NULL REFERENCES customers (id),\n"
        "  total_cents bigint NOT NULL CHECK (total_cents >= 0)\n);\n"
        "CREATE INDEX orders_customer ON orders (customer_id);\n"
    ),
}


def say(text: str) -> None:
    print(f"\n\033[1m==> {text}\033[0m", flush=True)


def show(command: list[str], env: dict[str, str] | None = None) -> str:
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    output = (result.stdout + result.stderr).rstrip()
    if output:
        print(output, flush=True)
    if result.returncode != 0:
        raise SystemExit(f"demo: {' '.join(command[:3])} failed ({result.returncode})")
    return result.stdout


DESIRED_SCHEMA = (
    "CREATE TABLE products (\n  id bigint PRIMARY KEY,\n  sku text NOT NULL UNIQUE,\n"
    "  price_cents bigint NOT NULL CHECK (price_cents >= 0)\n);\n"
    "CREATE TABLE stock (\n  product_id bigint PRIMARY KEY REFERENCES products (id),\n"
    "  quantity integer NOT NULL DEFAULT 0\n);\n"
)


def resource(
    stack: LocalStack, kind: str = "ptahmigration", name: str = "orders"
) -> dict[str, Any]:
    out = stack.cp.kubectl("get", kind, name, "-n", NAMESPACE, "-o", "json")
    document: dict[str, Any] = json.loads(out.stdout)
    return document


def phase(stack: LocalStack, kind: str = "ptahmigration", name: str = "orders") -> str:
    return str(resource(stack, kind, name).get("status", {}).get("phase", ""))


def manifests(postgres_url: str) -> str:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "orders-migrations", "namespace": NAMESPACE},
        "data": MIGRATIONS,
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "orders-database", "namespace": NAMESPACE},
        "stringData": {"url": postgres_url},
    }
    resource = {
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahMigration",
        "metadata": {"name": "orders", "namespace": NAMESPACE},
        "spec": {
            "target": {
                "engine": "PostgreSQL",
                "coordinationKey": "demo/orders-primary",
                "urlFrom": {"name": "orders-database", "key": "url"},
            },
            "configMap": {"name": "orders-migrations"},
            "policy": {"apply": "OnApproval"},
        },
    }
    return "\n---\n".join(json.dumps(d) for d in (configmap, secret, resource))


def schema_manifests(postgres_url: str) -> str:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "catalog-schema", "namespace": NAMESPACE},
        "data": {"schema.sql": DESIRED_SCHEMA},
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "catalog-database", "namespace": NAMESPACE},
        "stringData": {"url": postgres_url},
    }
    schema = {
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahSchema",
        "metadata": {"name": "catalog", "namespace": NAMESPACE},
        "spec": {
            "target": {
                "engine": "PostgreSQL",
                "coordinationKey": "demo/catalog-primary",
                "urlFrom": {"name": "catalog-database", "key": "url"},
            },
            "configMap": {"name": "catalog-schema"},
            "scope": {"schemas": ["public"]},
            "policy": {"apply": "OnApproval"},
        },
    }
    return "\n---\n".join(json.dumps(d) for d in (configmap, secret, schema))


def schema_act(stack: LocalStack, kubectl: list[str], plugin: list[str], alice: Path) -> None:
    assert stack.postgres is not None
    show(
        [
            shutil.which("psql") or "psql",
            stack.postgres.admin_url,
            "-q",
            "-c",
            "CREATE DATABASE catalog",
        ]
    )
    say("Now a desired schema: a ConfigMap holding schema.sql, and a PtahSchema")
    stack.cp.kubectl(
        "apply", "-f", "-", input=schema_manifests(stack.pod_url(stack.postgres.url_for("catalog")))
    )
    say("The operator observes the database in a Job, plans in another, and publishes the plan")
    wait_for(
        lambda: phase(stack, "ptahschema", "catalog") in ("AwaitingApproval", "Blocked", "Failed"),
        240,
        "a schema plan",
    )
    show([*kubectl, "get", "ptahschemas", "-n", NAMESPACE])
    show([*plugin, "plan", "schema/catalog", "-n", NAMESPACE])
    if phase(stack, "ptahschema", "catalog") != "AwaitingApproval":
        raise SystemExit("demo: the schema did not reach AwaitingApproval")
    say("alice approves exactly that plan; the Apply runs it, and a fresh plan proves it")
    show(
        [
            str(Path(sys.executable).parent / "kubectl-ptah"),
            f"--kubeconfig={alice}",
            "approve",
            "schema/catalog",
            "-n",
            NAMESPACE,
            "--wait",
        ]
    )
    wait_for(
        lambda: phase(stack, "ptahschema", "catalog") in ("InSync", "Blocked", "Failed"),
        240,
        "the proof",
    )
    show([*plugin, "schema", "catalog", "-n", NAMESPACE])
    show([shutil.which("psql") or "psql", stack.postgres.url_for("catalog"), "-c", r"\dt"])
    final = phase(stack, "ptahschema", "catalog")
    if final != "InSync":
        raise SystemExit(f"demo: the schema ended {final}, not InSync")


def run(keep: bool, workdir: Path, with_schema: bool = True) -> None:
    started = time.monotonic()
    say("Starting the local stack: etcd, kube-apiserver, kube-controller-manager, a node")
    print("    (containerd, kube-scheduler, kubelet, kube-proxy, CoreDNS), PostgreSQL, and the")
    print("    operator installed from deploy/ (this takes a few minutes the first time)")
    with LocalStack(workdir) as stack:
        assert stack.postgres is not None
        kubeconfig = str(stack.cp.kubeconfig)
        kubectl = [str(stack.cp.bindir / "kubectl"), f"--kubeconfig={kubeconfig}"]
        plugin = [str(Path(sys.executable).parent / "kubectl-ptah"), f"--kubeconfig={kubeconfig}"]
        print(f"    ready in {time.monotonic() - started:.0f}s")
        show([*kubectl, "get", "nodes", "-o", "wide"])
        show([*kubectl, "get", "pods", "-n", "ptah-system", "-o", "wide"])

        say("A person with the approver role: alice")
        alice = stack.cp.user_kubeconfig("alice@example.com", ["db-approvers"])
        stack.cp.kubectl("create", "namespace", NAMESPACE)
        stack.cp.kubectl(
            "create",
            "rolebinding",
            "alice-approves",
            "-n",
            NAMESPACE,
            "--clusterrole=ptah-approver",
            "--user=alice@example.com",
        )

        say("Applying the migration files (a ConfigMap), the database Secret and a PtahMigration")
        stack.cp.kubectl(
            "apply", "-f", "-", input=manifests(stack.pod_url(stack.postgres.url_for("postgres")))
        )
        for name in sorted(MIGRATIONS):
            print(f"    {name}")

        say("The operator snapshots the files, reads the revision table in a Job, and plans")
        wait_for(lambda: phase(stack) in ("AwaitingApproval", "Blocked", "Failed"), 180, "a plan")
        show([*kubectl, "get", "ptahmigrations", "-n", NAMESPACE])
        show([*plugin, "migration", "orders", "-n", NAMESPACE])
        if phase(stack) != "AwaitingApproval":
            raise SystemExit("demo: the migration did not reach AwaitingApproval")

        say("alice approves exactly the plan she was shown, and waits for the run")
        show(
            [
                str(Path(sys.executable).parent / "kubectl-ptah"),
                f"--kubeconfig={alice}",
                "approve",
                "migration/orders",
                "-n",
                NAMESPACE,
                "--wait",
            ]
        )
        wait_for(lambda: phase(stack) in ("InSync", "Blocked", "Failed"), 180, "the verdict")

        say("The verdict: read from the revision table again, not from the Job's exit")
        show([*kubectl, "get", "ptahmigrations", "-n", NAMESPACE])
        show([*plugin, "migration", "orders", "-n", NAMESPACE])
        show([*kubectl, "get", "ptahmigrationapprovals,ptahmigrationplans,jobs", "-n", NAMESPACE])
        psql = shutil.which("psql")
        if psql:
            show([psql, stack.postgres.url_for("postgres"), "-c", r"\dt"])
            show(
                [
                    psql,
                    stack.postgres.url_for("postgres"),
                    "-c",
                    "SELECT version, description, execution_millis FROM schema_migrations ORDER BY version",
                ]
            )
        final = phase(stack)
        if final != "InSync":
            raise SystemExit(f"demo: the migration ended {final}, not InSync")
        say(f"InSync, through an approval of the exact plan, in {time.monotonic() - started:.0f}s")
        if with_schema:
            schema_act(stack, kubectl, plugin, alice)
            say(f"Both InSync, {time.monotonic() - started:.0f}s from the start")
        say("Who ran what: the manager's Pods, and the Jobs' Pods the kubelet ran")
        show([*kubectl, "get", "pods", "-A", "-o", "wide"])
        if keep:
            print(f"\n    KUBECONFIG={kubeconfig}")
            if stack.prometheus is not None:
                print(
                    f"    Prometheus (scraping the operator, its alert rules): {stack.prometheus.url}"
                )
            print("    Ctrl-C stops the stack.")
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="leave the stack running")
    parser.add_argument(
        "--migration-only", action="store_true", help="show the PtahMigration path only"
    )
    args = parser.parse_args()
    # A SIGTERM (a CI timeout, `kill`) unwinds like Ctrl-C, so the stack is stopped and removed.
    signal.signal(signal.SIGTERM, _interrupt)
    workdir = Path(tempfile.mkdtemp(prefix="ptah-demo-"))
    os.chdir(REPO)
    try:
        run(args.keep, workdir, with_schema=not args.migration_only)
    except BaseException:
        for log in ("operator-pods.log",):
            path = workdir / log
            if path.exists():
                lines = path.read_text(errors="replace").splitlines()[-40:]
                print(f"\n--- last lines of {log} ---\n" + "\n".join(lines), file=sys.stderr)
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
