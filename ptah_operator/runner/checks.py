"""What every operation of either family checks before it touches a database, and how a failed
check stops it.

  1. the files the init container copied must still give the bound content digest
     (`check_files`: SnapshotRefused; an OSError says only that the files cannot be read);
  2. the database URL must be set and name the operation's engine (`check_url`: BadURL,
     EngineMismatch);
  3. a connection that fails is worded by `connection_message`: the error class or the kind
     of network failure, never the host, the URL or a credential.

A check that fails raises `StoppedError`, which carries the result's `error` block; each
family's runner turns it into its result document.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path

from ptah_operator.api.content import ContentError, digest_of_files
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.engine.migrations.connection import BadURLError, Engine, parse_url
from ptah_operator.runner.document import ErrorBlock
from ptah_operator.runner.source import SnapshotError, read_files

Now = Callable[[], dt.datetime]

_ERROR_CLASS = re.compile(r"SQLSTATE [0-9A-Z]{5}|MySQL error [0-9]+")
_FAILURE_KIND = re.compile(r"\(([A-Za-z][A-Za-z0-9_]*)\)\s*$")


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class StoppedError(Exception):
    """The operation could not do its work: `error` is the result's error block."""

    def __init__(self, error: ErrorBlock) -> None:
        super().__init__(error.message)
        self.error = error

    @classmethod
    def of(cls, reason: str, message: str) -> StoppedError:
        """A `StoppedError` with only a reason and a message."""
        return cls(ErrorBlock(reason, message))


def check_files(files_dir: Path, content_digest: str | None) -> None:
    """The copied files give the digest the operation is bound to, or SnapshotRefused."""
    try:
        digest, _ = digest_of_files(read_files(files_dir))
    except (SnapshotError, ContentError) as exc:
        raise StoppedError.of(ErrorReason.SNAPSHOT_REFUSED, str(exc)) from None
    except OSError:
        raise StoppedError.of(ErrorReason.SNAPSHOT_REFUSED, "the files cannot be read") from None
    if digest != content_digest:
        raise StoppedError.of(
            ErrorReason.SNAPSHOT_REFUSED, "the files do not give the bound content digest"
        )


def check_url(
    url: str | None,
    engine: Engine,
    *,
    also: Callable[[str], object] | None = None,
    refused: tuple[type[Exception], ...] = (BadURLError,),
) -> str:
    """The database URL, set and naming `engine`, or BadURL / EngineMismatch. `also` is a
    family's own reading of the URL, whose `refused` errors are a BadURL too."""
    if not url:
        raise StoppedError.of(ErrorReason.BAD_URL, "PTAH_DATABASE_URL is not set")
    try:
        target = parse_url(url)
        if also is not None:
            also(url)
    except refused as exc:
        raise StoppedError.of(ErrorReason.BAD_URL, str(exc)) from None
    if target.dialect is not engine.dialect:
        raise StoppedError.of(
            ErrorReason.ENGINE_MISMATCH,
            f"the database URL does not name a {engine.value} database",
        )
    return url


def connection_message(detail: str) -> str:
    """What a failed connection says, without the host, the URL or a credential."""
    found = _ERROR_CLASS.search(detail)
    if found:
        return f"the database refused the session ({found.group(0)})"
    kind = _FAILURE_KIND.search(detail)
    if kind:
        return f"the database could not be reached ({kind.group(1)})"
    return "the database could not be reached"
