"""The read verbs' own kubeconfig reading and start-up: kubectl's merge rules, the auth forms,
and no Kubernetes client library imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from ptah_operator.cli.kubectl import kubeconfig
from ptah_operator.cli.kubectl.errors import CommandError

REPO = Path(__file__).resolve().parents[3]


def _config(
    path: Path,
    *,
    current: str = "",
    clusters: dict[str, dict[str, object]] | None = None,
    users: dict[str, dict[str, object]] | None = None,
    contexts: dict[str, dict[str, object]] | None = None,
) -> Path:
    data = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "clusters": [{"name": n, "cluster": c} for n, c in (clusters or {}).items()],
        "users": [{"name": n, "user": u} for n, u in (users or {}).items()],
        "contexts": [{"name": n, "context": c} for n, c in (contexts or {}).items()],
    }
    path.write_text(yaml.safe_dump(data))
    return path


def test_kubeconfig_files_are_merged_as_kubectl_merges_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    first = _config(
        tmp_path / "a" / "config",
        current="dev",
        clusters={"c1": {"server": "https://one:6443", "certificate-authority": "ca.crt"}},
        users={"u1": {"tokenFile": "token"}},
        contexts={"dev": {"cluster": "c1", "user": "u1", "namespace": "apps"}},
    )
    (tmp_path / "a" / "token").write_text("first-token\n")
    second = _config(
        tmp_path / "second",
        current="prod",
        clusters={"c1": {"server": "https://ignored:1"}, "c2": {"server": "https://two/"}},
        users={"u1": {"token": "ignored"}, "u2": {"token": "second-token"}},
        contexts={"dev": {"cluster": "c2", "user": "u2"}, "prod": {"cluster": "c2", "user": "u2"}},
    )
    missing = tmp_path / "missing"
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(missing), str(first), str(second)]))

    current = kubeconfig.load(None, None)
    assert current.server == "https://one:6443"
    assert current.namespace == "apps"
    assert current.ca_file == str(tmp_path / "a" / "ca.crt")
    assert current.token == "first-token"

    prod = kubeconfig.load(None, "prod")
    assert (prod.server, prod.namespace, prod.token) == ("https://two", "default", "second-token")

    alone = kubeconfig.load(str(second), None)
    assert (alone.server, alone.token) == ("https://two", "second-token")


def test_an_explicit_kubeconfig_must_exist_and_the_context_must_be_known(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist"):
        kubeconfig.load(str(tmp_path / "nope"), None)
    path = _config(tmp_path / "c", current="x")
    with pytest.raises(CommandError, match="context 'x' does not exist"):
        kubeconfig.load(str(path), None)


def test_client_certificates_as_data_and_basic_auth_are_read(tmp_path: Path) -> None:
    path = _config(
        tmp_path / "c",
        current="x",
        clusters={"k": {"server": "https://h", "certificate-authority-data": "Q0E="}},
        users={
            "u": {"client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZ"},
            "b": {"username": "ann", "password": "pw"},
        },
        contexts={"x": {"cluster": "k", "user": "u"}, "y": {"cluster": "k", "user": "b"}},
    )
    found = kubeconfig.load(str(path), None)
    assert (found.ca_data, found.cert_data, found.key_data) == (b"CA", b"CERT", b"KEY")
    assert kubeconfig.load(str(path), "y").basic == ("ann", "pw")


def test_an_auth_provider_is_refused_in_words(tmp_path: Path) -> None:
    path = _config(
        tmp_path / "c",
        current="x",
        clusters={"k": {"server": "https://h"}},
        users={"u": {"auth-provider": {"name": "oidc", "config": {}}}},
        contexts={"x": {"cluster": "k", "user": "u"}},
    )
    with pytest.raises(CommandError, match=r"auth-provider oidc.*exec credential plugin"):
        kubeconfig.load(str(path), None)


def test_an_exec_plugin_runs_with_its_env_and_gives_its_token(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "cred"
    script.parent.mkdir()
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json, os, sys
            info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
            token = os.environ["PREFIX"] + "-" + sys.argv[1] + "-" + info["apiVersion"]
            print(json.dumps({{"kind": "ExecCredential", "status": {{"token": token}}}}))
            """
        )
    )
    script.chmod(0o755)
    plugin = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": "bin/cred",
        "args": ["arg"],
        "env": [{"name": "PREFIX", "value": "tok"}],
    }
    result = kubeconfig.run_exec(plugin, str(tmp_path))
    assert result.token == "tok-arg-client.authentication.k8s.io/v1"
    failing = {**plugin, "command": "false"}
    with pytest.raises(CommandError, match=r"exec plugin false failed \(exit 1\)"):
        kubeconfig.run_exec(failing, str(tmp_path))
    silent = {**plugin, "command": "true"}
    with pytest.raises(CommandError, match="printed no ExecCredential"):
        kubeconfig.run_exec(silent, str(tmp_path))


def test_the_read_verbs_import_no_kubernetes_client_library(tmp_path: Path) -> None:
    """What made `kubectl ptah migration NAME` take over a second (issue 16): the client
    library and aiohttp imported before anything was read."""
    path = _config(
        tmp_path / "c",
        current="x",
        clusters={"k": {"server": "https://127.0.0.1:9"}},
        users={"u": {"token": "t"}},
        contexts={"x": {"cluster": "k", "user": "u"}},
    )
    probe = textwrap.dedent(
        f"""\
        import asyncio, io, json, sys
        from ptah_operator.cli.kubectl.main import run
        codes = [
            asyncio.run(run([*argv, "--kubeconfig", {str(path)!r}], io.StringIO(), io.StringIO()))
            for argv in (["migration", "m"], ["schema", "s"], ["plan", "schema/s"])
        ]
        from ptah_operator.runtime.lazy_kubernetes import LazyPackage  # (its stand-ins hold nothing)
        heavy = sorted(
            m for m in sys.modules
            if m.split(".")[0] in ("kubernetes_asyncio", "aiohttp")
            and not isinstance(sys.modules[m], LazyPackage)
        )
        print(json.dumps({{"codes": codes, "heavy": heavy[:5]}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    found = json.loads(done.stdout)
    assert found == {"codes": [1, 1, 1], "heavy": []}
