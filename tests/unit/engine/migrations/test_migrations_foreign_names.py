"""Names and directives other tools write, read by the directory reader as they stand.

golang-migrate's layout is Ptah's: its names are read unchanged (dots, dashes, an empty title),
and morph's, goose's and dbmate's no-transaction markers count as Ptah's own. A name or marker
Ptah cannot hold is refused with the rule it breaks and what to do.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ptah_operator.engine.migrations.directory import (
    DirectoryError,
    FileKind,
    read_directory,
    render_sum,
)
from ptah_operator.engine.migrations.revision_table import foreign_tool


def _write(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (path / name).write_text(content)
    return path


def _refusal(path: Path) -> DirectoryError:
    with pytest.raises(DirectoryError) as info:
        read_directory(path)
    return info.value


@pytest.mark.parametrize(
    ("name", "version", "description"),
    [
        ("000123_add_v6.0_index.up.sql", 123, "add_v6.0_index"),
        ("1_.up.sql", 1, ""),
        ("20240101120000_add-users.up.sql", 20240101120000, "add-users"),
        ("7_a.up.b.up.sql", 7, "a.up.b"),
        ("8_x.down.up.sql", 8, "x.down"),
        ("9_" + "d" * 200 + ".up.sql", 9, "d" * 200),
        ("10_.v2..up.sql", 10, ".v2."),
    ],
)
def test_golang_migrate_names_are_read_as_golang_migrate_reads_them(
    tmp_path: Path, name: str, version: int, description: str
) -> None:
    directory = read_directory(_write(tmp_path, {name: "SELECT 1;\n"}))
    (file,) = directory.files
    assert (file.version, file.description, file.kind) == (version, description, FileKind.MIGRATION)


def test_dotted_names_pair_with_their_down_files_and_checkpoints_keep_their_suffix(
    tmp_path: Path,
) -> None:
    directory = read_directory(
        _write(
            tmp_path,
            {
                "000123_add_v6.0_index.up.sql": "SELECT 1;",
                "000123_add_v6.0_index.down.sql": "SELECT 2;",
                "000200_v6.1.checkpoint.up.sql": "SELECT 3;",
            },
        )
    )
    first, second = directory.files
    assert first.down_name == "000123_add_v6.0_index.down.sql"
    assert (second.kind, second.description) == (FileKind.CHECKPOINT, "v6.1")


def test_checksums_and_ptah_sum_of_an_existing_directory_do_not_change(tmp_path: Path) -> None:
    """The hash is over names and bytes only: widening the names changed no existing hash."""
    files = {"0000000001_users.up.sql": "CREATE TABLE u (id INT);\n", "0000000002_x.up.sql": "-"}
    directory = read_directory(_write(tmp_path, files))
    entries = sorted((n, hashlib.sha256(t.encode()).hexdigest()) for n, t in files.items())
    assert list(directory.sum_entries) == entries
    digest = hashlib.sha256()
    for name, checksum in entries:
        digest.update(f"{name} sha256:{checksum}\n".encode())
    assert directory.directory_hash == digest.hexdigest()
    (tmp_path / "ptah.sum").write_text(render_sum(entries))
    assert read_directory(tmp_path).sum_verified


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("1_a b.up.sql", "rename it, e.g. 1_a_b.up.sql"),
        ("2_caf\u00e9.up.sql", "letters, digits, '.', '_' and '-'"),
        ("3_" + "d" * 201 + ".up.sql", "at most 200"),
        ("12345678901234567890_a.up.sql", "more than 18 digits"),
        ("V1.2__add_users.sql", "--from flyway"),
        ("V1__init.sql", "--from flyway"),
        ("R__views.sql", "--from flyway"),
        ("20240101120000_create_users.sql", "--from goose"),
        ("00001_init.sql", "--from dbmate"),
        ("abc_a.up.sql", "is not NNNN_description.up.sql"),
    ],
)
def test_names_ptah_cannot_hold_are_refused_with_the_rule(
    tmp_path: Path, name: str, says: str
) -> None:
    refusal = _refusal(_write(tmp_path, {name: "SELECT 1;"}))
    assert refusal.reason == "BadFileName"
    assert says in str(refusal)


@pytest.mark.req("MIG-56")
@pytest.mark.parametrize(
    "header",
    [
        "-- morph:nontransactional\n",
        "-- +goose NO TRANSACTION\n-- +goose Up\n",
        "-- +goose Up\n-- +goose no transaction\n",
        "--+goose NO   TRANSACTION\n--+goose Up\n",
        "-- +goose Up\n-- +goose NO TRANSACTION\n",
        "-- migrate:up transaction:false\n",
        "--migrate:up  foo:bar transaction:false\n",
        "-- +ptah no_transaction\n",
    ],
)
def test_other_tools_no_transaction_markers_count_as_ptahs(tmp_path: Path, header: str) -> None:
    path = _write(
        tmp_path,
        {
            "1_index.up.sql": header + "CREATE INDEX CONCURRENTLY i ON t (c);\n",
            "2_plain.up.sql": "-- +goose Up\nSELECT 1;\n",
            "3_plain.up.sql": "-- migrate:up\nSELECT 1;\n",
        },
    )
    first, *others = read_directory(path).files
    assert first.no_transaction
    assert not any(other.no_transaction for other in others)


def test_a_morph_marker_counts_only_as_the_first_line(tmp_path: Path) -> None:
    refusal = _refusal(
        _write(tmp_path, {"1_a.up.sql": "-- index\n-- morph:nontransactional\nSELECT 1;"})
    )
    assert refusal.reason == "MisplacedDirective"
    assert "first line" in str(refusal)


@pytest.mark.parametrize(
    ("text", "reason", "says"),
    [
        ("-- +goose Up\nSELECT 1;\n-- +goose Down\nSELECT 2;\n", "UnknownDirective", "goose"),
        (
            "-- +goose Up\n-- +goose StatementBegin\nSELECT 1;\n-- +goose StatementEnd\n",
            "UnknownDirective",
            "--from goose",
        ),
        ("-- +goose ENVSUB ON\nSELECT 1;\n", "UnknownDirective", "--from goose"),
        ("SELECT 1;\n-- +goose NO TRANSACTION\n", "MisplacedDirective", "goose"),
        ("-- migrate:up\nSELECT 1;\n-- migrate:down\nSELECT 2;\n", "UnknownDirective", "dbmate"),
        ("SELECT 1;\n-- migrate:up\nSELECT 2;\n", "UnknownDirective", "dbmate"),
        ("-- morph:nontransactional,other\nSELECT 1;\n", "UnknownDirective", "morph"),
    ],
)
def test_other_tools_markers_ptah_would_run_through_are_refused(
    tmp_path: Path, text: str, reason: str, says: str
) -> None:
    refusal = _refusal(_write(tmp_path, {"1_a.up.sql": text}))
    assert refusal.reason == reason
    assert says in str(refusal)
    assert "SELECT" not in str(refusal)


@pytest.mark.parametrize(
    ("columns", "tool"),
    [
        ({"version", "dirty"}, "golang-migrate"),
        ({"version", "name"}, "morph"),
        ({"version"}, "dbmate (or Rails)"),
        ({"id", "version_id", "is_applied", "tstamp"}, "goose"),
        (
            {"installed_rank", "version", "description", "type", "script", "checksum"}
            | {"installed_by", "installed_on", "execution_time", "success"},
            "Flyway",
        ),
        ({"version", "applied"}, None),
    ],
)
def test_other_tools_revision_tables_are_named_by_their_columns(
    columns: set[str], tool: str | None
) -> None:
    assert foreign_tool(frozenset(columns)) == tool
