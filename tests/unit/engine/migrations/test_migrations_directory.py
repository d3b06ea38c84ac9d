"""Reading migration directories from disk: names, directives, limits, links and ptah.sum."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ptah_operator.engine.migrations.directory import (
    SUM_FILE,
    DirectoryError,
    FileKind,
    Limits,
    read_directory,
    render_sum,
)


def _write(path: Path, files: dict[str, str | bytes]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        data = content.encode() if isinstance(content, str) else content
        (path / name).write_bytes(data)
    return path


def _refused(path: Path, reason: str, limits: Limits | None = None) -> str:
    with pytest.raises(DirectoryError) as info:
        read_directory(path, limits)
    assert info.value.reason == reason
    return str(info.value)


@pytest.mark.req("MIG-59")
def test_reads_files_in_version_order_with_kinds_and_downs(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "0000000010_later.up.sql": "SELECT 10;",
            "0000000002_first.up.sql": "SELECT 2;",
            "0000000002_first.down.sql": "SELECT -2;",
            "0000000005_all.checkpoint.up.sql": "SELECT 5;",
            "README.md": "not a migration",
        },
    )
    directory = read_directory(path)
    assert [f.version for f in directory.files] == [2, 5, 10]
    assert [f.kind for f in directory.files] == [
        FileKind.MIGRATION,
        FileKind.CHECKPOINT,
        FileKind.MIGRATION,
    ]
    assert directory.files[0].down_name == "0000000002_first.down.sql"
    assert directory.latest_version == 10
    assert [f.version for f in directory.checkpoints] == [5]
    assert not directory.sum_verified


def test_checksum_is_sha256_of_the_up_file_bytes(tmp_path: Path) -> None:
    import hashlib

    path = _write(tmp_path, {"1_a.up.sql": "SELECT 1;\n"})
    assert read_directory(path).files[0].checksum == hashlib.sha256(b"SELECT 1;\n").hexdigest()


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({"1_a.sql": "x"}, "BadFileName"),
        ({"abc_a.up.sql": "x"}, "BadFileName"),
        ({"1_a b.up.sql": "x"}, "BadFileName"),
        ({"1_a.up.sql": "x", "0001_b.up.sql": "y"}, "DuplicateVersion"),
        ({"1_a.up.sql": "x", "1_a.checkpoint.up.sql": "y"}, "DuplicateVersion"),
        ({"1_a.down.sql": "x"}, "OrphanDownFile"),
        ({"1_a.up.sql": "x", "1_b.down.sql": "x"}, "OrphanDownFile"),
        ({"1_a.up.sql": b"\xff\xfe"}, "NotUTF8"),
        ({"1_a.up.sql": "-- +ptah no_transction\nSELECT 1;"}, "UnknownDirective"),
        ({"1_a.up.sql": "SELECT 1;\n-- +ptah no_transaction\n"}, "MisplacedDirective"),
        ({"1234567890123456789_a.up.sql": "x"}, "BadFileName"),
    ],
)
def test_refusals(tmp_path: Path, files: dict[str, str | bytes], reason: str) -> None:
    _refused(_write(tmp_path, files), reason)


@pytest.mark.req("MIG-56")
def test_no_transaction_directive_in_the_header(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "1_a.up.sql": "-- a comment\n\n--  +ptah   no_transaction\nCREATE INDEX CONCURRENTLY i ON t (c);",
            "2_b.up.sql": "SELECT 1;",
        },
    )
    first, second = read_directory(path).files
    assert first.no_transaction
    assert not second.no_transaction


def test_symlinks_are_refused(tmp_path: Path) -> None:
    outside = _write(tmp_path / "outside", {"secret.sql": "SELECT 1;"})
    path = _write(tmp_path / "m", {"1_a.up.sql": "SELECT 1;"})
    os.symlink(outside / "secret.sql", path / "2_b.up.sql")
    _refused(path, "SymlinkRefused")


def test_limits_on_count_and_size(tmp_path: Path) -> None:
    path = _write(tmp_path, {f"{i}_m.up.sql": "SELECT 1;" for i in range(1, 6)})
    _refused(path, "TooManyFiles", Limits(max_files=4))
    _refused(path, "FileTooLarge", Limits(max_file_bytes=5))
    _refused(path, "DirectoryTooLarge", Limits(max_total_bytes=20))
    assert len(read_directory(path, Limits(max_files=5)).files) == 5


def test_not_a_directory(tmp_path: Path) -> None:
    _refused(tmp_path / "absent", "NotADirectory")


def _with_sum(tmp_path: Path) -> Path:
    path = _write(
        tmp_path,
        {"1_a.up.sql": "SELECT 1;", "1_a.down.sql": "SELECT 0;", "2_b.up.sql": "SELECT 2;"},
    )
    entries = list(read_directory(path).sum_entries)
    (path / SUM_FILE).write_text(render_sum(entries))
    return path


def test_ptah_sum_verified(tmp_path: Path) -> None:
    directory = read_directory(_with_sum(tmp_path))
    assert directory.sum_verified
    assert len(directory.sum_entries) == 3


@pytest.mark.parametrize(
    "tamper",
    [
        lambda p: (p / "2_b.up.sql").write_text("SELECT 3;"),
        lambda p: (p / "3_c.up.sql").write_text("SELECT 3;"),
        lambda p: (p / "1_a.down.sql").unlink(),
        lambda p: (p / SUM_FILE).write_text(
            (p / SUM_FILE).read_text().replace("ptah.sum v1 sha256:", "ptah.sum v1 sha256:0", 1)
        ),
        lambda p: (p / SUM_FILE).write_text("garbage\n"),
        lambda p: (p / SUM_FILE).write_text(
            (p / SUM_FILE).read_text() + "../escape.sql sha256:" + "0" * 64 + "\n"
        ),
    ],
    ids=["edited", "unlisted", "missing", "dirhash", "garbage", "escape"],
)
def test_ptah_sum_mismatch_refused(tmp_path: Path, tamper: Callable[[Path], object]) -> None:
    path = _with_sum(tmp_path)
    tamper(path)
    _refused(path, "SumMismatch")


def test_directory_hash_changes_with_any_file(tmp_path: Path) -> None:
    path = _write(tmp_path, {"1_a.up.sql": "SELECT 1;"})
    first = read_directory(path).directory_hash
    (path / "1_a.up.sql").write_text("SELECT 2;")
    assert read_directory(path).directory_hash != first


@pytest.mark.parametrize(
    "name",
    [
        "0000000002_b.up.SQL",
        "0000000002_b.UP.sql",
        "0000000002_b.up.Sql",
        "0000000002_b.up.sql.bak",
        "0000000002_b.up.sql~",
        "0000000002_b.up.sql.orig",
        "0000000002_b.up.sq",
        "0000000002_b.up.psql",
        "0000000002_b.up",
        "0000000002_b.sql.old",
        "0000000002_b.up.sql.swp",
        "V2__b.SQL",
        "0000000002_b.SQL",
        ".0000000002_b.up.sql.swp",
        "0000000002_b.checkpoint.up.sql.bak",
    ],
)
def test_a_misspelt_migration_file_is_refused_by_name_never_skipped(
    tmp_path: Path, name: str
) -> None:
    """Issue #18: `.up.SQL`, `.up.sql.bak` or `.up.sq` was silently skipped and the resource
    reported InSync; a name that is nearly a migration's is refused, naming the file."""
    path = _write(tmp_path, {"0000000001_a.up.sql": "SELECT 1;", name: "SELECT 2;"})
    message = _refused(path, "BadFileName")
    assert name in message


@pytest.mark.parametrize(
    "name",
    [
        "README.md",
        "LICENSE",
        ".gitkeep",
        "notes.txt",
        "Makefile",
        "schema.hcl",
        # Review finding 6: tooling files beside migrations are no near misses.
        ".sqlfluff",
        ".sqlfluffignore",
        "V1__init.sql.conf",
        "001_init.up.sql.sha256",
        "schema.sql.gz",
        "docs.sql.md",
        "1_start.up.py",
        "2024_01_release.down.md",
        "0000000002_b.down.txt",
        "init.SQL",
    ],
)
def test_a_file_that_is_no_near_miss_is_still_ignored(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, {"0000000001_a.up.sql": "SELECT 1;", name: "text"})
    assert [f.version for f in read_directory(path).files] == [1]
