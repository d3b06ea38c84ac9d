"""`kubectl ptah approve KIND/NAME [--plan NAME] [--fingerprint F] [--wait]`: show the plan the
resource waits on, approve exactly that plan, and with --wait follow the resource until the run
of that plan ends.

The approval names the plan the person was shown (name, UID, fingerprint, and the publication
status.plan records) and the resource's UID (APR-02, APR-12). If the plan was replaced
meanwhile, admission refuses the approval and nothing is approved (PLUGIN-05). `--plan` and
`--fingerprint` pin the plan the person reviewed earlier (with `kubectl ptah plan`): when the
plan waiting now is another one, nothing is approved. One implementation serves both kinds; the row of `targets` says where a
PtahMigration and a PtahSchema differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from ptah_operator.api.constants import GROUP, VERSION
from ptah_operator.cli.kubectl.errors import EXIT_FAILED, EXIT_OK, CommandError
from ptah_operator.cli.kubectl.lookup import read_model
from ptah_operator.cli.kubectl.targets import MIGRATION, SCHEMA, AnyTarget
from ptah_operator.cli.kubectl.view import person
from ptah_operator.cli.kubectl.wait import follow
from ptah_operator.cli.kubectl.waits import RunProgress

if TYPE_CHECKING:
    # `kubectl ptah` imports this module for its flags: the models only when approving.
    from ptah_operator.api.approvals import PtahMigrationApproval, PtahSchemaApproval
    from ptah_operator.api.common import StatusCommon
    from ptah_operator.cli.kubectl.session import Session

    Approval = PtahMigrationApproval | PtahSchemaApproval


@dataclass(frozen=True)
class PlanToApprove:
    """The plan `approve` showed, exactly as it showed it, and the resource that waits on it."""

    target: AnyTarget
    resource: Any
    plan: Any


@dataclass(frozen=True)
class Reviewed:
    """The plan the person reviewed, as `--plan` and `--fingerprint` name it; None is not
    pinned."""

    plan: str | None = None
    fingerprint: str | None = None
    """`sha256:` and 12 to 64 hex digits, the way the plan view shows it: a prefix of the
    plan's fingerprint."""


FINGERPRINT_PATTERN = re.compile(r"^(sha256:)?([0-9a-f]{12,64})$")


def fingerprint_argument(text: str | None) -> str | None:
    """`--fingerprint` as `sha256:HEX`; ValueError when it is not 12 to 64 hex digits."""
    if text is None:
        return None
    found = FINGERPRINT_PATTERN.match(text.strip().lower())
    if found is None:
        raise ValueError(text)
    return "sha256:" + found.group(2)


def differs_from_reviewed(
    reviewed: Reviewed, plan_name: str, fingerprint: str | None
) -> str | None:
    """How the plan waiting now differs from the one the person reviewed, or None."""
    if reviewed.plan is not None and reviewed.plan != plan_name:
        return f"it waits on plan {plan_name}, not on {reviewed.plan}"
    if reviewed.fingerprint is not None and not (fingerprint or "").startswith(
        reviewed.fingerprint
    ):
        return (
            f"plan {plan_name} has fingerprint {fingerprint or 'none'}, not {reviewed.fingerprint}"
        )
    return None


def _check_reviewed(
    noun: str, name: str, reviewed: Reviewed, plan_name: str, fingerprint: str | None
) -> None:
    differs = differs_from_reviewed(reviewed, plan_name, fingerprint)
    if differs is not None:
        raise CommandError(
            f"{noun} {name} no longer waits on the plan you reviewed: {differs}; read the "
            "plan again with kubectl ptah plan; nothing was approved"
        )


async def prepare(
    session: Session, target: AnyTarget, name: str, reviewed: Reviewed | None = None
) -> PlanToApprove:
    """Read the resource and the plan it waits on, and print what will be approved; the plan
    must be the one `reviewed` names."""
    reviewed = reviewed or Reviewed()
    resource = await session.resource(target, name)
    status = target.status(resource)
    phase = status.phase or "none yet"
    noun = target.noun
    policy = resource.spec.policy.apply
    if policy not in target.approving_policies:
        raise CommandError(
            f"{noun} {name} does not ask for approvals (spec.policy.apply is {policy}); "
            "nothing was approved"
        )
    if status.plan is None:
        raise CommandError(
            f"{noun} {name} has no plan to approve (phase {phase}); nothing was approved"
        )
    unpublished = target.unpublished_plan_has_no_uid and status.plan.uid is None
    if status.phase != target.phases.AWAITING_APPROVAL or unpublished:
        raise CommandError(
            f"{noun} {name} is not waiting for an approval (phase {phase}); nothing was approved"
        )
    _check_reviewed(noun, name, reviewed, status.plan.name, status.plan.fingerprint)
    plan = await session.plan(target, status.plan.name, status.plan.uid)
    if plan is None:
        raise CommandError(
            f"plan {status.plan.name} was replaced while it was read; nothing was approved"
        )
    _check_reviewed(noun, name, reviewed, status.plan.name, plan.spec.fingerprint)
    session.say(target.render_approval_summary(resource, plan))
    return PlanToApprove(target, resource, plan)


def approval_for(shown: PlanToApprove, namespace: str) -> Approval:
    """The approval of exactly that plan, of exactly that resource (APR-02)."""
    from ptah_operator.api.common import ObjectReference
    from ptah_operator.api.objectmeta import ObjectMeta

    r, p = shown.resource.metadata, shown.plan.metadata
    assert r.name is not None
    assert r.uid is not None
    assert p.name is not None
    assert p.uid is not None
    current = shown.target.status(shown.resource).plan
    spec = {
        shown.target.owner_ref: ObjectReference(name=r.name, uid=r.uid),
        "plan_ref": ObjectReference(name=p.name, uid=p.uid),
        "plan_fingerprint": shown.plan.spec.fingerprint,
        # The publication shown: admission refuses the approval if the plan was retired and
        # published again since (APR-12).
        "plan_operation_id": current.operation_id if current is not None else None,
    }
    meta = ObjectMeta(generate_name=f"{p.name}-", namespace=namespace)
    return shown.target.approval_model.model_validate({"metadata": meta, "spec": spec})


_DENIED = "denied the request: "


async def create_approval(session: Session, shown: PlanToApprove) -> Approval:
    """Create the approval; a refusal raises CommandError saying nothing was approved."""
    # The client library only here: `kubectl ptah` imports this module for its flags too.
    from kubernetes_asyncio.client.exceptions import ApiException

    from ptah_operator.api.kinds import kind_info, to_manifest
    from ptah_operator.cli.kubectl.session import api_message

    model = shown.target.approval_model
    body = to_manifest(approval_for(shown, session.namespace))
    try:
        created = await session.custom.create_namespaced_custom_object(
            GROUP, VERSION, session.namespace, kind_info(model).plural, body
        )
    except ApiException as exc:
        message = api_message(exc)
        if _DENIED in message:
            reason = message.split(_DENIED, 1)[1]
            raise CommandError(f"not approved: {reason}") from None
        raise CommandError(f"not approved: {message}") from None
    return read_model(model, created)


async def approve(
    session: Session,
    target: AnyTarget,
    name: str,
    wait: bool,
    wait_seconds: float,
    reviewed: Reviewed | None = None,
) -> int:
    shown = await prepare(session, target, name, reviewed)
    approval = await create_approval(session, shown)
    session.say(
        f"approved: {target.approval_kind.lower()}/{approval.metadata.name} "
        f"by {person(approval.spec.approved_by)}"
    )
    if not wait:
        return EXIT_OK
    plan = shown.plan
    assert plan.metadata.name is not None
    return await wait_for_verdict(
        session, target, name, plan.metadata.name, plan.metadata.uid, wait_seconds
    )


async def wait_for_verdict(
    session: Session,
    target: AnyTarget,
    name: str,
    plan_name: str,
    plan_uid: str | None,
    wait_seconds: float,
) -> int:
    """Follow the resource until the run of the plan reached its verdict (a migration) or its
    Apply was proved (a schema), or the plan retired before it ran."""

    def judge(resource: Any) -> int | None:
        status = target.status(resource)
        progress = target.progress(status, plan_name, plan_uid)
        if progress is RunProgress.RETIRED:
            _retired(plan_name, status)
        if progress is not RunProgress.FINISHED:
            return None
        verdict = target.verdict(status)
        for line in verdict.lines:
            session.say(line)
        return EXIT_OK if verdict.succeeded else EXIT_FAILED

    what = f"the {target.run_noun} of plan {plan_name}"
    return await follow(session, target, name, what, wait_seconds, judge)


def _retired(plan_name: str, status: StatusCommon) -> NoReturn:
    plan = getattr(status, "plan", None)
    current = plan.name if plan is not None else "none"
    raise CommandError(
        f"plan {plan_name} was retired before it ran (current plan: {current}); "
        "the approval authorizes nothing else"
    )


# --- one surface per kind, for callers that name the kind ---------------------------------------


async def prepare_approval(session: Session, name: str) -> PlanToApprove:
    return await prepare(session, MIGRATION, name)


async def prepare_schema_approval(session: Session, name: str) -> PlanToApprove:
    return await prepare(session, SCHEMA, name)


create_schema_approval = create_approval
