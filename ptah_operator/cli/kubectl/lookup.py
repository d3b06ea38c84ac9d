"""What every verb reads, written once over any connection: an object by name, read into its
model; the plan a status names; a schema plan's SQL from its chunks; an object's states.

`Reads` is the part of a session that only reads. Two connections give it `get` and
`observe`: `session.Session` (the Kubernetes client library, which the writing verbs use) and
`rest_session.RestSession` (the small HTTP client the reading verbs use, which starts fast).
`read_object` is how an object is read: the read verbs take a `manifest` view (no pydantic),
and its model only when the view does not take the manifest; `Session` takes the model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from ptah_operator.api.constants import Kind
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.manifest import MismatchError, read_view
from ptah_operator.cli.kubectl.schema_view import PlanText, plan_text
from ptah_operator.cli.kubectl.targets import PlanT, ResourceT, Target, model_of

if TYPE_CHECKING:
    from ptah_operator.api.objectmeta import Resource
    from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk

R = TypeVar("R", bound="Resource")


class Reads:
    """The reading half of a session: a namespace, an output, and `get` and `observe`."""

    namespace: str
    out: TextIO

    async def get(
        self, kind: Kind, name: str, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        """The object's manifest; None when it does not exist and `missing_ok`, else
        CommandError (`{singular} {name} not found in namespace {namespace}`)."""
        raise NotImplementedError

    def observe(self, plural: str, name: str) -> AsyncIterator[dict[str, Any] | None]:
        """The object's states, as listed and then watched (None while it does not exist)."""
        raise NotImplementedError

    def read_object(self, kind: Kind, obj: dict[str, Any]) -> Any:
        """The manifest read: a `manifest` view, or the kind's model when the view does not
        take it (which reads it, or refuses it in one line)."""
        try:
            return read_view(kind.value, obj)
        except MismatchError:
            return read_model(model_of(kind), obj)

    def say(self, text: str) -> None:
        self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()

    async def resource(self, target: Target[ResourceT, Any, Any], name: str) -> ResourceT:
        obj = await self.get(target.kind, name)
        assert obj is not None
        resource: ResourceT = self.read_object(target.kind, obj)
        return resource

    async def plan(
        self, target: Target[Any, Any, PlanT], name: str, uid: str | None
    ) -> PlanT | None:
        """The plan of that name, when it is the object of that UID (if one is given)."""
        obj = await self.get(target.plan_kind, name, missing_ok=True)
        plan: PlanT | None = None if obj is None else self.read_object(target.plan_kind, obj)
        if plan is not None and uid is not None and plan.metadata.uid != uid:
            return None
        return plan

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
            chunks.append(self.read_object(Kind.PTAH_SCHEMA_PLAN_CHUNK, obj))
        return plan_text(plan, chunks)


def read_model(model: type[R], obj: dict[str, Any]) -> R:
    """The manifest read into its model; CommandError when the model refuses it."""
    from pydantic import ValidationError

    from ptah_operator.api.kinds import from_manifest

    try:
        return from_manifest(model, obj)
    except ValidationError as exc:
        places = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors()[:3])
        name = (obj.get("metadata") or {}).get("name")
        raise CommandError(
            f"{obj.get('kind')} {name} has fields this plugin does not understand ({places}); "
            "is the plugin older than the operator?"
        ) from None
