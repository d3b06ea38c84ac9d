"""Rules every source's selected files obey, whichever source they came from.

A source gives a flat set of files: `dict[name, bytes]`. A name must be usable both as a
ConfigMap key and as a flat file name, the same rule as `ptah_operator.api.content`
(`valid_file_name`), restated here because the engine does not import the operator's API; a
unit test holds the two to the same answers. `ptah-manifest.json` is the snapshot's own
manifest and never a source file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ptah_operator.engine.sources.errors import SourceRefusedError, SourceUnreachableError

MANIFEST_NAME = "ptah-manifest.json"
DEFAULT_MAX_BYTES = 900 * 1024
"""What a snapshot ConfigMap can hold with room for its manifest (as api.content)."""
MAX_FILE_BYTES = 4 * 1024 * 1024
"""`ptah-runner source` refuses a larger file; refuse it where it is first read."""

_FILE_NAME = re.compile(r"^[-._a-zA-Z0-9]{1,253}$")
_LFS_SPEC = b"version https://git-lfs.github.com/spec/v1"
_LFS_LEGACY = b"version https://hawser.github.com/spec/v1"
LFS_POINTER_MAX_BYTES = 1024
"""Git LFS pointer files are smaller than 1024 bytes (the LFS specification)."""


def valid_file_name(name: str) -> bool:
    """A name usable both as a ConfigMap key and as a flat file name. A name starting with
    ".." is refused: the kubelet keeps its own entries of a mounted ConfigMap under such names,
    so a mounted snapshot could not tell the two apart."""
    return bool(_FILE_NAME.match(name)) and not name.startswith("..") and name != MANIFEST_NAME


def check_name(name: str, where: str) -> None:
    if not valid_file_name(name):
        raise SourceRefusedError(
            f"{where} {_printable(name)} is not a flat file name"
            " (letters, digits, '-', '_' and '.' only, not ptah-manifest.json)"
        )


def is_lfs_pointer(data: bytes) -> bool:
    """A Git LFS pointer file: the file's content lives elsewhere, not in the repository."""
    return len(data) < LFS_POINTER_MAX_BYTES and (data.startswith((_LFS_SPEC, _LFS_LEGACY)))


def check_total(total: int, limit: int | None, rule: str) -> None:
    """Refuse a total size over `limit`; `rule` names the limit in the message."""
    if limit is not None and total > limit:
        raise SourceRefusedError(
            f"the selected files total {total} bytes, over {rule} of {limit} bytes"
        )


def total_bytes(files: Mapping[str, bytes]) -> int:
    return sum(len(data) for data in files.values())


def _printable(name: str) -> str:
    """A name for a message: quoted, control characters escaped, cut to a sane length."""
    text = repr(name[:100])
    return text if len(name) <= 100 else text + "…"


@dataclass(frozen=True)
class Credentials:
    """HTTP basic credentials. `repr` never shows the password."""

    username: str
    password: str

    def __repr__(self) -> str:
        return f"Credentials(username={self.username!r}, password=<hidden>)"


def read_credentials(directory: Path | None) -> Credentials | None:
    """Credentials from a directory holding the files `username` and `password` (a mounted
    Secret). None when no directory is given. Unusable credentials are SourceUnreachable: the
    source cannot be reached with them."""
    if directory is None:
        return None
    try:
        username = (directory / "username").read_text().strip("\r\n")
        password = (directory / "password").read_text().strip("\r\n")
    except (OSError, UnicodeDecodeError):
        raise SourceUnreachableError(
            "the credentials directory must hold readable files username and password"
        ) from None
    if not username or ":" in username:
        raise SourceUnreachableError("the credentials' username is empty or holds ':'")
    return Credentials(username=username, password=password)
