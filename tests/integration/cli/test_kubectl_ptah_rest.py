"""The read verbs over their own HTTP client, against a real API server: the output byte for
byte what the client library's path prints for the same objects, and every auth form a
kubeconfig may hold (client certificate as data or files, token, token file, exec plugin)."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from localstack.controlplane import ControlPlane

from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.main import execute, parse_command, run
from ptah_operator.cli.kubectl.session import Session, load_configuration
from tests.support import schema_objects
from tests.support.migration_objects import awaiting_approval, plan_spec
from tests.support.webhook_stack import (
    create_migration,
    create_namespace,
    create_plan,
    delete_namespace,
    grant,
    ref,
    write_status,
)

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]

READER_RULES = [
    {
        "apiGroups": ["operator.ptah.run"],
        "resources": ["ptahmigrations", "ptahmigrationplans"],
        "verbs": ["get", "list", "watch"],
    }
]


@pytest.fixture
async def namespace(
    crds_installed: ControlPlane, api_client: client.ApiClient
) -> AsyncIterator[str]:
    name = await create_namespace(api_client, "plugin-rest")
    m = await create_migration(api_client, name, "orders")
    p = await create_plan(api_client, name, plan_spec(ref(m)))
    await write_status(api_client, name, "orders", awaiting_approval(p))
    yield name
    await delete_namespace(api_client, name)


async def _new(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


async def _old(*argv: str) -> tuple[int, str, str]:
    """The same command through the client library's session, as every verb ran before."""
    command, args = parse_command(list(argv))
    configuration, context_namespace = await load_configuration(args.kubeconfig, args.context)
    out = io.StringIO()
    async with client.ApiClient(configuration) as api:
        try:
            code = await execute(command, Session(api, args.namespace or context_namespace, out))
        except CommandError as exc:
            return 1, out.getvalue(), f"error: {exc}\n"
    return code, out.getvalue(), ""


def _kubeconfig(path: Path, kube: ControlPlane, user: dict[str, Any]) -> Path:
    admin = yaml.safe_load(kube.kubeconfig.read_text())
    admin["users"] = [{"name": "reader", "user": user}]
    admin["contexts"][0]["context"]["user"] = "reader"
    path.write_text(yaml.safe_dump(admin))
    return path


async def _service_account_token(api: client.ApiClient, namespace: str) -> str:
    core: Any = client.CoreV1Api(api)
    await core.create_namespaced_service_account(namespace, {"metadata": {"name": "reader"}})
    await grant(api, namespace, f"system:serviceaccount:{namespace}:reader", READER_RULES)
    request: Any = {"spec": {"audiences": [], "expirationSeconds": 600}}
    for _ in range(50):
        try:
            answer = await core.create_namespaced_service_account_token(
                "reader", namespace, request
            )
            return str(answer.status.token)
        except client.ApiException as exc:
            if exc.status != 404:
                raise
            await asyncio.sleep(0.2)
    raise AssertionError("no token for the ServiceAccount")


@pytest.mark.req("PLUGIN-04", "PLUGIN-02")
async def test_the_read_verbs_print_what_the_client_library_path_printed(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    schema_plan = await schema_objects.create_schema(api_client, namespace, "catalog")
    spec = schema_objects.schema_plan_spec(ref(schema_plan), chunks=2)
    plan = await schema_objects.create_schema_plan(api_client, namespace, spec, "catalog-plan")
    await schema_objects.create_chunks(
        api_client, namespace, plan, schema_objects.plan_pieces(spec)
    )
    await schema_objects.write_schema_status(
        api_client, namespace, "catalog", schema_objects.awaiting_approval(plan)
    )
    admin = ("-n", namespace, "--kubeconfig", str(kube.kubeconfig))
    for argv in (
        ("migration", "orders"),
        ("plan", "migration/orders"),
        ("schema", "catalog"),
        ("plan", "schema/catalog"),
        ("plan", "schema/catalog", "--no-sql"),
        ("wait", "migration/orders", "--for=AwaitingApproval"),
        ("migration", "absent"),
    ):
        assert await _new(*argv, *admin) == await _old(*argv, *admin), argv


async def test_a_client_certificate_in_files_and_the_namespace_of_the_context(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane, tmp_path: Path
) -> None:
    assert kube.ca is not None
    pair = kube.ca.issue("user-reader", "reader@example.com", client=True)
    await grant(api_client, namespace, "reader@example.com", READER_RULES)
    path = _kubeconfig(
        tmp_path / "config",
        kube,
        {"client-certificate": str(pair.cert_path), "client-key": str(pair.key_path)},
    )
    config = yaml.safe_load(path.read_text())
    config["contexts"][0]["context"]["namespace"] = namespace
    path.write_text(yaml.safe_dump(config))
    code, out, err = await _new("migration", "orders", "--kubeconfig", str(path))
    assert (code, err) == (0, "")
    assert "Phase:            AwaitingApproval" in out


async def test_a_token_a_token_file_and_an_exec_plugin_authenticate(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane, tmp_path: Path
) -> None:
    token = await _service_account_token(api_client, namespace)
    (tmp_path / "token").write_text(token + "\n")
    script = tmp_path / "credential"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json
            print(json.dumps({{
                "apiVersion": "client.authentication.k8s.io/v1",
                "kind": "ExecCredential",
                "status": {{"token": open({str(tmp_path / "token")!r}).read().strip()}},
            }}))
            """
        )
    )
    script.chmod(0o755)
    users: dict[str, dict[str, Any]] = {
        "token": {"token": token},
        "token-file": {"tokenFile": "token"},
        "exec": {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": str(script),
                "interactiveMode": "Never",
            }
        },
    }
    for form, user in users.items():
        path = _kubeconfig(tmp_path / f"{form}.kubeconfig", kube, user)
        code, out, err = await _new(
            "migration", "orders", "-n", namespace, "--kubeconfig", str(path)
        )
        assert (code, err) == (0, ""), form
        assert "Phase:            AwaitingApproval" in out, form
    wrong = _kubeconfig(tmp_path / "wrong.kubeconfig", kube, {"token": "not-a-token"})
    code, out, err = await _new("migration", "orders", "-n", namespace, "--kubeconfig", str(wrong))
    assert (code, out, err) == (1, "", "error: Unauthorized\n")


async def test_an_exec_plugin_may_give_a_client_certificate(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane, tmp_path: Path
) -> None:
    assert kube.ca is not None
    pair = kube.ca.issue("user-exec", "exec@example.com", client=True)
    await grant(api_client, namespace, "exec@example.com", READER_RULES)
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {
            "clientCertificateData": pair.cert_pem.decode(),
            "clientKeyData": pair.key_path.read_text(),
        },
    }
    (tmp_path / "credential.json").write_text(json.dumps(credential))
    exec_user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "cat",
            "args": [str(tmp_path / "credential.json")],
        }
    }
    path = _kubeconfig(tmp_path / "config", kube, exec_user)
    code, out, err = await _new(
        "plan", "migration/orders", "-n", namespace, "--kubeconfig", str(path)
    )
    assert (code, err) == (0, "")
    assert out.startswith("Plan ")


async def test_kubectl_completes_the_plugin_through_kubectl_complete_ptah(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane, tmp_path: Path
) -> None:
    """kubectl itself finds `kubectl_complete-ptah` on PATH (beside `kubectl-ptah`) and relays
    its answer: the names come from the API server."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, module in (
        ("kubectl-ptah", "ptah_operator.cli.kubectl.main"),
        ("kubectl_complete-ptah", "ptah_operator.cli.kubectl.complete"),
    ):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec {sys.executable} -m {module} "$@"\n')
        script.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "HOME": str(tmp_path),
    }

    async def complete(*words: str) -> list[str]:
        argv = [str(kube.bindir / "kubectl"), "__complete", "ptah", *words]
        done = await asyncio.to_thread(
            subprocess.run, argv, capture_output=True, text=True, env=env, check=True, timeout=60
        )
        return done.stdout.splitlines()

    kubeconfig = f"--kubeconfig={kube.kubeconfig}"
    lines = await complete("")
    assert "migration\tshow a PtahMigration's status" in lines
    assert lines[-1] == ":4"
    assert await complete("migration", "-n", namespace, kubeconfig, "or") == ["orders", ":4"]
    assert await complete("approve", "-n", namespace, kubeconfig, "migration/") == [
        "migration/orders",
        ":4",
    ]
    assert (await complete("approve", ""))[-1] == ":6"
