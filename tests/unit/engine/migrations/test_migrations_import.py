"""`ptah migrations import`: golang-migrate, goose, dbmate and Flyway directories in Ptah's layout.

Each fixture follows its tool's documented layout (names, sections, annotations, script
configuration). The import writes up files only, with Ptah's directives, and a ptah.sum; it
refuses, by file name and rule, what Ptah cannot hold, and writes nothing then.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations import cli
from ptah_operator.engine.migrations.directory import read_directory
from ptah_operator.engine.migrations.tool_import import (
    ImportRefusedError,
    Tool,
    plan_import,
    write_import,
)
from ptah_operator.engine.splitter import split


def _write(path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path


def _import(
    tool: Tool, tmp_path: Path, files: dict[str, str], dialect: Dialect | None = None
) -> Path:
    src = _write(tmp_path / "src", files)
    write_import(plan_import(tool, src, dialect), tmp_path / "out")
    return tmp_path / "out"


def _refused(
    tool: Tool, tmp_path: Path, files: dict[str, str], dialect: Dialect | None = None
) -> ImportRefusedError:
    src = _write(tmp_path / "src", files)
    with pytest.raises(ImportRefusedError) as info:
        write_import(plan_import(tool, src, dialect), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    return info.value


def _names(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


# golang-migrate (its morph variant writes the same names) ------------------------------------

GOLANG_MIGRATE = {
    "000001_create_users.up.sql": "CREATE TABLE users (id BIGINT PRIMARY KEY);\n",
    "000001_create_users.down.sql": "DROP TABLE users;\n",
    "000002_add_v6.0_index.up.sql": "-- morph:nontransactional\n"
    "CREATE INDEX CONCURRENTLY users_id ON users (id);\n",
    "000002_add_v6.0_index.down.sql": "DROP INDEX users_id;\n",
    "README.md": "how to run the migrations\n",
}


def test_golang_migrate_up_files_are_copied_byte_for_byte(tmp_path: Path) -> None:
    out = _import(Tool.GOLANG_MIGRATE, tmp_path, GOLANG_MIGRATE)
    assert _names(out) == ["000001_create_users.up.sql", "000002_add_v6.0_index.up.sql", "ptah.sum"]
    directory = read_directory(out)
    assert directory.sum_verified
    for file in directory.files:
        source = (tmp_path / "src" / file.name).read_bytes()
        assert file.checksum == hashlib.sha256(source).hexdigest()
    assert [f.no_transaction for f in directory.files] == [False, True]
    assert directory.files[1].description == "add_v6.0_index"


def test_golang_migrate_plan_reports_each_file_and_what_was_left_out(tmp_path: Path) -> None:
    plan = plan_import(Tool.GOLANG_MIGRATE, _write(tmp_path, GOLANG_MIGRATE))
    assert [(f.source, f.changes) for f in plan.files] == [
        ("000001_create_users.up.sql", ("copied unchanged",)),
        ("000002_add_v6.0_index.up.sql", ("copied unchanged",)),
    ]
    assert [(s.source, s.why.split(" (")[0]) for s in plan.skipped] == [
        ("000001_create_users.down.sql", "a down file"),
        ("000002_add_v6.0_index.down.sql", "a down file"),
        ("README.md", "not a migration name"),
    ]


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({"1_a.up.cql": "x"}, "NotSQL"),
        ({"12345678901234567890_a.up.sql": "x"}, "BadVersion"),
        ({"1_a.up.sql": "x", "01_b.up.sql": "y"}, "DuplicateVersion"),
        (
            {"1_a.up.sql": "-- +goose Up\nSELECT 1;\n-- +goose Down\nSELECT 2;\n"},
            "ForeignDirective",
        ),
        ({"1_a.down.sql": "x"}, "NothingToImport"),
    ],
)
def test_golang_migrate_refusals(tmp_path: Path, files: dict[str, str], reason: str) -> None:
    assert _refused(Tool.GOLANG_MIGRATE, tmp_path, files).reason == reason


def test_golang_migrate_titles_ptah_cannot_hold_are_renamed(tmp_path: Path) -> None:
    out = _import(Tool.GOLANG_MIGRATE, tmp_path, {"7_add users+roles.up.sql": "SELECT 1;\n"})
    assert _names(out) == ["7_add_users_roles.up.sql", "ptah.sum"]


# goose -----------------------------------------------------------------------------------------

GOOSE_USERS = """-- +goose Up
CREATE TABLE users (id BIGINT PRIMARY KEY);

-- +goose Down
DROP TABLE users;
"""
GOOSE_FUNCTION = """-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION touch() RETURNS trigger AS $$
BEGIN
  NEW.updated_at = now();
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DROP FUNCTION touch();
-- +goose StatementEnd
"""
GOOSE_INDEX = """-- +goose NO TRANSACTION
-- +goose Up
CREATE INDEX CONCURRENTLY users_id ON users (id);

-- +goose Down
DROP INDEX CONCURRENTLY users_id;
"""


def test_goose_files_keep_their_up_section_with_ptah_directives(tmp_path: Path) -> None:
    out = _import(
        Tool.GOOSE,
        tmp_path,
        {
            "00001_create_users.sql": GOOSE_USERS,
            "00002_touch.sql": GOOSE_FUNCTION,
            "20240101120000_index.sql": GOOSE_INDEX,
        },
        Dialect.POSTGRESQL,
    )
    assert _names(out) == [
        "00001_create_users.up.sql",
        "00002_touch.up.sql",
        "20240101120000_index.up.sql",
        "ptah.sum",
    ]
    users, touch, index = read_directory(out).files
    assert "DROP" not in users.sql
    assert "goose" not in users.sql
    assert [s.text.split()[0] for s in split(touch.sql, Dialect.POSTGRESQL)] == ["CREATE"]
    assert "goose" not in touch.sql
    assert "DROP" not in touch.sql
    assert index.no_transaction
    assert index.sql.startswith("-- +ptah no_transaction\n")
    assert (users.version, index.version) == (1, 20240101120000)


GOOSE_PROCEDURE = """-- +goose Up
-- +goose StatementBegin
CREATE PROCEDURE add_user(IN n INT)
BEGIN
  INSERT INTO users (id) VALUES (n);
  SELECT n;
END;
-- +goose StatementEnd
-- +goose Down
DROP PROCEDURE add_user;
"""


def test_goose_blocks_for_mysql_keep_whole_with_delimiter_lines(tmp_path: Path) -> None:
    out = _import(Tool.GOOSE, tmp_path, {"1_proc.sql": GOOSE_PROCEDURE}, Dialect.MYSQL)
    (file,) = read_directory(out).files
    statements = split(file.sql, Dialect.MYSQL)
    assert len(statements) == 1
    assert statements[0].text.startswith("CREATE PROCEDURE")
    assert statements[0].text.rstrip().endswith("END")


def test_a_goose_block_ptah_would_cut_needs_the_engine_named(tmp_path: Path) -> None:
    refusal = _refused(Tool.GOOSE, tmp_path, {"2_touch.sql": GOOSE_FUNCTION})
    assert refusal.reason == "StatementBlockNeedsEngine"
    assert "2_touch.sql line 2" in refusal.message
    assert "--engine" in refusal.message


def test_a_goose_block_of_one_statement_needs_no_engine(tmp_path: Path) -> None:
    text = "-- +goose Up\n-- +goose StatementBegin\nSELECT 1;\n-- +goose StatementEnd\n"
    out = _import(Tool.GOOSE, tmp_path, {"3_one.sql": text})
    assert read_directory(out).files[0].sql == "SELECT 1;\n"


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({"1_a.go": "package migrations\n"}, "GoMigration"),
        ({"1_a.sql": "-- +goose Up\n-- +goose ENVSUB ON\nSELECT '${X}';\n"}, "GooseEnvsub"),
        ({"1_a.sql": "SELECT 1;\n"}, "GooseAnnotation"),
        ({"1_a.sql": "-- +goose Up\n  -- +goose StatementBegin\nSELECT 1;\n"}, "GooseAnnotation"),
        ({"1_a.sql": "-- +goose Up\n-- +goose StatementBegin\nSELECT 1;\n"}, "GooseAnnotation"),
        ({"1_a.sql": "-- +goose Upp\nSELECT 1;\n"}, "GooseAnnotation"),
        ({"0_a.sql": "-- +goose Up\nSELECT 1;\n"}, "BadVersion"),
        ({"init.sql": "-- +goose Up\nSELECT 1;\n"}, "BadFileName"),
    ],
)
def test_goose_refusals(tmp_path: Path, files: dict[str, str], reason: str) -> None:
    assert _refused(Tool.GOOSE, tmp_path, files).reason == reason


# dbmate ----------------------------------------------------------------------------------------

DBMATE = {
    "20240101120000_create_users.sql": "-- migrate:up\nCREATE TABLE users (id BIGINT);\n\n"
    "-- migrate:down\nDROP TABLE users;\n",
    "20240102120000_index_users.sql": "-- migrate:up transaction:false\n"
    "CREATE INDEX CONCURRENTLY users_id ON users (id);\n\n-- migrate:down\nDROP INDEX users_id;\n",
    "schema.sql": "-- dbmate dump\n",
}


def test_dbmate_files_keep_their_up_section_with_ptah_directives(tmp_path: Path) -> None:
    # schema.sql is dbmate's schema dump, not a migration: dbmate ignores it (no leading digits).
    out = _import(Tool.DBMATE, tmp_path, DBMATE)
    users, index = read_directory(out).files
    assert users.sql == "CREATE TABLE users (id BIGINT);\n\n"
    assert not users.no_transaction
    assert index.no_transaction
    assert "DROP" not in index.sql
    assert "migrate:" not in index.sql


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        (
            {"9_a.sql": "-- migrate:up\nSELECT 1;\n", "10_b.sql": "-- migrate:up\nSELECT 2;\n"},
            "OrderDiffers",
        ),
        (
            {"1_a.sql": "-- migrate:up\nSELECT 1;\n-- migrate:down\n-- migrate:up\nSELECT 2;\n"},
            "DbmateSection",
        ),
        ({"1_a.sql": "SELECT 1;\n-- migrate:up\nSELECT 2;\n"}, "DbmateSection"),
        ({"1_a.sql": "SELECT 1;\n"}, "DbmateSection"),
        (
            {"1_a.sql": "-- migrate:up\nSELECT 1;\n", "001_b.sql": "-- migrate:up\nSELECT 2;\n"},
            "DuplicateVersion",
        ),
    ],
)
def test_dbmate_refusals(tmp_path: Path, files: dict[str, str], reason: str) -> None:
    assert _refused(Tool.DBMATE, tmp_path, files).reason == reason


# Flyway ----------------------------------------------------------------------------------------

FLYWAY = {
    "V1__Create_users.sql": "CREATE TABLE users (id BIGINT PRIMARY KEY);\n",
    "V002__Add index.sql": "CREATE INDEX users_id ON users (id);\n",
    "V002__Add index.sql.conf": "executeInTransaction=false\n",
    "V3__Concurrent.sql": "CREATE INDEX CONCURRENTLY users_id2 ON users (id);\n",
    "U1__Create_users.sql": "DROP TABLE users;\n",
    "release2/V4.0__In_a_subdirectory.sql": "SELECT 4;\n",
}


def test_flyway_versioned_files_become_ptah_files(tmp_path: Path) -> None:
    out = _import(Tool.FLYWAY, tmp_path, FLYWAY)
    assert _names(out) == [
        "002_Add_index.up.sql",
        "1_Create_users.up.sql",
        "3_Concurrent.up.sql",
        "4_In_a_subdirectory.up.sql",
        "ptah.sum",
    ]
    files = read_directory(out).files
    assert [f.version for f in files] == [1, 2, 3, 4]
    assert [f.no_transaction for f in files] == [False, True, True, False]
    first = files[0]
    assert first.checksum == hashlib.sha256(FLYWAY["V1__Create_users.sql"].encode()).hexdigest()


@pytest.mark.parametrize(
    ("files", "reason", "says"),
    [
        ({"V1.1__Patch.sql": "x"}, "DottedVersion", "has 2 parts"),
        ({"V1_1__Patch.sql": "x"}, "DottedVersion", "rename the Flyway files"),
        ({"R__Views.sql": "x"}, "FlywayRepeatable", "repeatable"),
        ({"B5__Baseline.sql": "x"}, "FlywayBaseline", "baseline"),
        ({"V1__a.sql": "CREATE TABLE ${table} (id INT);"}, "FlywayPlaceholder", "placeholder"),
        (
            {"V1__a.sql": "x", "V1__a.sql.conf": "shouldExecute=false\n"},
            "FlywayScriptConfig",
            "shouldExecute",
        ),
        ({"beforeMigrate.sql": "x"}, "FlywayCallback", "callback"),
        ({"V1__a.sql": "x", "V1.0__b.sql": "y"}, "DuplicateVersion", "share version 1"),
        ({"Vx__a.sql": "x"}, "BadVersion", "digits"),
    ],
)
def test_flyway_refusals(tmp_path: Path, files: dict[str, str], reason: str, says: str) -> None:
    refusal = _refused(Tool.FLYWAY, tmp_path, files)
    assert refusal.reason == reason
    assert says in refusal.message


def test_flyway_placeholders_are_left_alone_when_replacement_is_off(tmp_path: Path) -> None:
    files = {"V1__a.sql": "SELECT '${x}';\n", "V1__a.sql.conf": "placeholderReplacement=false\n"}
    out = _import(Tool.FLYWAY, tmp_path, files)
    assert read_directory(out).files[0].sql == "SELECT '${x}';\n"


# The command line ------------------------------------------------------------------------------


def test_cli_prints_what_it_changed_file_by_file_and_no_sql(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _write(
        tmp_path / "src", {"00001_create_users.sql": GOOSE_USERS, "00003_ix.sql": GOOSE_INDEX}
    )
    code = cli.main(["import", "--from", "goose", str(src), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert "imported 2 file(s) from goose" in out
    assert "00001_create_users.up.sql  <- 00001_create_users.sql" in out
    assert "-- +goose NO TRANSACTION became -- +ptah no_transaction" in out
    assert "wrote ptah.sum: sha256:" in out
    assert "CREATE" not in out
    assert "DROP" not in out
    assert err == ""


def test_cli_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _write(tmp_path / "src", GOLANG_MIGRATE)
    out_dir = tmp_path / "out"
    args = ["import", "--from", "golang-migrate", str(src), "--out", str(out_dir)]
    assert cli.main([*args, "--output", "json"]) == cli.EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "import"
    assert doc["from"] == "golang-migrate"
    assert [f["target"] for f in doc["files"]] == [
        "000001_create_users.up.sql",
        "000002_add_v6.0_index.up.sql",
    ]
    assert doc["fileCount"] == 2
    assert doc["sumVerified"] is True
    assert doc["directoryHash"] == "sha256:" + read_directory(out_dir).directory_hash


@pytest.mark.parametrize(
    ("argv", "code", "reason"),
    [
        (["--from", "goose", "{src}", "--out", "{full}"], cli.EXIT_REFUSED, "OutNotEmpty"),
        (["--from", "goose", "{missing}", "--out", "{out}"], cli.EXIT_REFUSED, "NotADirectory"),
        (["--from", "flyway", "{src}", "--out", "{out}"], cli.EXIT_REFUSED, "NothingToImport"),
        (["--from", "liquibase", "{src}", "--out", "{out}"], cli.EXIT_USAGE, None),
        (["--from", "goose", "{src}"], cli.EXIT_USAGE, None),
    ],
)
def test_cli_refusals_exit_codes_and_no_traceback(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    reason: str | None,
) -> None:
    src = _write(tmp_path / "src", {"00001_create_users.sql": GOOSE_USERS})
    full = _write(tmp_path / "full", {"keep.txt": "mine"})
    paths = {"src": src, "full": full, "missing": tmp_path / "nope", "out": tmp_path / "out"}
    assert cli.main(["import", *(a.format(**paths) for a in argv)]) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if reason is not None:
        assert f"ptah migrations import: {reason}:" in err
    assert not (tmp_path / "out").exists()
    assert _names(full) == ["keep.txt"]


def test_an_unreadable_source_file_is_a_refusal_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _write(tmp_path / "src", {"1_a.up.sql": "SELECT 1;\n"})
    unreadable = src / "1_a.up.sql"
    unreadable.chmod(0)
    if os.geteuid() == 0:
        # Root reads a file of mode 0 all the same: the refusal the kernel gives anyone else
        # is given here by the read itself.
        read_bytes = Path.read_bytes

        def refused(path: Path) -> bytes:
            if path == unreadable:
                raise PermissionError(13, "Permission denied")
            return read_bytes(path)

        monkeypatch.setattr(Path, "read_bytes", refused)
    with pytest.raises(ImportRefusedError) as info:
        plan_import(Tool.GOLANG_MIGRATE, src)
    assert info.value.reason == "Unreadable"
