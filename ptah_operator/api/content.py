"""Content manifests and digests: what binds an operation to the exact files it reads.

A source's selected files are described by a manifest, one entry per file with its path, size
and SHA-256, sorted by path and serialized canonically. The content digest is the SHA-256 of
those manifest bytes, so the same files give the same digest whichever ConfigMap keys (or Git
paths) they came from (SRC-CM-03, SRC-CM-04). The manager computes it when it takes a
snapshot; the init container of every operation recomputes it from what it mounted and refuses
anything else (SRC-CM-08). Pure functions only: no I/O here.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

MANIFEST_KEY = "ptah-manifest.json"
"""The key of the manifest inside a snapshot ConfigMap; never a source file's name."""
MANIFEST_VERSION = 1
MAX_SNAPSHOT_BYTES = 900 * 1024
"""A ConfigMap holds at most 1 MiB; leave room for the manifest and metadata."""

_FILE_NAME = re.compile(r"^[-._a-zA-Z0-9]{1,253}$")


@dataclass(frozen=True)
class ManifestEntry:
    path: str
    size: int
    sha256: str


class ContentError(ValueError):
    """The files cannot form a snapshot, or do not match the manifest they claim."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def valid_file_name(name: str) -> bool:
    """A name usable both as a ConfigMap key and as a flat file name. A name starting with
    ".." is refused: the kubelet keeps its own entries of a mounted ConfigMap under such names,
    so a mounted snapshot could not tell the two apart."""
    return bool(_FILE_NAME.match(name)) and not name.startswith("..") and name != MANIFEST_KEY


def manifest_entries(files: Mapping[str, bytes]) -> list[ManifestEntry]:
    entries = []
    for path in sorted(files):
        if not valid_file_name(path):
            raise ContentError(f"file name {path!r} is not allowed in a snapshot")
        data = files[path]
        entries.append(ManifestEntry(path=path, size=len(data), sha256=sha256_hex(data)))
    return entries


def manifest_bytes(entries: list[ManifestEntry]) -> bytes:
    """Canonical bytes: sorted entries, sorted keys, no whitespace, UTF-8, trailing newline."""
    document = {
        "version": MANIFEST_VERSION,
        "files": [
            {"path": e.path, "sha256": e.sha256, "size": e.size}
            for e in sorted(entries, key=lambda e: e.path)
        ],
    }
    return (json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n").encode()


def content_digest(manifest: bytes) -> str:
    return "sha256:" + sha256_hex(manifest)


def digest_of_files(files: Mapping[str, bytes]) -> tuple[str, bytes]:
    """The content digest of `files` and the manifest bytes it is the digest of."""
    manifest = manifest_bytes(manifest_entries(files))
    return content_digest(manifest), manifest


def parse_manifest(manifest: bytes) -> list[ManifestEntry]:
    try:
        document = json.loads(manifest)
        if document.get("version") != MANIFEST_VERSION:
            raise ContentError("the manifest has an unknown version")
        entries = [
            ManifestEntry(path=str(f["path"]), size=int(f["size"]), sha256=str(f["sha256"]))
            for f in document["files"]
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ContentError("the manifest cannot be read") from exc
    for entry in entries:
        if not valid_file_name(entry.path):
            raise ContentError(f"the manifest names a file {entry.path!r} that is not allowed")
    return entries


def check_files(manifest: bytes, files: Mapping[str, bytes], expected_digest: str) -> None:
    """Refuse unless `manifest` gives `expected_digest` and `files` are exactly what it lists.

    The error names the first file that does not match, never its content.
    """
    if content_digest(manifest) != expected_digest:
        raise ContentError("the snapshot's manifest does not give the bound content digest")
    entries = parse_manifest(manifest)
    listed = {e.path for e in entries}
    for entry in entries:
        data = files.get(entry.path)
        if data is None:
            raise ContentError(f"file {entry.path} is missing from the snapshot")
        if len(data) != entry.size or sha256_hex(data) != entry.sha256:
            raise ContentError(f"file {entry.path} does not match the manifest")
    extra = sorted(set(files) - listed)
    if extra:
        raise ContentError(f"file {extra[0]} is in the snapshot but not in its manifest")
