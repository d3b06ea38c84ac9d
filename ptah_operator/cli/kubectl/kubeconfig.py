"""The kubeconfig read as kubectl reads it, without a Kubernetes client library.

Which files: `--kubeconfig` alone when given; else every file `$KUBECONFIG` lists (missing ones
skipped), merged as kubectl merges them: the first file to name a cluster, user or context
gives it, and the first to set current-context sets it; else `~/.kube/config`. Paths inside a
file (certificate files, token files, an exec plugin's command) are relative to that file.

What a user may hold: a client certificate and key (files or data), a bearer token (or a token
file), a user name and password, or an exec credential plugin (client.authentication.k8s.io
v1 or v1beta1; its token or client certificate). The legacy auth-provider entries are refused
with a message saying so. Nothing here reads or prints a credential beyond handing it to the
connection.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ptah_operator.cli.kubectl.errors import CommandError

ExecInfo = Mapping[str, Any]


@dataclass(frozen=True)
class Credentials:
    """What a connection needs: where the server is, how to trust it, who we are."""

    server: str
    namespace: str
    ca_file: str | None = None
    ca_data: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    cert_data: bytes | None = None
    key_data: bytes | None = None
    token: str | None = None
    basic: tuple[str, str] | None = None
    exec_plugin: ExecInfo | None = field(default=None, repr=False)
    exec_base: str = ""
    """The directory a relative exec command is found from (the kubeconfig's)."""


def kubeconfig_files(flag: str | None) -> list[Path]:
    """--kubeconfig, else the files $KUBECONFIG lists, else ~/.kube/config."""
    if flag:
        return [Path(flag)]
    listed = os.environ.get("KUBECONFIG")
    if listed:
        return [Path(p) for p in listed.split(os.pathsep) if p]
    return [Path(os.path.expanduser("~/.kube/config"))]


def _read(path: Path) -> dict[str, Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(path.read_text(), Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise CommandError(
            f"cannot use the kubeconfig {path}: not YAML ({type(exc).__name__})"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CommandError(f"cannot use the kubeconfig {path}: not a kubeconfig")
    return data


def _absolute(base: Path, entry: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """The entry with the paths it names made absolute from `base`."""
    out = dict(entry)
    for key in keys:
        value = out.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            out[key] = str(base / os.path.expanduser(value))
    return out


_CLUSTER_PATHS = ("certificate-authority",)
_USER_PATHS = ("client-certificate", "client-key", "tokenFile")


@dataclass
class Merged:
    """Every file's entries, the first of each name kept."""

    clusters: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    current_context: str = ""
    exec_bases: dict[str, str] = field(default_factory=dict)


def merge(files: Sequence[Path], explicit: bool) -> Merged:
    merged = Merged()
    found = False
    for path in files:
        if not path.exists():
            if explicit:
                raise CommandError(f"cannot use the kubeconfig {path}: it does not exist")
            continue
        found = True
        data = _read(path)
        base = path.resolve().parent
        for entry in data.get("clusters") or []:
            name = entry.get("name")
            if name and name not in merged.clusters:
                merged.clusters[name] = _absolute(base, entry.get("cluster") or {}, _CLUSTER_PATHS)
        for entry in data.get("users") or []:
            name = entry.get("name")
            if name and name not in merged.users:
                merged.users[name] = _absolute(base, entry.get("user") or {}, _USER_PATHS)
                merged.exec_bases[name] = str(base)
        for entry in data.get("contexts") or []:
            name = entry.get("name")
            if name and name not in merged.contexts:
                merged.contexts[name] = dict(entry.get("context") or {})
        if not merged.current_context and data.get("current-context"):
            merged.current_context = str(data["current-context"])
    if not found:
        where = ", ".join(str(p) for p in files)
        raise CommandError(f"cannot use the kubeconfig {where}: no such file")
    return merged


def _data(value: Any, what: str) -> bytes | None:
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=False)
    except ValueError:
        raise CommandError(f"the kubeconfig's {what} is not base64") from None


def load(flag: str | None, context: str | None) -> Credentials:
    """The credentials of `context` (else the current context) in the kubeconfig `flag` names
    (else $KUBECONFIG's files merged, else ~/.kube/config)."""
    files = kubeconfig_files(flag)
    merged = merge(files, explicit=bool(flag))
    where = str(files[0]) if len(files) == 1 else os.pathsep.join(str(f) for f in files)
    name = context or merged.current_context
    if not name:
        raise CommandError(f"cannot use the kubeconfig {where}: no context is set (--context)")
    ctx = merged.contexts.get(name)
    if ctx is None:
        raise CommandError(f"cannot use the kubeconfig {where}: context {name!r} does not exist")
    cluster = merged.clusters.get(str(ctx.get("cluster") or ""))
    if cluster is None or not cluster.get("server"):
        raise CommandError(
            f"cannot use the kubeconfig {where}: context {name!r} names no cluster with a server"
        )
    user_name = str(ctx.get("user") or "")
    user = merged.users.get(user_name, {})
    if user.get("auth-provider"):
        provider = (user["auth-provider"] or {}).get("name") or "?"
        raise CommandError(
            f"the kubeconfig's user {user_name!r} uses auth-provider {provider}, which this "
            "plugin does not support; use an exec credential plugin"
        )
    token = user.get("token") or None
    token_file = user.get("tokenFile")
    if not token and token_file:
        try:
            token = Path(token_file).read_text().strip()
        except OSError as exc:
            raise CommandError(f"cannot read the token file {token_file}: {exc.strerror}") from None
    basic = None
    if user.get("username") and user.get("password") is not None:
        basic = (str(user["username"]), str(user["password"]))
    return Credentials(
        server=str(cluster["server"]).rstrip("/"),
        namespace=str(ctx.get("namespace") or "default"),
        ca_file=cluster.get("certificate-authority") or None,
        ca_data=_data(cluster.get("certificate-authority-data"), "certificate-authority-data"),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        tls_server_name=cluster.get("tls-server-name") or None,
        cert_file=user.get("client-certificate") or None,
        key_file=user.get("client-key") or None,
        cert_data=_data(user.get("client-certificate-data"), "client-certificate-data"),
        key_data=_data(user.get("client-key-data"), "client-key-data"),
        token=token,
        basic=basic,
        exec_plugin=user.get("exec") or None,
        exec_base=merged.exec_bases.get(user_name, ""),
    )


@dataclass(frozen=True)
class ExecResult:
    token: str | None
    cert_data: bytes | None
    key_data: bytes | None


def run_exec(plugin: ExecInfo, base: str) -> ExecResult:
    """Run an exec credential plugin as kubectl does and read its ExecCredential."""
    import subprocess

    api_version = str(plugin.get("apiVersion") or "client.authentication.k8s.io/v1")
    command = str(plugin.get("command") or "")
    if not command:
        raise CommandError("the kubeconfig's exec plugin names no command")
    if os.sep in command and not os.path.isabs(command) and base:
        command = os.path.join(base, command)
    env = dict(os.environ)
    for item in plugin.get("env") or []:
        env[str(item.get("name"))] = str(item.get("value") or "")
    info = {"apiVersion": api_version, "kind": "ExecCredential", "spec": {"interactive": False}}
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    argv = [command, *[str(a) for a in plugin.get("args") or []]]
    try:
        done = subprocess.run(
            argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False
        )
    except OSError as exc:
        raise CommandError(f"the exec plugin {command} could not run: {exc.strerror}") from None
    if done.returncode != 0:
        raise CommandError(f"the exec plugin {command} failed (exit {done.returncode})")
    try:
        status = json.loads(done.stdout).get("status") or {}
    except (ValueError, AttributeError):
        raise CommandError(f"the exec plugin {command} printed no ExecCredential") from None
    cert = status.get("clientCertificateData")
    key = status.get("clientKeyData")
    token = status.get("token")
    if not token and not (cert and key):
        raise CommandError(f"the exec plugin {command} gave neither a token nor a certificate")
    return ExecResult(
        token or None,
        cert.encode() if cert else None,
        key.encode() if key else None,
    )
