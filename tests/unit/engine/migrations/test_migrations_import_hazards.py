"""Where another tool's directory could be misread: a review's findings, each as a test.

A title ending `.checkpoint` (Ptah's checkpoint suffix), a marker of a tool other than the
source's, a Flyway script Flyway itself refuses, a goose block holding every stock delimiter,
and file names that are not printable text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations import cli
from ptah_operator.engine.migrations.directory import (
    DirectoryError,
    FileKind,
    read_directory,
)
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


def _refused(tool: Tool, tmp_path: Path, files: dict[str, str]) -> ImportRefusedError:
    src = _write(tmp_path / "src", files)
    with pytest.raises(ImportRefusedError) as info:
        write_import(plan_import(tool, src), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    return info.value


# A title ending in `.checkpoint` --------------------------------------------------------------

_CHECKPOINT_TITLES = [
    (Tool.GOLANG_MIGRATE, "2_release.checkpoint.up.sql", "SELECT 2;\n"),
    (Tool.GOOSE, "2_release.checkpoint.sql", "-- +goose Up\nSELECT 2;\n"),
    (Tool.DBMATE, "2_release.checkpoint.sql", "-- migrate:up\nSELECT 2;\n"),
    (Tool.FLYWAY, "V2__release.checkpoint.sql", "SELECT 2;\n"),
]


@pytest.mark.parametrize(("tool", "name", "text"), _CHECKPOINT_TITLES)
def test_a_title_ending_in_checkpoint_is_imported_as_a_migration_not_a_checkpoint(
    tmp_path: Path, tool: Tool, name: str, text: str
) -> None:
    first = {
        Tool.GOLANG_MIGRATE: ("1_init.up.sql", "SELECT 1;\n"),
        Tool.GOOSE: ("1_init.sql", "-- +goose Up\nSELECT 1;\n"),
        Tool.DBMATE: ("1_init.sql", "-- migrate:up\nSELECT 1;\n"),
        Tool.FLYWAY: ("V1__init.sql", "SELECT 1;\n"),
    }[tool]
    src = _write(tmp_path / "src", {first[0]: first[1], name: text})
    plan = plan_import(tool, src)
    directory = write_import(plan, tmp_path / "out")
    assert [f.kind for f in directory.files] == [FileKind.MIGRATION, FileKind.MIGRATION]
    second = directory.files[1]
    assert second.name == "2_release_checkpoint.up.sql"
    changes = next(f.changes for f in plan.files if f.source == name)
    assert any("checkpoint" in change for change in changes)
    assert "copied unchanged" not in changes


@pytest.mark.parametrize("title", ["release", ""])
def test_a_checkpoint_name_with_a_down_file_is_refused_as_golang_migrates_not_guessed(
    tmp_path: Path, title: str
) -> None:
    """golang-migrate reads `2_x.checkpoint.up.sql` as migration `x.checkpoint`; a down file of
    the same name says it was written so. Ptah refuses rather than pick one reading."""
    _write(
        tmp_path,
        {
            "1_init.up.sql": "SELECT 1;\n",
            f"2_{title}.checkpoint.up.sql": "SELECT 2;\n",
            f"2_{title}.checkpoint.down.sql": "SELECT 3;\n",
        },
    )
    with pytest.raises(DirectoryError) as info:
        read_directory(tmp_path)
    assert info.value.reason == "BadFileName"
    message = str(info.value)
    assert "golang-migrate" in message
    assert f"2_{title}_checkpoint.up.sql" in message
    assert "--from golang-migrate" in message


def test_a_checkpoint_without_a_down_file_stays_a_checkpoint(tmp_path: Path) -> None:
    _write(tmp_path, {"1_init.up.sql": "SELECT 1;\n", "2_v6.1.checkpoint.up.sql": "SELECT 2;\n"})
    assert read_directory(tmp_path).files[1].kind is FileKind.CHECKPOINT


# Markers of a tool other than the source's --------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "files", "line"),
    [
        (
            Tool.GOOSE,
            {"1_a.sql": "-- migrate:up transaction:false\n-- +goose Up\nCREATE TABLE t (i INT);\n"},
            "1_a.sql line 1",
        ),
        (
            Tool.GOOSE,
            {"1_a.sql": "-- +goose Up\n-- migrate:up transaction:false\nCREATE TABLE t (i INT);\n"},
            "1_a.sql line 2",
        ),
        (
            Tool.GOLANG_MIGRATE,
            {"1_a.up.sql": "-- +goose NO TRANSACTION\nCREATE TABLE t (i INT);\n"},
            "1_a.up.sql line 1",
        ),
        (
            Tool.GOLANG_MIGRATE,
            {"1_a.up.sql": "-- migrate:up transaction:false\nCREATE TABLE t (i INT);\n"},
            "1_a.up.sql line 1",
        ),
        (
            Tool.DBMATE,
            {"1_a.sql": "-- migrate:up\n-- +goose NO TRANSACTION\nCREATE TABLE t (i INT);\n"},
            "1_a.sql line 2",
        ),
        (
            Tool.DBMATE,
            {"1_a.sql": "-- migrate:up\n-- morph:nontransactional\nCREATE TABLE t (i INT);\n"},
            "1_a.sql line 2",
        ),
        (
            Tool.FLYWAY,
            {"V1__a.sql": "-- morph:nontransactional\nCREATE TABLE t (i INT);\n"},
            "V1__a.sql line 1",
        ),
        (
            Tool.FLYWAY,
            {"V1__a.sql": "-- +goose NO TRANSACTION\nCREATE TABLE t (i INT);\n"},
            "V1__a.sql line 1",
        ),
    ],
)
def test_import_refuses_a_marker_the_source_tool_ignores_and_ptah_would_honour(
    tmp_path: Path, tool: Tool, files: dict[str, str], line: str
) -> None:
    refusal = _refused(tool, tmp_path, files)
    assert refusal.reason == "ForeignDirective"
    assert line in refusal.message
    assert f"{tool.value} ignores" in refusal.message
    assert "CREATE" not in refusal.message


def test_import_still_translates_the_source_tools_own_marker(tmp_path: Path) -> None:
    morph = "-- morph:nontransactional\nCREATE INDEX CONCURRENTLY i ON t (c);\n"
    out = _import(Tool.GOLANG_MIGRATE, tmp_path, {"1_a.up.sql": morph})
    assert read_directory(out).files[0].no_transaction


@pytest.mark.req("MIG-56")
def test_a_goose_no_transaction_marker_counts_only_in_a_file_goose_would_run(
    tmp_path: Path,
) -> None:
    """goose refuses a file without `-- +goose Up`, so its marker there is not goose's."""
    _write(tmp_path, {"1_a.up.sql": "-- +goose NO TRANSACTION\nCREATE TABLE t (i INT);\n"})
    with pytest.raises(DirectoryError) as info:
        read_directory(tmp_path)
    assert info.value.reason == "UnknownDirective"
    assert "-- +goose Up" in str(info.value)
    assert "-- +ptah no_transaction" in str(info.value)


@pytest.mark.parametrize(
    "header",
    [
        "-- +goose Up\n-- migrate:up\n",
        "-- morph:nontransactional\n-- +goose Up\n",
        "-- migrate:up transaction:false\n-- +goose Up\n-- +goose NO TRANSACTION\n",
    ],
)
def test_a_file_holding_two_tools_markers_is_refused(tmp_path: Path, header: str) -> None:
    _write(tmp_path, {"1_a.up.sql": header + "SELECT 1;\n"})
    with pytest.raises(DirectoryError) as info:
        read_directory(tmp_path)
    assert info.value.reason == "MixedDirectives"
    assert "1_a.up.sql line 2" in str(info.value)


# A Flyway script mixing transactional and non-transactional statements -----------------------

_MIXED = "CREATE TABLE t (id INT);\nCREATE INDEX CONCURRENTLY t_id ON t (id);\n"


def test_a_flyway_script_flyway_refuses_as_mixed_is_refused(tmp_path: Path) -> None:
    refusal = _refused(Tool.FLYWAY, tmp_path, {"V1__mixed.sql": _MIXED})
    assert refusal.reason == "FlywayMixed"
    assert "V1__mixed.sql" in refusal.message
    assert "mixed=true" in refusal.message


@pytest.mark.parametrize("conf", ["mixed=true\n", "executeInTransaction=false\n"])
def test_a_mixed_flyway_script_flyway_runs_outside_a_transaction_is_imported_so(
    tmp_path: Path, conf: str
) -> None:
    out = _import(Tool.FLYWAY, tmp_path, {"V1__mixed.sql": _MIXED, "V1__mixed.sql.conf": conf})
    assert read_directory(out).files[0].no_transaction


def test_a_flyway_script_of_only_non_transactional_statements_needs_no_mixed(
    tmp_path: Path,
) -> None:
    text = "CREATE INDEX CONCURRENTLY a ON t (a);\nCREATE INDEX CONCURRENTLY b ON t (b);\n"
    out = _import(Tool.FLYWAY, tmp_path, {"V1__ix.sql": text})
    assert read_directory(out).files[0].no_transaction


_SECRET = "s3cr3t-never-shown"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "flyway.conf",
            f"flyway.url=jdbc:postgresql://db/x\nflyway.password={_SECRET}\nflyway.mixed=true\n",
        ),
        ("flyway.conf", "# global settings\nflyway.mixed = TRUE\n"),
        (
            "flyway.toml",
            f'[flyway]\nmixed = true\n[environments.default]\npassword = "{_SECRET}"\n',
        ),
        ("flyway.toml", '[flyway]\nmixed = "true"\n'),
    ],
)
def test_flyways_global_mixed_setting_beside_the_scripts_is_read(
    tmp_path: Path, name: str, text: str
) -> None:
    src = _write(tmp_path / "src", {"V1__mixed.sql": _MIXED, name: text})
    plan = plan_import(Tool.FLYWAY, src)
    write_import(plan, tmp_path / "out")
    assert read_directory(tmp_path / "out").files[0].no_transaction
    assert [s.source for s in plan.skipped] == [name]
    assert _SECRET not in repr(plan)


@pytest.mark.parametrize(
    "files",
    [
        {"flyway.conf": "flyway.mixed=false\n"},
        {"flyway.toml": "[flyway]\nmixed = false\n"},
        {"flyway.conf": "flyway.mixed=true\n", "V1__mixed.sql.conf": "mixed=false\n"},
    ],
)
def test_a_mixed_flyway_script_is_refused_unless_a_setting_allows_it(
    tmp_path: Path, files: dict[str, str]
) -> None:
    refusal = _refused(Tool.FLYWAY, tmp_path, {"V1__mixed.sql": _MIXED, **files})
    assert refusal.reason == "FlywayMixed"


@pytest.mark.parametrize(
    "files",
    [
        {"flyway.conf": "flyway.mixed=true\n", "flyway.toml": "[flyway]\nmixed = false\n"},
        {"flyway.toml": f"[flyway\nmixed = {_SECRET}\n"},
        {"flyway.conf": f"flyway.mixed={_SECRET}\n"},
    ],
)
def test_a_global_flyway_setting_that_cannot_be_read_is_refused_by_file_name(
    tmp_path: Path, files: dict[str, str]
) -> None:
    refusal = _refused(Tool.FLYWAY, tmp_path, {"V1__mixed.sql": _MIXED, **files})
    assert refusal.reason == "FlywayConfig"
    assert _SECRET not in refusal.message
    assert any(name in refusal.message for name in files)


# A goose block holding every stock delimiter -------------------------------------------------


def test_a_goose_block_holding_every_candidate_delimiter_gets_one_of_its_own(
    tmp_path: Path,
) -> None:
    text = (
        "-- +goose Up\n-- +goose StatementBegin\n"
        "CREATE PROCEDURE p()\nBEGIN\n"
        "  SELECT '$$', '//', '$$$$', '@@@@';\n  SELECT 2;\nEND;\n"
        "-- +goose StatementEnd\n"
    )
    out = _import(Tool.GOOSE, tmp_path, {"1_p.sql": text}, Dialect.MYSQL)
    (file,) = read_directory(out).files
    (statement,) = split(file.sql, Dialect.MYSQL)
    assert "SELECT '$$', '//', '$$$$', '@@@@';" in statement.text
    assert statement.text.rstrip().endswith("END")


# File names that are not printable text -------------------------------------------------------


def _odd_names(src: Path) -> None:
    src.mkdir()
    for raw in (b"1_caf\xe9.up.sql", b"2_a\x1b[31mred.up.sql", b"notes\x07.txt"):
        with open(os.fsencode(src) + b"/" + raw, "wb") as handle:
            handle.write(b"SELECT 1;\n")


def _printable(text: str) -> bool:
    return all(c.isprintable() or c == "\n" for c in text) and all(
        not 0xD800 <= ord(c) <= 0xDFFF for c in text
    )


def test_the_import_report_escapes_names_that_are_not_printable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _odd_names(tmp_path / "src")
    argv = ["import", "--from", "golang-migrate", str(tmp_path / "src")]
    assert cli.main([*argv, "--out", str(tmp_path / "out")]) == cli.EXIT_OK
    text = capsys.readouterr().out
    assert _printable(text)
    assert "1_caf\\xe9.up.sql" in text
    assert "2_a\\x1b[31mred.up.sql" in text
    assert "notes\\x07.txt" in text

    assert cli.main([*argv, "--out", str(tmp_path / "out2"), "--output", "json"]) == cli.EXIT_OK
    raw = capsys.readouterr().out
    doc = json.loads(raw)
    sources = [f["source"] for f in doc["files"]] + [s["source"] for s in doc["skipped"]]
    assert sources == ["1_caf\\xe9.up.sql", "2_a\\x1b[31mred.up.sql", "notes\\x07.txt"]
    assert all(_printable(s) for s in sources)
    assert "\\ud" not in raw


def test_an_import_refusal_escapes_names_that_are_not_printable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    with open(os.fsencode(src) + b"/1_a\x1b]0;x\x07\xff.up.cql", "wb") as handle:
        handle.write(b"SELECT 1;\n")
    argv = ["import", "--from", "golang-migrate", str(src), "--out", str(tmp_path / "out")]
    assert cli.main(argv) == cli.EXIT_REFUSED
    err = capsys.readouterr().err
    assert "NotSQL" in err
    assert _printable(err)
    assert "1_a\\x1b]0;x\\x07\\xff.up.cql" in err


@pytest.mark.parametrize(
    "raw",
    [
        b"1_a\nptah migrations up: Applied.up.sql",
        b"2_b\x1b[31mred.up.SQL",
        b"3_c\xff\x07.up.sql",
    ],
)
@pytest.mark.parametrize("command", ["up", "status", "hash"])
@pytest.mark.parametrize("output", ["text", "json"])
def test_a_reader_refusal_escapes_names_that_are_not_printable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: bytes, command: str, output: str
) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    with open(os.fsencode(directory) + b"/" + raw, "wb") as handle:
        handle.write(b"SELECT 1;\n")
    argv = [command, "--migrations-dir", str(directory), "--output", output]
    if command != "hash":
        argv += ["--db-url", "postgresql://nobody@127.0.0.1:9/none"]
    assert cli.main(argv) == cli.EXIT_REFUSED
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "BadFileName" in text
    assert _printable(text)
    # One line of text per refusal: a name cannot add a line of its own (or forge one).
    if output == "text":
        assert captured.err.count("\n") == 1
    else:
        message = json.loads(captured.out)["error"]["message"]
        assert _printable(message)
        assert "\\ud" not in captured.out


def test_a_reader_refusal_inside_an_import_is_escaped_once(tmp_path: Path) -> None:
    # The import reads back what it staged; a refusal there keeps one level of escaping.
    error = DirectoryError("BadFileName", "1_a\x1b.up.sql: refused")
    assert str(error) == "1_a\\x1b.up.sql: refused"
    assert ImportRefusedError(error.reason, error.raw).message == str(error)
