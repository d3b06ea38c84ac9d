"""The admission webhooks as aiohttp routes, speaking AdmissionReview v1.

Contract:
- `POST /mutate/approvals`: on CREATE of PtahMigrationApproval and PtahSchemaApproval, a
  JSONPatch that sets `spec.approvedBy` {username, uid, groups} from `request.userInfo` and
  `spec.approvedAt` (now, RFC 3339 Z), replacing whatever the client sent (APR-04); for
  PtahMigrationRunAcknowledgment the same with `acknowledgedBy` / `acknowledgedAt`. A replaced
  value earns a warning kubectl prints. A request without a user is refused. An approval that
  names no `spec.planOperationID` gets the publication its resource's status.plan records, read
  fresh, when status.plan is the plan it names (APR-12); a resource that cannot be read leaves
  it absent, for the validating webhook to judge.
- `POST /validate/approvals`: on CREATE of the same kinds, allowed when the kind's validator
  (`validators.VALIDATORS`, one per kind, as controller-runtime's CustomValidator) finds nothing;
  otherwise refused (code 403) with one message naming every reason. A finding made on a cached
  read is checked again on a fresh one before refusing. An object that cannot be read is a
  refusal with code 500: the configuration's failurePolicy is Fail either way.
- `POST /mutate/resources`: on CREATE and UPDATE of PtahMigration and PtahSchema, a JSONPatch
  that records who wrote the spec since its last Apply in the spec-written-by annotation,
  sealed with the manager's key (writers.py: the authenticated user added on a write that
  changes the spec, the stored record on any other); a request without a user is refused. The
  approvals' validating webhook opens it under `spec.policy.requireDistinctApprover`.
- `POST /validate/resources`: on CREATE and UPDATE of PtahMigration and PtahSchema, refused
  (code 403) when the write sets a `spec.execution.image` (new, or changed) that is not pinned
  to a digest the manager allows (its runner's and `--allowed-runner-images`; issue #18), or
  a `spec.git.secretRef` / `spec.artifact.secretRef` (new, or moved to another host) whose
  repository or registry host is not on `--allowed-source-hosts` (api/source_hosts.py). The
  message names the field and the rule, never the reference, the host or the Secret.
- Anything else (another operation or kind) is allowed unchanged. A body that is not an
  AdmissionReview v1 answers 400. Both routes share that generic handling (`_handle`).

`add_routes(app, lookup)` puts both routes on an existing application (the manager's HTTPS
server); `build_app(lookup)` makes an application with nothing else.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, Container, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypeVar

import structlog
from aiohttp import web
from pydantic import ValidationError

from ptah_operator.api import images, source_hosts
from ptah_operator.api.common import PublishedPlan
from ptah_operator.api.constants import Kind
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.objectmeta import Resource
from ptah_operator.api.schema import PtahSchema
from ptah_operator.webhook.lookup import ObjectLookup, ObjectReadError
from ptah_operator.webhook.stamps import (
    PLAN_OWNER_FIELDS,
    STAMPED_KINDS,
    UnauthenticatedError,
    publication_patch,
    stamp,
    user_from_request,
)
from ptah_operator.webhook.validators import VALIDATORS, Finding, refusal_message, validators
from ptah_operator.webhook.writers import RECORDED_KINDS, WriterSeal, writer_patch

log = structlog.get_logger(__name__)

MUTATE_PATH: Final = "/mutate/approvals"
MUTATE_RESOURCES_PATH: Final = "/mutate/resources"
VALIDATE_PATH: Final = "/validate/approvals"
VALIDATE_RESOURCES_PATH: Final = "/validate/resources"
ADMISSION_API_VERSION: Final = "admission.k8s.io/v1"

R = TypeVar("R", bound=Resource)


@dataclass(frozen=True)
class Review:
    """What one admission review decided, for whoever counts them (metrics)."""

    webhook: Literal["mutate", "validate"]
    kind: str
    namespace: str
    allowed: bool
    codes: tuple[str, ...] = ()


ReviewObserver = Callable[[Review], None]


class BadReviewError(ValueError):
    """The body is not an AdmissionReview v1 request."""


@dataclass(frozen=True)
class AdmissionRequest:
    """The parts of `request` the webhooks read."""

    uid: str
    kind: str
    operation: str
    namespace: str
    object: Mapping[str, Any]
    user_info: Mapping[str, Any]
    old_object: Mapping[str, Any] | None = None


def parse_review(body: Any) -> AdmissionRequest:
    """Read an AdmissionReview v1 body; raise `BadReviewError` for anything else."""
    if not isinstance(body, Mapping) or body.get("apiVersion") != ADMISSION_API_VERSION:
        raise BadReviewError("expected an AdmissionReview of admission.k8s.io/v1")
    request = body.get("request")
    if not isinstance(request, Mapping) or not isinstance(request.get("uid"), str):
        raise BadReviewError("the AdmissionReview has no request with a uid")
    kind = request.get("kind") or {}
    obj = request.get("object") or {}
    old = request.get("oldObject")
    namespace = request.get("namespace") or (obj.get("metadata") or {}).get("namespace") or ""
    return AdmissionRequest(
        uid=request["uid"],
        kind=str(kind.get("kind") or "") if isinstance(kind, Mapping) else "",
        operation=str(request.get("operation") or ""),
        namespace=str(namespace),
        object=obj if isinstance(obj, Mapping) else {},
        user_info=request.get("userInfo") or {},
        old_object=old if isinstance(old, Mapping) else None,
    )


def review_response(
    uid: str,
    allowed: bool,
    *,
    message: str | None = None,
    code: int = 403,
    patch: list[dict[str, Any]] | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The AdmissionReview v1 answer."""
    response: dict[str, Any] = {"uid": uid, "allowed": allowed}
    if not allowed:
        response["status"] = {
            "status": "Failure",
            "code": code,
            "reason": "Forbidden" if code == 403 else "InternalError",
            "message": message or "refused",
        }
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(patch).encode("utf-8")).decode("ascii")
    if warnings:
        response["warnings"] = warnings
    return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview", "response": response}


def _validation_summary(error: ValidationError) -> str:
    """Where a manifest does not fit its model, by field path; never the values."""
    places = [".".join(str(part) for part in e["loc"]) or "(root)" for e in error.errors()]
    shown = ", ".join(places[:5])
    more = f" and {len(places) - 5} more" if len(places) > 5 else ""
    return f"fields that do not fit the API: {shown}{more}"


def _execution_image(obj: Mapping[str, Any]) -> str | None:
    """spec.execution.image of a raw resource, or None (read raw: the check must not depend on
    the rest of the object fitting its model)."""
    spec = obj.get("spec")
    execution = spec.get("execution") if isinstance(spec, Mapping) else None
    image = execution.get("image") if isinstance(execution, Mapping) else None
    return image if isinstance(image, str) else None


def _source_credential(obj: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """The secretRef field a raw resource's source names and the host it would go to."""
    spec = obj.get("spec")
    return source_hosts.credential_host(spec) if isinstance(spec, Mapping) else None


def _codes(refused: images.ImageRefusal | None) -> tuple[str, ...]:
    return () if refused is None else (refused.value,)


class ApprovalWebhooks:
    """The two handlers, sharing one lookup, one clock and one observer."""

    def __init__(
        self,
        lookup: ObjectLookup,
        *,
        now: Callable[[], datetime] | None = None,
        observer: ReviewObserver | None = None,
        seal: WriterSeal | None = None,
        allowed_images: frozenset[str] = frozenset(),
        allowed_source_hosts: frozenset[str] = frozenset(),
    ) -> None:
        self._lookup = lookup
        self._allowed_images = allowed_images
        self._allowed_source_hosts = allowed_source_hosts
        self._now = now or (lambda: datetime.now(UTC))
        self._observer = observer
        self._seal = seal or WriterSeal()
        self._validators = validators(self._seal)

    def _observe(self, review: Review) -> None:
        log.info(
            "admission review",
            webhook=review.webhook,
            kind=review.kind,
            namespace=review.namespace,
            allowed=review.allowed,
            codes=list(review.codes),
        )
        if self._observer is not None:
            self._observer(review)

    async def _body(self, request: web.Request) -> AdmissionRequest:
        try:
            body = await request.json()
        except ValueError as exc:
            raise BadReviewError("the body is not JSON") from exc
        return parse_review(body)

    async def _handle(
        self,
        request: web.Request,
        kinds: Container[str],
        decide: Callable[[AdmissionRequest], Awaitable[dict[str, Any]]],
        operations: Container[str] = ("CREATE",),
    ) -> web.Response:
        """The generic handler: a body that is no AdmissionReview answers 400, another
        operation or kind is allowed unchanged, and `decide` answers the rest."""
        try:
            req = await self._body(request)
        except BadReviewError as exc:
            return web.Response(status=400, text=str(exc))
        if req.operation not in operations or req.kind not in kinds:
            return web.json_response(review_response(req.uid, True))
        return web.json_response(await decide(req))

    async def mutate(self, request: web.Request) -> web.Response:
        return await self._handle(request, STAMPED_KINDS, self._mutate)

    async def mutate_resources(self, request: web.Request) -> web.Response:
        return await self._handle(
            request, RECORDED_KINDS, self._record_writer, operations=("CREATE", "UPDATE")
        )

    async def validate(self, request: web.Request) -> web.Response:
        return await self._handle(request, VALIDATORS, self._validate)

    async def validate_resources(self, request: web.Request) -> web.Response:
        return await self._handle(
            request, RECORDED_KINDS, self._check_image, operations=("CREATE", "UPDATE")
        )

    async def _check_image(self, req: AdmissionRequest) -> dict[str, Any]:
        credential = _source_credential(req.object)
        if credential is not None and credential != _source_credential(req.old_object or {}):
            field, host = credential
            code = source_hosts.refusal(host, self._allowed_source_hosts)
            if code is not None:
                self._observe(Review("validate", req.kind, req.namespace, False, (code.value,)))
                message = f"{req.kind} refused: {source_hosts.refusal_words(field, code)}"
                return review_response(req.uid, False, message=message)
        image = _execution_image(req.object)
        if image is None or image == _execution_image(req.old_object or {}):
            return review_response(req.uid, True)
        refused = images.refusal(image, self._allowed_images)
        self._observe(Review("validate", req.kind, req.namespace, refused is None, _codes(refused)))
        if refused is None:
            return review_response(req.uid, True)
        message = f"{req.kind} refused: {images.refusal_words(refused)}"
        return review_response(req.uid, False, message=message)

    async def _mutate(self, req: AdmissionRequest) -> dict[str, Any]:
        try:
            user = user_from_request(req.user_info)
        except (UnauthenticatedError, ValidationError):
            self._observe(Review("mutate", req.kind, req.namespace, False, ("Unauthenticated",)))
            message = f"{req.kind} refused: the request carries no authenticated user to record"
            return review_response(req.uid, False, message=message)
        result = stamp(req.kind, req.object, user, self._now())
        patch = result.patch + publication_patch(req.object, await self._current_plan(req))
        self._observe(Review("mutate", req.kind, req.namespace, True))
        return review_response(req.uid, True, patch=patch, warnings=result.warnings)

    async def _record_writer(self, req: AdmissionRequest) -> dict[str, Any]:
        try:
            user = user_from_request(req.user_info)
        except (UnauthenticatedError, ValidationError):
            self._observe(Review("mutate", req.kind, req.namespace, False, ("Unauthenticated",)))
            message = f"{req.kind} refused: the request carries no authenticated user to record"
            return review_response(req.uid, False, message=message)
        patch = writer_patch(
            req.operation, req.kind, req.namespace, req.object, req.old_object, user, self._seal
        )
        self._observe(Review("mutate", req.kind, req.namespace, True))
        return review_response(req.uid, True, patch=patch)

    async def _current_plan(self, req: AdmissionRequest) -> PublishedPlan | None:
        """status.plan of the resource an approval names, read fresh; None when it has none or
        cannot be read."""
        field = PLAN_OWNER_FIELDS.get(req.kind)
        spec = req.object.get("spec")
        named = spec.get(field) if field is not None and isinstance(spec, Mapping) else None
        name = named.get("name") if isinstance(named, Mapping) else None
        if not isinstance(name, str) or not name:
            return None
        model: type[PtahMigration] | type[PtahSchema] = (
            PtahMigration if field == "migrationRef" else PtahSchema
        )
        kind = Kind.PTAH_MIGRATION if model is PtahMigration else Kind.PTAH_SCHEMA
        try:
            resource = await self._read(kind, model, req.namespace, name, True)
        except ObjectReadError:
            return None
        status = resource.status if resource is not None else None
        return status.plan if status is not None else None

    async def _validate(self, req: AdmissionRequest) -> dict[str, Any]:
        try:
            findings = await self.check(req.kind, req.namespace, req.object, fresh=False)
            if findings:
                findings = await self.check(req.kind, req.namespace, req.object, fresh=True)
        except ValidationError as exc:
            self._observe(Review("validate", req.kind, req.namespace, False, ("Invalid",)))
            message = f"{req.kind} refused: {_validation_summary(exc)}"
            return review_response(req.uid, False, message=message, code=400)
        except ObjectReadError as exc:
            self._observe(Review("validate", req.kind, req.namespace, False, ("ReadFailed",)))
            message = f"{req.kind} could not be checked: {exc}"
            return review_response(req.uid, False, message=message, code=500)
        codes = tuple(f.code for f in findings)
        self._observe(Review("validate", req.kind, req.namespace, not findings, codes))
        if findings:
            message = refusal_message(req.kind, findings)
            return review_response(req.uid, False, message=message)
        return review_response(req.uid, True)

    async def _read(
        self, kind: Kind, model: type[R], namespace: str, name: str, fresh: bool
    ) -> R | None:
        raw = await self._lookup.get(kind, namespace, name, fresh=fresh)
        if raw is None:
            return None
        try:
            return from_manifest(model, raw)
        except (ValidationError, ValueError) as exc:
            detail = _validation_summary(exc) if isinstance(exc, ValidationError) else "wrong kind"
            raise ObjectReadError(f"{kind} {name} could not be read: {detail}") from exc

    async def check(
        self, kind: str, namespace: str, obj: Mapping[str, Any], *, fresh: bool
    ) -> list[Finding]:
        """The findings of the kind's validator against one object of a checked kind (raises
        ValidationError when the object itself does not fit its model)."""

        async def read(kind: Kind, model: type[R], name: str) -> R | None:
            return await self._read(kind, model, namespace, name, fresh)

        return await self._validators[kind].validate_create(obj, namespace, read)


def add_routes(
    app: web.Application,
    lookup: ObjectLookup,
    *,
    now: Callable[[], datetime] | None = None,
    observer: ReviewObserver | None = None,
    seal: WriterSeal | None = None,
    allowed_images: frozenset[str] = frozenset(),
    allowed_source_hosts: frozenset[str] = frozenset(),
) -> ApprovalWebhooks:
    """Serve `MUTATE_PATH`, `MUTATE_RESOURCES_PATH` and `VALIDATE_PATH` on `app` (before it
    starts). `seal` seals and opens the records of spec writers; the manager derives it from
    its result key, so every replica opens what another sealed. Without one, a key of this
    process's own. `allowed_images` are the digests a resource's spec.execution.image may be
    pinned to (the manager's runner's among them); `allowed_source_hosts` the hosts a source's
    secretRef may go to."""
    hooks = ApprovalWebhooks(
        lookup,
        now=now,
        observer=observer,
        seal=seal,
        allowed_images=allowed_images,
        allowed_source_hosts=allowed_source_hosts,
    )
    app.router.add_post(MUTATE_PATH, hooks.mutate)
    app.router.add_post(MUTATE_RESOURCES_PATH, hooks.mutate_resources)
    app.router.add_post(VALIDATE_PATH, hooks.validate)
    app.router.add_post(VALIDATE_RESOURCES_PATH, hooks.validate_resources)
    return hooks


def build_app(
    lookup: ObjectLookup,
    *,
    now: Callable[[], datetime] | None = None,
    observer: ReviewObserver | None = None,
    seal: WriterSeal | None = None,
    allowed_images: frozenset[str] = frozenset(),
    allowed_source_hosts: frozenset[str] = frozenset(),
) -> web.Application:
    """An application serving only the webhooks."""
    app = web.Application()
    add_routes(
        app,
        lookup,
        now=now,
        observer=observer,
        seal=seal,
        allowed_images=allowed_images,
        allowed_source_hosts=allowed_source_hosts,
    )
    return app
