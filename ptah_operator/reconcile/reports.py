"""The runner's report of an operation (contract `ptah.run/result/v1`), read and checked.

The models are api/contracts/result.py's, the ones the runner's documents are checked against.
The result record is the only evidence of what an operation did, so it is read strictly: a
report of another contract, another operation, another type or another resource, or one whose
fields do not fit the status they would go into, is *unreadable*, and the lifecycle treats it
as no result at all (a read runs again; an Apply is an outcome nobody established). One reader
serves both families: each passes the model of its reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from pydantic import ValidationError

from ptah_operator.api.constants import OperationType
from ptah_operator.api.contracts.result import ResultEnvelope
from ptah_operator.reconcile.world import OperationResult

ReportT = TypeVar("ReportT", bound=ResultEnvelope)


@dataclass(frozen=True)
class Unreadable:
    """A report that cannot be taken as evidence; why, in words for status (no content)."""

    why: str


def read_report(
    result: OperationResult,
    model: type[ReportT],
    operation_id: str,
    operation_type: OperationType,
    resource_uid: str,
) -> ReportT | Unreadable:
    """The report of this operation of this resource, read with `model`, or why it cannot be
    read. A record the endpoint made of two different reports of one operation (`conflict`:
    the digests of both), or one whose digest the claim does not remember (`unconfirmed`,
    controller/world.py `claim_checked`), is evidence of neither."""
    if "conflict" in result.payload:
        return Unreadable("two different results arrived for the operation")
    if "unconfirmed" in result.payload:
        return Unreadable("the result endpoint did not confirm the result in the claim")
    try:
        report = model.model_validate(dict(result.payload))
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})[:3]
        return Unreadable(f"the result does not fit its contract ({', '.join(fields)})")
    if report.operation_id != operation_id:
        return Unreadable("the result names another operation")
    if report.type != operation_type.value:
        return Unreadable(f"the result is of a {report.type} operation")
    if report.resource.uid != resource_uid:
        return Unreadable("the result names another resource")
    why = report.misfit()
    return report if why is None else Unreadable(why)
