"""What a person does with a PtahMigration, as small verbs, so a scenario reads as a story.

Each `Scenario` owns one namespace of the end-to-end stack and one fresh database, so
scenarios do not see each other. Nothing here fakes anything: kubectl and kubectl ptah run as
processes, SQL goes to the real server through its own client (psql, mariadb), and waits poll
what the API server says.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from localstack.stack import LocalStack

PLUGIN = str(Path(sys.executable).parent / "kubectl-ptah")


class Scenario:
    resource = "ptahmigration"
    """The kind's resource name for kubectl."""
    noun = "migration"
    """The kind as `kubectl ptah` names it (migration/NAME, schema/NAME)."""

    def __init__(
        self, stack: LocalStack, engine: str = "PostgreSQL", database: str | None = None
    ) -> None:
        """`database`: share another scenario's database (one physical database addressed
        from two namespaces) instead of creating a fresh one."""
        self.stack = stack
        self.engine = engine
        self.namespace = "s-" + secrets.token_hex(4)
        self.database = database or "d_" + secrets.token_hex(4)
        stack.cp.kubectl("create", "namespace", self.namespace)
        if database is None:
            self.sql(f"CREATE DATABASE {self.database}", admin=True)
        self.approver = stack.cp.user_kubeconfig("alice@example.com", ["db-approvers"])
        stack.cp.kubectl(
            "create",
            "rolebinding",
            "alice-approves",
            "-n",
            self.namespace,
            "--clusterrole=ptah-approver",
            "--user=alice@example.com",
        )

    # -- the database, as a person at a SQL prompt ---------------------------------------

    @property
    def url(self) -> str:
        server = self.stack.postgres if self.engine == "PostgreSQL" else self.stack.mariadb
        assert server is not None
        return server.url_for(self.database)

    def sql(self, statement: str, admin: bool = False) -> str:
        if self.engine == "PostgreSQL":
            assert self.stack.postgres is not None
            url = self.stack.postgres.admin_url if admin else self.url
            argv = [
                shutil.which("psql") or "psql",
                url,
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                statement,
            ]
        else:
            assert self.stack.mariadb is not None
            client = shutil.which("mariadb") or "mysql"
            argv = [
                client,
                "--no-defaults",
                "-h",
                "127.0.0.1",
                "-P",
                str(self.stack.mariadb.port),
                "-u",
                "root",
                "-N",
                "-B",
                *([] if admin else [self.database]),
                "-e",
                statement,
            ]
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise AssertionError(f"SQL failed: {result.stderr.strip()}")
        return result.stdout.strip()

    def tables(self) -> set[str]:
        if self.engine == "PostgreSQL":
            out = self.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        else:
            out = self.sql("SHOW TABLES")
        return {line for line in out.splitlines() if line}

    # -- kubectl ---------------------------------------------------------------------------

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return self.stack.cp.kubectl(*args, "-n", self.namespace, input=input, check=check)

    def plugin(
        self, *args: str, kubeconfig: Path | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        argv = [
            PLUGIN,
            f"--kubeconfig={kubeconfig or self.stack.cp.kubeconfig}",
            *args,
            "-n",
            self.namespace,
        ]
        result = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl ptah {' '.join(args)} failed: {result.stdout}{result.stderr}"
            )
        return result

    def apply(self, *documents: Mapping[str, Any]) -> None:
        self.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(d) for d in documents))

    def migrations(self, files: Mapping[str, str], name: str = "migrations") -> None:
        """The migration directory, as a ConfigMap a person applies."""
        self.apply(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name},
                "data": dict(files),
            }
        )

    def migration(
        self,
        name: str = "orders",
        apply: str = "OnApproval",
        *,
        url: str | None = None,
        target: Mapping[str, Any] | None = None,
        source: Mapping[str, Any] | None = None,
        **spec: Any,
    ) -> None:
        """The resource and the Secret holding its database URL (`url`, default this
        scenario's database); `target` adds to or overrides spec.target; `source` replaces
        the ConfigMap source (`{"git": {...}}` or `{"artifact": {...}}`)."""
        self.apply(
            self.database_secret(name, url or self.url),
            {
                "apiVersion": "operator.ptah.run/v1alpha1",
                "kind": "PtahMigration",
                "metadata": {"name": name},
                "spec": {
                    "target": {
                        "engine": self.engine,
                        "coordinationKey": f"{self.namespace}/{self.database}",
                        "urlFrom": {"name": f"{name}-database", "key": "url"},
                        **(target or {}),
                    },
                    **(source or {"configMap": {"name": "migrations"}}),
                    "policy": {"apply": apply},
                    **spec,
                },
            },
        )

    def database_secret(self, name: str, url: str) -> dict[str, Any]:
        """The Secret of a database URL as the Jobs' Pods reach it (`url` names the host's
        loopback, where a person's psql reaches the server)."""
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{name}-database"},
            "stringData": {"url": self.stack.pod_url(url)},
        }

    def get(self, name: str = "orders") -> dict[str, Any]:
        document: dict[str, Any] = json.loads(
            self.kubectl("get", self.resource, name, "-o", "json").stdout
        )
        return document

    def status(self, name: str = "orders") -> dict[str, Any]:
        status: dict[str, Any] = self.get(name).get("status") or {}
        return status

    def condition(self, type_: str, name: str = "orders") -> dict[str, Any]:
        for condition in self.status(name).get("conditions") or []:
            if condition["type"] == type_:
                return dict(condition)
        return {}

    def wait(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        what: str,
        name: str = "orders",
        timeout: float = 180,
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status = self.status(name)
            if predicate(status):
                return status
            time.sleep(0.5)
        raise AssertionError(
            f"timed out waiting for {what}; status: {json.dumps(status, indent=1)[:4000]}"
        )

    def wait_phase(
        self, *phases: str, name: str = "orders", timeout: float = 180
    ) -> dict[str, Any]:
        return self.wait(
            lambda s: s.get("phase") in phases, f"phase {'/'.join(phases)}", name, timeout
        )

    def approve(self, name: str = "orders", wait: bool = False) -> subprocess.CompletedProcess[str]:
        return self.plugin(
            "approve",
            f"{self.noun}/{name}",
            *(["--wait"] if wait else []),
            kubeconfig=self.approver,
        )

    def request_read(self, name: str = "orders") -> None:
        self.plugin("refresh", f"{self.noun}/{name}")

    def events(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = json.loads(
            self.kubectl("get", "events", "-o", "json").stdout
        )["items"]
        return items

    # -- what ran, and what a person does after a run nobody could account for -------------

    def jobs(self, operation: str | None = None, name: str | None = None) -> list[dict[str, Any]]:
        """The operation Jobs in this namespace now, oldest first: of one operation type
        (Apply, History) and one resource when given."""
        selector = ["app.kubernetes.io/managed-by=ptah-operator"]
        if operation is not None:
            selector.append(f"operator.ptah.run/operation={operation}")
        if name is not None:
            selector.append(f"operator.ptah.run/owner-name={name}")
        items: list[dict[str, Any]] = json.loads(
            self.kubectl("get", "jobs", "-l", ",".join(selector), "-o", "json").stdout
        )["items"]
        return sorted(items, key=lambda j: str(j["metadata"]["creationTimestamp"]))

    def pods_ever_run(self, job_prefix: str) -> list[str]:
        """Every Pod ever made in this namespace for Jobs whose name starts with `job_prefix`,
        deleted ones included."""
        return self.stack.pods_ever_run(self.namespace, job_prefix)

    def acknowledge(
        self, run: Mapping[str, Any], name: str = "orders", ack_name: str = "accounted-for"
    ) -> subprocess.CompletedProcess[str]:
        """A person's PtahMigrationRunAcknowledgment of `run` (status.unresolvedRun), created
        as alice; admission stamps who and when."""
        document = {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahMigrationRunAcknowledgment",
            "metadata": {"name": ack_name},
            "spec": {
                "migrationRef": {"name": name, "uid": self.get(name)["metadata"]["uid"]},
                "operationID": run["operationID"],
                "planRef": {"name": run["plan"]["name"], "uid": run["plan"]["uid"]},
                "jobRef": {"name": run["job"]["name"], "uid": run["job"]["uid"]},
                "outcome": run["outcome"],
            },
        }
        return self.stack.cp.kubectl(
            "create",
            "-n",
            self.namespace,
            "-f",
            "-",
            input=json.dumps(document),
            kubeconfig=self.approver,
            check=False,
        )

    def ptah(self, files: Mapping[str, str], *args: str, table: str | None = None) -> str:
        """`ptah migrations ARGS` as a person runs it against this database, on a directory
        holding `files`; the URL goes through the environment, never the command line."""
        with tempfile.TemporaryDirectory() as tmp:
            for file_name, text in files.items():
                (Path(tmp) / file_name).write_text(text)
            argv = [
                str(Path(sys.executable).parent / "ptah"),
                "migrations",
                *args,
                f"--migrations-dir={tmp}",
                *([f"--revision-table={table}"] if table else []),
            ]
            result = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                check=False,
                env={**os.environ, "PTAH_DB_URL": self.url},
                timeout=120,
            )
        if result.returncode != 0:
            raise AssertionError(
                f"ptah migrations {' '.join(args)}: {result.stderr}{result.stdout}"
            )
        return result.stdout


class SchemaScenario(Scenario):
    """The same person, with a PtahSchema: a desired schema in a ConfigMap instead of a
    migration directory."""

    resource = "ptahschema"
    noun = "schema"

    def desired(self, files: Mapping[str, str], name: str = "desired") -> None:
        """The desired schema files, as a ConfigMap a person applies."""
        self.migrations(files, name)

    def schema(
        self,
        name: str = "orders",
        apply: str = "OnApproval",
        *,
        policy: Mapping[str, Any] | None = None,
        source: Mapping[str, Any] | None = None,
        **spec: Any,
    ) -> None:
        self.apply(
            self.database_secret(name, self.url),
            {
                "apiVersion": "operator.ptah.run/v1alpha1",
                "kind": "PtahSchema",
                "metadata": {"name": name},
                "spec": {
                    "target": {
                        "engine": self.engine,
                        "coordinationKey": f"{self.namespace}/{self.database}",
                        "urlFrom": {"name": f"{name}-database", "key": "url"},
                    },
                    **(source or {"configMap": {"name": "desired"}}),
                    "policy": {"apply": apply, **(policy or {})},
                    **spec,
                },
            },
        )
