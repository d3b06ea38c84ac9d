"""Content manifests and digests bind operations to exact files (SRC-CM-03, -04, -08)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from ptah_operator.api.content import (
    MANIFEST_KEY,
    ContentError,
    check_files,
    digest_of_files,
    parse_manifest,
)
from ptah_operator.api.names import snapshot_name
from ptah_operator.controller.world import source_files

FILES = {
    "0000000001_create_orders.up.sql": b"CREATE TABLE orders (id int);\n",
    "0000000002_add_total.up.sql": b"ALTER TABLE orders ADD total int;\n",
}


@pytest.mark.req("SRC-CM-03")
def test_manifest_lists_path_size_and_sha256_of_every_file() -> None:
    _, manifest = digest_of_files(FILES)
    entries = parse_manifest(manifest)
    assert [e.path for e in entries] == sorted(FILES)
    assert entries[0].size == len(FILES["0000000001_create_orders.up.sql"])
    assert all(len(e.sha256) == 64 for e in entries)


def _config_map(name: str, data: dict[str, str], binary: dict[str, bytes]) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "data": data,
        "binaryData": {k: base64.b64encode(v).decode() for k, v in binary.items()},
    }


@pytest.mark.req("SRC-CM-04")
def test_digest_is_the_sha256_of_the_manifest_and_ignores_where_files_came_from() -> None:
    digest, manifest = digest_of_files(FILES)
    assert digest == "sha256:" + hashlib.sha256(manifest).hexdigest()
    first, second = sorted(FILES)
    # The same files taken from other source keys: text keys of one ConfigMap, binary keys of
    # another beside keys it does not select, selected in another order.
    as_text = _config_map("a", {k: v.decode() for k, v in FILES.items()}, {})
    mixed = _config_map(
        "b",
        {second: FILES[second].decode(), "README.md": "not a migration"},
        {first: FILES[first], "notes.bin": b"\x00\x01"},
    )
    taken = [source_files(as_text, None), source_files(mixed, [second, first])]
    assert [t.refusal for t in taken] == [None, None]
    assert [dict(t.files) for t in taken] == [FILES, FILES]
    assert [t.content_digest for t in taken] == [digest, digest]
    assert [t.manifest for t in taken] == [manifest, manifest]
    # Every key a source selects counts, and where a file is, is part of what it is.
    assert source_files(mixed, None).content_digest != digest
    renamed = {"0000000003_add_total.up.sql" if k == second else k: v for k, v in FILES.items()}
    assert digest_of_files(renamed)[0] != digest
    changed = {**FILES, second: b"ALTER TABLE orders ADD total bigint;\n"}
    assert digest_of_files(changed)[0] != digest


@pytest.mark.req("SRC-CM-08", "JOB-03")
@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {**FILES, "0000000001_create_orders.up.sql": b"DROP TABLE x;"},
            "0000000001_create_orders.up.sql does not match",
        ),
        (
            {"0000000002_add_total.up.sql": FILES["0000000002_add_total.up.sql"]},
            "0000000001_create_orders.up.sql is missing",
        ),
        (
            {**FILES, "0000000003_extra.up.sql": b"SELECT 1;"},
            "0000000003_extra.up.sql is in the snapshot but not",
        ),
    ],
)
def test_check_refuses_files_that_do_not_match_and_names_the_file(
    files: dict[str, bytes], message: str
) -> None:
    digest, manifest = digest_of_files(FILES)
    with pytest.raises(ContentError, match=message) as info:
        check_files(manifest, files, digest)
    assert "DROP" not in str(info.value)


def test_check_refuses_a_manifest_that_does_not_give_the_bound_digest() -> None:
    digest, manifest = digest_of_files(FILES)
    check_files(manifest, FILES, digest)
    other_digest, _ = digest_of_files({"x.sql": b""})
    with pytest.raises(ContentError, match="bound content digest"):
        check_files(manifest, FILES, other_digest)


def test_names_that_are_not_plain_files_are_refused() -> None:
    for bad in ("../etc/passwd", "a/b.sql", MANIFEST_KEY, ".."):
        with pytest.raises(ContentError):
            digest_of_files({bad: b""})


def test_snapshot_name_is_per_resource_and_content() -> None:
    digest, _ = digest_of_files(FILES)
    name = snapshot_name("uid-1", digest)
    assert name.startswith("ptah-src-")
    assert len(name) == len("ptah-src-") + 20
    assert snapshot_name("uid-2", digest) != name
    assert snapshot_name("uid-1", digest) == name
