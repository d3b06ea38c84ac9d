"""`ptah-runner source`: the snapshot as the kubelet mounts it is checked against the bound
digest, and only then copied for the container that holds the URL."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ptah_operator.api.content import MANIFEST_KEY, digest_of_files
from ptah_operator.runner.source import SnapshotError, read_files, take_snapshot

FILES = {
    "0000000001_users.up.sql": b"CREATE TABLE users (id INT);\n",
    "0000000002_seed.up.sql": b"INSERT INTO users VALUES (1);\n",
}
DIGEST, MANIFEST = digest_of_files(FILES)


def _mount(root: Path, files: dict[str, bytes], manifest: bytes | None = MANIFEST) -> Path:
    """A ConfigMap volume laid out as the kubelet's atomic writer makes it: the data in a
    timestamped directory, `..data` pointing at it, and each key a link through `..data`."""
    root.mkdir(parents=True)
    data = root / "..2026_08_30_12_00_00.000000001"
    data.mkdir()
    entries = dict(files)
    if manifest is not None:
        entries[MANIFEST_KEY] = manifest
    for name, content in entries.items():
        (data / name).write_bytes(content)
    (root / "..data").symlink_to(data.name)
    for name in entries:
        (root / name).symlink_to(f"..data/{name}")
    return root


@pytest.mark.req("SRC-CM-08", "JOB-02", "JOB-03")
def test_a_matching_snapshot_is_copied(tmp_path: Path) -> None:
    snapshot = _mount(tmp_path / "snapshot", FILES)
    out = tmp_path / "files"
    out.mkdir()
    assert take_snapshot(snapshot, DIGEST, out) == sorted(FILES)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == FILES
    assert read_files(out) == FILES


@pytest.mark.req("SRC-CM-08", "SRC-CM-09", "PRIV-02")
def test_an_altered_file_is_refused_by_name_and_nothing_is_copied(tmp_path: Path) -> None:
    altered = {**FILES, "0000000002_seed.up.sql": b"DROP TABLE users;\n"}
    snapshot = _mount(tmp_path / "snapshot", altered)
    out = tmp_path / "files"
    out.mkdir()
    with pytest.raises(SnapshotError) as refused:
        take_snapshot(snapshot, DIGEST, out)
    assert str(refused.value) == "file 0000000002_seed.up.sql does not match the manifest"
    assert list(out.iterdir()) == []


@pytest.mark.req("SRC-CM-08", "SRC-CM-16")
@pytest.mark.parametrize(
    ("files", "manifest", "digest", "says"),
    [
        (FILES, MANIFEST, "sha256:" + "0" * 64, "manifest does not give the bound content digest"),
        (
            {"0000000001_users.up.sql": FILES["0000000001_users.up.sql"]},
            MANIFEST,
            DIGEST,
            "file 0000000002_seed.up.sql is missing from the snapshot",
        ),
        (
            {**FILES, "0000000003_more.up.sql": b"SELECT 1;\n"},
            MANIFEST,
            DIGEST,
            "file 0000000003_more.up.sql is in the snapshot but not in its manifest",
        ),
        (FILES, None, DIGEST, "the snapshot has no manifest"),
    ],
)
def test_a_snapshot_that_is_not_the_bound_one_is_refused(
    tmp_path: Path, files: dict[str, bytes], manifest: bytes | None, digest: str, says: str
) -> None:
    snapshot = _mount(tmp_path / "snapshot", files, manifest)
    with pytest.raises(SnapshotError) as refused:
        take_snapshot(snapshot, digest, tmp_path / "files")
    assert says in str(refused.value)
    assert not (tmp_path / "files").exists()


def test_a_link_out_of_the_snapshot_is_refused(tmp_path: Path) -> None:
    snapshot = _mount(tmp_path / "snapshot", FILES)
    (tmp_path / "outside.sql").write_bytes(b"SELECT 1;\n")
    os.symlink(tmp_path / "outside.sql", snapshot / "0000000003_x.up.sql")
    with pytest.raises(SnapshotError, match="outside the snapshot"):
        take_snapshot(snapshot, DIGEST, tmp_path / "files")


def test_a_snapshot_that_is_not_mounted_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="not mounted"):
        take_snapshot(tmp_path / "nothing", DIGEST, tmp_path / "files")
