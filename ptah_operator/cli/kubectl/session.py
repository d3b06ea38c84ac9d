"""The writing verbs' connection to the API server, through the Kubernetes client library: the
kubeconfig read as kubectl reads it, the objects read and written, the API server's refusals
made one readable line. What it reads it reads as `reads.Reads` says."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TextIO

from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import GROUP, VERSION, Kind
from ptah_operator.api.kinds import kind_info
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.follow import observe
from ptah_operator.cli.kubectl.lookup import Reads
from ptah_operator.cli.kubectl.lookup import read_model as read_model
from ptah_operator.cli.kubectl.targets import model_of

CONFLICT_RETRIES = 5


def kubeconfig_path(flag: str | None) -> str:
    """--kubeconfig, else $KUBECONFIG (a list, merged), else ~/.kube/config."""
    return flag or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")


async def load_configuration(
    kubeconfig: str | None, context: str | None
) -> tuple[client.Configuration, str]:
    """The client configuration and the context's namespace ("default" when it names none)."""
    path = kubeconfig_path(kubeconfig)
    configuration = client.Configuration()
    try:
        loader = await config.load_kube_config(
            config_file=path,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    except Exception as exc:
        detail = str(exc) or type(exc).__name__
        raise CommandError(f"cannot use the kubeconfig {path}: {detail}") from None
    current = loader.current_context or {}
    namespace = (current.get("context") or {}).get("namespace") or "default"
    return configuration, str(namespace)


def api_message(exc: ApiException) -> str:
    """The API server's own message for a failed request."""
    try:
        body = json.loads(exc.body or "")
    except (TypeError, ValueError):
        body = None
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return f"HTTP {exc.status} {exc.reason or ''}".strip()


@dataclass
class Session(Reads):
    """One connection to the API server, in one namespace, printing to `out`."""

    api: client.ApiClient
    namespace: str
    out: TextIO

    @property
    def custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    async def get(
        self, kind: Kind, name: str, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        info = kind_info(kind)
        try:
            obj: dict[str, Any] = await self.custom.get_namespaced_custom_object(
                GROUP, VERSION, self.namespace, info.plural, name
            )
        except ApiException as exc:
            if exc.status == 404:
                if missing_ok:
                    return None
                raise CommandError(
                    f"{info.singular} {name} not found in namespace {self.namespace}"
                ) from None
            raise CommandError(api_message(exc)) from None
        return obj

    async def merge_patch(self, kind: Kind, name: str, patch: dict[str, Any], failure: str) -> bool:
        """Apply a JSON merge patch; False when the resourceVersion it names is stale (409), so
        the caller reads the object again. Any other refusal raises `{failure}: {message}`."""
        try:
            custom: Any = self.custom  # its stubs do not list _content_type
            await custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                self.namespace,
                kind_info(kind).plural,
                name,
                patch,
                _content_type="application/merge-patch+json",
            )
        except ApiException as exc:
            if exc.status == 409:
                return False
            raise CommandError(f"{failure}: {api_message(exc)}") from None
        return True

    def observe(self, plural: str, name: str) -> AsyncIterator[dict[str, Any] | None]:
        return observe(self.api, plural, self.namespace, name)

    def read_object(self, kind: Kind, obj: dict[str, Any]) -> Any:
        """The writing verbs build objects from what they read: the kind's model."""
        return read_model(model_of(kind), obj)
