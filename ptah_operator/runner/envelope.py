"""The envelope every result document (contract `ptah.run/result/v1`) opens with: the contract,
what it repeats of the operation it reports, and when the operation ran. Pure: no I/O, no
clock (times come in as arguments), and light enough for every command to load."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any, Protocol

from ptah_operator.api.contracts.codes import RESULT_CONTRACT
from ptah_operator.api.contracts.operation import ResourceRef
from ptah_operator.api.fields import REPORT_CODE_PATTERN, REPORTED_FILE_PATTERN, format_time


class Operated(Protocol):
    """What a result's envelope repeats of the operation it reports."""

    @property
    def operation_id(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def resource(self) -> ResourceRef: ...


def envelope(
    operation: Operated, started_at: dt.datetime, finished_at: dt.datetime
) -> dict[str, Any]:
    return {
        "contract": RESULT_CONTRACT,
        "operationID": operation.operation_id,
        "type": operation.type,
        "resource": operation.resource.as_json(),
        "startedAt": format_time(started_at),
        "finishedAt": format_time(finished_at),
    }


def present(blocks: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of `blocks` that apply, in their order: a result document leaves out a
    block (or a field) that is None rather than writing null."""
    return {key: value for key, value in blocks.items() if value is not None}


def report_code(code: str | None) -> str | None:
    """`code` when a report may carry it (api/fields.py REPORT_CODE_PATTERN), else None."""
    return code if code and re.fullmatch(REPORT_CODE_PATTERN, code) else None


def reported_file(name: str | None) -> str | None:
    """`name` when a report may name it (api/fields.py REPORTED_FILE_PATTERN), else None."""
    return name if name and re.fullmatch(REPORTED_FILE_PATTERN, name) else None
