"""`ptah-runner source`: check the mounted snapshot against the bound digest, then copy it.

The init container of every operation runs this (SRC-CM-08, JOB-03). It holds no database URL
(JOB-01). It reads the snapshot ConfigMap as mounted: one file per key plus
`ptah-manifest.json`; the kubelet's own entries (`..data` and the timestamped directory it
points to) are not files of the snapshot, and a key's symbolic link is followed only to a file
inside the mount. `api.content.check_files` then decides: the manifest must give the bound
content digest and the files must be exactly what it lists. Only after that are the files
copied to `--out`, where the container holding the URL reads them.

A refusal writes `snapshot refused: <what did not match>` (file names only, never content)
as the termination message and exits 3, so the Pod stops before the container holding the
URL starts (SRC-CM-09).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ptah_operator.api.content import MANIFEST_KEY, ContentError, check_files

MAX_SNAPSHOT_FILE_BYTES = 4 * 1024 * 1024
"""A snapshot ConfigMap holds at most 1 MiB; anything far larger is not a snapshot."""


class SnapshotError(Exception):
    """The snapshot is refused; the message is the termination message's tail."""


def _read_inside(root: Path, name: str) -> bytes:
    path = root / name
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise SnapshotError(f"file {name} points outside the snapshot")
    try:
        info = resolved.stat()
    except OSError:
        raise SnapshotError(f"file {name} cannot be read") from None
    if not stat.S_ISREG(info.st_mode):
        raise SnapshotError(f"file {name} is not a regular file")
    if info.st_size > MAX_SNAPSHOT_FILE_BYTES:
        raise SnapshotError(f"file {name} is too large for a snapshot")
    return resolved.read_bytes()


def read_snapshot(root: Path) -> tuple[bytes, dict[str, bytes]]:
    """The manifest bytes and every file of a mounted snapshot, by name."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        raise SnapshotError("the snapshot is not mounted") from None
    files: dict[str, bytes] = {}
    manifest: bytes | None = None
    for name in names:
        if name.startswith(".."):
            continue  # the kubelet's atomic-writer entries, not keys of the ConfigMap
        data = _read_inside(root, name)
        if name == MANIFEST_KEY:
            manifest = data
        else:
            files[name] = data
    if manifest is None:
        raise SnapshotError("the snapshot has no manifest")
    return manifest, files


def take_snapshot(snapshot: Path, digest: str, out: Path) -> list[str]:
    """Check the snapshot against `digest` and copy its files to `out`; the names copied.

    Raises SnapshotError (with ContentError's text when the content does not match)."""
    manifest, files = read_snapshot(snapshot)
    try:
        check_files(manifest, files, digest)
    except ContentError as exc:
        raise SnapshotError(str(exc)) from None
    out.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(files.items()):
        target = out / name
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    return sorted(files)


def read_files(directory: Path) -> dict[str, bytes]:
    """The files the init container copied (for the run container's own digest check)."""
    files: dict[str, bytes] = {}
    for name in sorted(os.listdir(directory)):
        path = directory / name
        info = path.lstat()
        if stat.S_ISREG(info.st_mode):
            if info.st_size > MAX_SNAPSHOT_FILE_BYTES:
                raise SnapshotError(f"file {name} is too large for a snapshot")
            files[name] = path.read_bytes()
        elif not name.startswith("."):
            raise SnapshotError(f"file {name} is not a regular file")
    return files
