"""One connection to the API server: the kubeconfig read as kubectl reads it, the objects
read into their models, the API server's refusals made one readable line."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException
from pydantic import ValidationError

from ptah_operator.api.constants import GROUP, VERSION, Kind
from ptah_operator.api.kinds import from_manifest, kind_info
from ptah_operator.api.objectmeta import Resource
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.schema_view import PlanText, plan_text
from ptah_operator.cli.kubectl.targets import PlanT, ResourceT, Target

CONFLICT_RETRIES = 5

R = TypeVar("R", bound=Resource)


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
class Session:
    """One connection to the API server, in one namespace, printing to `out`."""

    api: client.ApiClient
    namespace: str
    out: TextIO

    @property
    def custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    def say(self, text: str) -> None:
        self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()

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

    async def resource(self, target: Target[ResourceT, Any, Any], name: str) -> ResourceT:
        obj = await self.get(target.kind, name)
        assert obj is not None
        return read_model(target.model, obj)

    async def plan(
        self, target: Target[Any, Any, PlanT], name: str, uid: str | None
    ) -> PlanT | None:
        """The plan of that name, when it is the object of that UID (if one is given)."""
        obj = await self.get(kind_info(target.plan_model).kind, name, missing_ok=True)
        plan = None if obj is None else read_model(target.plan_model, obj)
        if plan is not None and uid is not None and plan.metadata.uid != uid:
            return None
        return plan

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

    async def plan_text(self, plan: PtahSchemaPlan) -> PlanText:
        """The plan's SQL from its chunks, checked against its digests."""
        chunks: list[PtahSchemaPlanChunk] = []
        for ref in plan.spec.chunks:
            try:
                obj = await self.get(Kind.PTAH_SCHEMA_PLAN_CHUNK, ref.name, missing_ok=True)
            except CommandError as exc:
                return PlanText(None, f"chunk {ref.name} could not be read: {exc}")
            if obj is None:
                return PlanText(None, f"chunk {ref.name} does not exist")
            chunks.append(read_model(PtahSchemaPlanChunk, obj))
        return plan_text(plan, chunks)


def read_model(model: type[R], obj: dict[str, Any]) -> R:
    try:
        return from_manifest(model, obj)
    except ValidationError as exc:
        places = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors()[:3])
        name = (obj.get("metadata") or {}).get("name")
        raise CommandError(
            f"{obj.get('kind')} {name} has fields this plugin does not understand ({places}); "
            "is the plugin older than the operator?"
        ) from None
