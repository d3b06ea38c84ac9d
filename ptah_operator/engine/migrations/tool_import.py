"""`ptah migrations import`: another tool's migration directory rewritten in Ptah's layout.

The source is read as its own tool reads it (golang-migrate, goose, dbmate, Flyway; the rules
are in docs/guide-migrations.md, "Coming from another tool"); the result is a directory of up
files named `<version>_<description>.up.sql` with Ptah's directives and a `ptah.sum`. Down and
undo files are left out (Ptah runs up files only). Anything Ptah cannot hold faithfully (a
Flyway dotted version, a repeatable migration, a Go migration, environment or placeholder
substitution) refuses the whole import by file name and rule: a partial history is worse than
none. Nothing is written unless every file converts, and never into a non-empty directory.

Reports name files, line numbers and what changed; never SQL text.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.directory import (
    SUM_FILE,
    DirectoryError,
    Limits,
    MigrationDirectory,
    marker_tool,
    printable,
    read_directory,
    render_sum,
)
from ptah_operator.engine.splitter import SplitError, split


class Tool(StrEnum):
    GOLANG_MIGRATE = "golang-migrate"
    GOOSE = "goose"
    DBMATE = "dbmate"
    FLYWAY = "flyway"


class ImportRefusedError(Exception):
    """The source cannot be imported as it stands; `reason` is a stable code."""

    def __init__(self, reason: str, message: str) -> None:
        message = printable(message)
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class ImportedFile:
    source: str
    target: str
    version: int
    changes: tuple[str, ...]
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class SkippedFile:
    source: str
    why: str


@dataclass(frozen=True)
class ImportPlan:
    tool: Tool
    files: tuple[ImportedFile, ...]
    skipped: tuple[SkippedFile, ...]


PTAH_NO_TRANSACTION = "-- +ptah no_transaction\n"
_MAX_VERSION_DIGITS = 18
_MAX_DESCRIPTION = 200
_NOT_DESCRIPTION = re.compile(r"[^A-Za-z0-9._\-]")
_CHECKPOINT = ".checkpoint"
# The markers (directory.marker_tool) each source tool reads itself; Ptah's own are always read.
_OWN_MARKERS: dict[Tool, frozenset[str]] = {
    Tool.GOLANG_MIGRATE: frozenset({"morph"}),
    Tool.GOOSE: frozenset({"goose"}),
    Tool.DBMATE: frozenset({"dbmate"}),
    Tool.FLYWAY: frozenset(),
}


# ---------------------------------------------------------------------------------------------
# Reading the source


def _source_files(src: Path, *, recursive: bool, limits: Limits) -> dict[str, bytes]:
    """Every regular file of the source by its path relative to `src`; links are refused."""
    if not src.is_dir() or src.is_symlink():
        raise ImportRefusedError("NotADirectory", f"{src} is not a readable directory")
    found: dict[str, bytes] = {}
    total = 0
    for root, dirs, names in os.walk(src):
        here = Path(root)
        if not recursive:
            dirs.clear()
        for name in sorted(dirs):
            if (here / name).is_symlink():
                raise ImportRefusedError("SymlinkRefused", f"{name} is a symbolic link")
        for name in sorted(names):
            path = here / name
            relative = path.relative_to(src).as_posix()
            if path.is_symlink():
                raise ImportRefusedError("SymlinkRefused", f"{relative} is a symbolic link")
            if not path.is_file():
                continue
            size = path.stat().st_size
            if size > limits.max_file_bytes:
                raise ImportRefusedError(
                    "FileTooLarge", f"{relative} is larger than {limits.max_file_bytes} bytes"
                )
            total += size
            if total > limits.max_total_bytes or len(found) >= limits.max_files:
                raise ImportRefusedError("DirectoryTooLarge", "the source is too large to import")
            try:
                found[relative] = path.read_bytes()
            except OSError:
                raise ImportRefusedError("Unreadable", f"{relative} cannot be read") from None
    return found


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise ImportRefusedError("NotUTF8", f"{name} is not UTF-8 text") from None


def _version(name: str, digits: str) -> int:
    if not digits.isdigit() or not digits.isascii():
        raise ImportRefusedError("BadVersion", f"{name}: the version is not a number")
    if len(digits) > _MAX_VERSION_DIGITS:
        raise ImportRefusedError(
            "BadVersion",
            f"{name}: the version has more than {_MAX_VERSION_DIGITS} digits; Ptah's versions fit"
            " a signed 64-bit column: renumber it (keeping the order) before importing",
        )
    return int(digits)


def _description(raw: str, changes: list[str]) -> str:
    """A description Ptah's names can hold: other characters become `_`, at most 200."""
    fixed = _NOT_DESCRIPTION.sub("_", raw)
    if fixed != raw:
        changes.append("renamed: characters a Ptah name cannot hold became '_'")
    if len(fixed) > _MAX_DESCRIPTION:
        fixed = fixed[:_MAX_DESCRIPTION]
        changes.append(f"renamed: description cut to {_MAX_DESCRIPTION} characters")
    if fixed.endswith(_CHECKPOINT):
        fixed = fixed.removesuffix(_CHECKPOINT) + "_checkpoint"
        changes.append(
            "renamed: a description ending '.checkpoint' became '_checkpoint' (Ptah reads a"
            " name ending '.checkpoint.up.sql' as a checkpoint)"
        )
    return fixed


def _no_foreign_markers(tool: Tool, name: str, text: str) -> None:
    """Refuses a line holding a marker of a tool other than `tool`'s own: `tool` ignores it,
    and Ptah's reader would honour it (or refuse the file) once imported."""
    own = _OWN_MARKERS[tool]
    for number, line in enumerate(text.splitlines(), start=1):
        other = marker_tool(line.strip())
        if other is not None and other not in own:
            raise ImportRefusedError(
                "ForeignDirective",
                f"{name} line {number}: a {other} marker, which {tool.value} ignores and Ptah"
                " would read: delete the line before importing (write -- +ptah no_transaction"
                " instead if the file must run outside a transaction)",
            )


def _target(digits: str, description: str) -> str:
    return f"{digits}_{description}.up.sql"


# ---------------------------------------------------------------------------------------------
# golang-migrate (and morph, which reads the same names)

_GOLANG_MIGRATE = re.compile(
    r"^(?P<version>[0-9]+)_(?P<title>.*)\.(?P<direction>up|down)\.(?P<ext>.*)$"
)


def _golang_migrate(
    files: dict[str, bytes], dialect: Dialect | None
) -> tuple[list[ImportedFile], list[SkippedFile]]:
    imported: list[ImportedFile] = []
    skipped: list[SkippedFile] = []
    for name, data in files.items():
        match = _GOLANG_MIGRATE.match(name)
        if match is None:
            skipped.append(SkippedFile(name, "not a migration name (golang-migrate ignores it)"))
            continue
        if match.group("direction") == "down":
            skipped.append(SkippedFile(name, "a down file (Ptah runs up files only)"))
            continue
        if match.group("ext") != "sql":
            raise ImportRefusedError(
                "NotSQL",
                f"{name}: golang-migrate runs it, but Ptah reads only .up.sql files:"
                " rename it if it is SQL",
            )
        changes: list[str] = []
        version = _version(name, match.group("version"))
        target = _target(match.group("version"), _description(match.group("title"), changes))
        if not changes:
            changes.append("copied unchanged")
        _no_foreign_markers(Tool.GOLANG_MIGRATE, name, _text(name, data))
        imported.append(ImportedFile(name, target, version, tuple(changes), data))
    return imported, skipped


# ---------------------------------------------------------------------------------------------
# goose

_GOOSE_ANNOTATIONS = {
    "up": "Up",
    "down": "Down",
    "statementbegin": "StatementBegin",
    "statementend": "StatementEnd",
    "no transaction": "NO TRANSACTION",
    "envsub on": "ENVSUB ON",
    "envsub off": "ENVSUB OFF",
}


def _goose_annotation(name: str, number: int, line: str) -> str | None:
    """The annotation on this line, as goose reads it, or None for an ordinary line."""
    if not (line.strip().startswith("--") and "+goose" in line):
        return None
    where = f"{name} line {number}"
    if line[:1] in {" ", "\t"}:
        raise ImportRefusedError(
            "GooseAnnotation", f"{where}: goose refuses an annotation with leading whitespace"
        )
    command = line.replace("--", "").replace("+goose", "", 1)
    if "+goose" in command:
        raise ImportRefusedError("GooseAnnotation", f"{where}: two +goose annotations")
    known = _GOOSE_ANNOTATIONS.get(" ".join(command.split()).lower())
    if known is None:
        raise ImportRefusedError("GooseAnnotation", f"{where}: goose knows no such annotation")
    return known


def _mysql_block(name: str, begin: int, block: list[str]) -> tuple[list[str], str]:
    """A StatementBegin/End block for MySQL: as it is when Ptah's splitter keeps it whole,
    otherwise wrapped in DELIMITER lines, as the mysql client would need it."""
    text = "".join(block)
    try:
        if len(split(text, Dialect.MYSQL)) <= 1:
            return block, f"line {begin}: StatementBegin/End markers dropped (one statement)"
    except SplitError:
        pass
    stock = ("$$", "//", "$$$$", "@@@@")
    numbered = (f"$${n}$$" for n in itertools.count(1))
    delimiter = next(d for d in itertools.chain(stock, numbered) if d not in text)
    lines = list(block)
    last = max((i for i, line in enumerate(lines) if line.strip()), default=None)
    if last is not None and lines[last].rstrip().endswith(";"):
        body = lines[last].rstrip()
        lines[last] = body[:-1] + delimiter + "\n"
    else:
        lines.append(delimiter + "\n")
    wrapped = [f"DELIMITER {delimiter}\n", *lines, "DELIMITER ;\n"]
    return wrapped, f"line {begin}: StatementBegin/End block wrapped in DELIMITER {delimiter}"


def _goose_block(
    name: str, begin: int, block: list[str], dialect: Dialect | None
) -> tuple[list[str], str]:
    if dialect is Dialect.POSTGRESQL:
        return block, f"line {begin}: StatementBegin/End markers dropped"
    if dialect is Dialect.MYSQL:
        return _mysql_block(name, begin, block)
    text = "".join(block)
    try:
        whole = len(split(text, Dialect.MYSQL)) <= 1 and len(split(text, Dialect.POSTGRESQL)) <= 1
    except SplitError:
        whole = False
    if not whole:
        raise ImportRefusedError(
            "StatementBlockNeedsEngine",
            f"{name} line {begin}: this StatementBegin/End block is more than one statement as"
            " Ptah splits it, and how to keep it whole depends on the engine: pass --engine"
            " postgresql, mysql or mariadb",
        )
    return block, f"line {begin}: StatementBegin/End markers dropped (one statement)"


def _goose_file(name: str, text: str, dialect: Dialect | None) -> tuple[str, list[str]]:
    """The up section of a goose file in Ptah's form, and what changed."""
    out: list[str] = []
    changes = ["down section dropped (Ptah runs up files only)"]
    state = "start"
    no_transaction = False
    block: list[str] | None = None
    block_line = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        annotation = _goose_annotation(name, number, line.rstrip("\r\n"))
        where = f"{name} line {number}"
        if annotation == "Up":
            if state != "start":
                raise ImportRefusedError("GooseAnnotation", f"{where}: a second -- +goose Up")
            state = "up"
        elif annotation == "Down":
            if state != "up" or block is not None:
                raise ImportRefusedError(
                    "GooseAnnotation", f"{where}: -- +goose Down before the up section ended"
                )
            state = "down"
        elif annotation == "NO TRANSACTION":
            no_transaction = True
        elif annotation == "ENVSUB ON" and state != "down":
            raise ImportRefusedError(
                "GooseEnvsub",
                f"{where}: goose substitutes environment variables in this file; Ptah runs files"
                " as they are: write the values into the file before importing",
            )
        elif annotation == "StatementBegin" and state == "up":
            if block is not None:
                raise ImportRefusedError("GooseAnnotation", f"{where}: nested StatementBegin")
            block, block_line = [], number
        elif annotation == "StatementEnd" and state == "up":
            if block is None:
                raise ImportRefusedError("GooseAnnotation", f"{where}: StatementEnd alone")
            lines, change = _goose_block(name, block_line, block, dialect)
            out += lines
            changes.append(change)
            block = None
        elif annotation is not None:
            if annotation in {"StatementBegin", "StatementEnd"} and state == "start":
                raise ImportRefusedError(
                    "GooseAnnotation", f"{where}: {annotation} before -- +goose Up"
                )
        elif state == "start":
            if line.strip() and not line.strip().startswith("--"):
                raise ImportRefusedError(
                    "GooseAnnotation", f"{where}: goose refuses a statement before -- +goose Up"
                )
            out.append(line)
        elif state == "up":
            (out if block is None else block).append(line)
    if state == "start":
        raise ImportRefusedError("GooseAnnotation", f"{name}: no -- +goose Up annotation")
    if block is not None:
        raise ImportRefusedError(
            "GooseAnnotation", f"{name} line {block_line}: StatementBegin without StatementEnd"
        )
    if state == "up":
        changes[0] = "no down section"
    if no_transaction:
        changes.append("-- +goose NO TRANSACTION became -- +ptah no_transaction")
    return (PTAH_NO_TRANSACTION if no_transaction else "") + "".join(out), changes


def _goose(
    files: dict[str, bytes], dialect: Dialect | None
) -> tuple[list[ImportedFile], list[SkippedFile]]:
    imported: list[ImportedFile] = []
    skipped: list[SkippedFile] = []
    for name, data in files.items():
        if name.endswith("_test.go"):
            skipped.append(SkippedFile(name, "a Go test file (goose ignores it)"))
            continue
        if name.endswith(".go"):
            raise ImportRefusedError(
                "GoMigration",
                f"{name} is a goose Go migration; Ptah runs SQL only: write its effect as a SQL"
                " migration before importing",
            )
        if not name.endswith(".sql"):
            skipped.append(SkippedFile(name, "not a .sql or .go file (goose ignores it)"))
            continue
        digits, sep, rest = name.removesuffix(".sql").partition("_")
        if not sep:
            raise ImportRefusedError(
                "BadFileName", f"{name}: goose needs <version>_<description>.sql"
            )
        version = _version(name, digits)
        if version < 1:
            raise ImportRefusedError("BadVersion", f"{name}: goose versions start at 1")
        changes: list[str] = []
        target = _target(digits, _description(rest, changes))
        text = _text(name, data)
        _no_foreign_markers(Tool.GOOSE, name, text)
        sql, translated = _goose_file(name, text, dialect)
        imported.append(
            ImportedFile(name, target, version, (*translated, *changes), sql.encode("utf-8"))
        )
    return imported, skipped


# ---------------------------------------------------------------------------------------------
# dbmate

_DBMATE_NAME = re.compile(r"^(?P<version>[0-9]+)(?P<rest>.*)\.sql$")
_DBMATE_UP = re.compile(r"(?m)^--\s*migrate:up(\s*$|\s+\S+)")
_DBMATE_DOWN = re.compile(r"(?m)^--\s*migrate:down(\s*$|\s+\S+)")


def _dbmate_file(name: str, text: str) -> tuple[str, list[str]]:
    ups = list(_DBMATE_UP.finditer(text))
    if not ups:
        raise ImportRefusedError("DbmateSection", f"{name}: dbmate needs a -- migrate:up section")
    if len(ups) > 1:
        raise ImportRefusedError(
            "DbmateSection",
            f"{name}: {len(ups)} -- migrate:up sections, each its own transaction in dbmate;"
            " Ptah runs one file as one unit: split it into one file per section",
        )
    up = ups[0]
    for line in text[: up.start()].splitlines():
        if line.strip() and not line.lstrip().startswith("--"):
            raise ImportRefusedError(
                "DbmateSection", f"{name}: dbmate refuses statements before -- migrate:up"
            )
    directive_end = text.find("\n", up.start())
    directive = text[up.start() : len(text) if directive_end < 0 else directive_end]
    body_start = len(text) if directive_end < 0 else directive_end + 1
    down = _DBMATE_DOWN.search(text)
    if down is not None and down.start() < up.start():
        raise ImportRefusedError(
            "DbmateSection", f"{name}: dbmate needs -- migrate:up before -- migrate:down"
        )
    body = text[body_start : len(text) if down is None else down.start()]
    changes = ["down section dropped (Ptah runs up files only)" if down else "no down section"]
    options = dict(
        pair.split(":", 1)
        for pair in directive.split()[1:]
        if pair.count(":") == 1 and not pair.startswith("migrate:")
    )
    header = ""
    if options.get("transaction") == "false":
        header = PTAH_NO_TRANSACTION
        changes.append("-- migrate:up transaction:false became -- +ptah no_transaction")
    return header + body, changes


def _dbmate(
    files: dict[str, bytes], dialect: Dialect | None
) -> tuple[list[ImportedFile], list[SkippedFile]]:
    imported: list[ImportedFile] = []
    skipped: list[SkippedFile] = []
    for name, data in files.items():
        match = _DBMATE_NAME.match(name)
        if match is None:
            skipped.append(SkippedFile(name, "not a migration name (dbmate ignores it)"))
            continue
        changes: list[str] = []
        digits = match.group("version")
        version = _version(name, digits)
        target = _target(digits, _description(match.group("rest").removeprefix("_"), changes))
        text = _text(name, data)
        _no_foreign_markers(Tool.DBMATE, name, text)
        sql, translated = _dbmate_file(name, text)
        imported.append(
            ImportedFile(name, target, version, (*translated, *changes), sql.encode("utf-8"))
        )
    # dbmate runs pending files in name order; Ptah in version order. They must agree.
    for earlier, later in itertools.pairwise(sorted(imported, key=lambda f: f.source)):
        if earlier.version > later.version:
            raise ImportRefusedError(
                "OrderDiffers",
                f"{earlier.source}: dbmate runs files in name order and Ptah in version order,"
                f" and {later.source} comes after it by name but before it by version: pad the"
                " versions to one width before importing",
            )
    return imported, skipped


# ---------------------------------------------------------------------------------------------
# Flyway

_FLYWAY_VERSION_SPLIT = re.compile(r"\.(?=\d)")
_FLYWAY_PLACEHOLDER = re.compile(r"\$\{[A-Za-z0-9_.:\-]+\}")
_FLYWAY_CALLBACK = re.compile(r"^(before|after|create)[A-Z][A-Za-z]*(__.*)?$")
# Statements Flyway's PostgreSQL parser runs outside a transaction (leading words).
_FLYWAY_NON_TRANSACTIONAL = (
    re.compile(r"^(CREATE|DROP) (DATABASE|TABLESPACE|SUBSCRIPTION)\b"),
    re.compile(r"^ALTER SYSTEM\b"),
    re.compile(r"^(CREATE|DROP)( UNIQUE)? INDEX CONCURRENTLY\b"),
    re.compile(r"^REINDEX( VERBOSE)? (SCHEMA|DATABASE|SYSTEM)\b"),
    re.compile(r"^VACUUM\b"),
    re.compile(r"^DISCARD ALL\b"),
)


def _flyway_version(name: str, raw: str) -> tuple[str, int]:
    """Flyway's version text as one Ptah version; refuses a version of several parts."""
    parts = _FLYWAY_VERSION_SPLIT.split(raw.replace("_", "."))
    if not raw or not all(p.isdigit() and p.isascii() for p in parts):
        raise ImportRefusedError(
            "BadVersion", f"{name}: Flyway versions hold only digits, '.' and '_'"
        )
    while len(parts) > 1 and int(parts[-1]) == 0:
        parts.pop()
    if len(parts) > 1:
        raise ImportRefusedError(
            "DottedVersion",
            f"{name}: Flyway version {'.'.join(parts)} has {len(parts)} parts and a Ptah version"
            " is one integer: rename the Flyway files to one-number versions in the same order"
            " (e.g. V1.2 as V001002, V1.10 as V001010) before importing",
        )
    return parts[0], _version(name, parts[0])


def _flyway_config(name: str, data: bytes | None) -> dict[str, str]:
    if data is None:
        return {}
    config: dict[str, str] = {}
    for line in _text(name, data).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ImportRefusedError("FlywayScriptConfig", f"{name}: a line is not key=value")
        config[key.strip()] = value.strip()
    for key, value in config.items():
        if key == "encoding" and value.upper().replace("-", "") not in {"UTF8"}:
            raise ImportRefusedError("FlywayScriptConfig", f"{name}: encoding is not UTF-8")
        if key not in {"executeInTransaction", "placeholderReplacement", "encoding", "mixed"}:
            raise ImportRefusedError(
                "FlywayScriptConfig",
                f"{name}: the setting {key} has no equivalent in Ptah: remove it before importing",
            )
    return config


_FLYWAY_GLOBAL_CONFIGS = ("flyway.conf", "flyway.toml")


def _flyway_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise ImportRefusedError("FlywayConfig", f"{name}: mixed is neither true nor false")


def _flyway_global_mixed(files: dict[str, bytes]) -> bool:
    """Flyway's own `mixed` setting from a `flyway.conf` (`flyway.mixed=...`) or `flyway.toml`
    (`mixed = ...` under `[flyway]`) beside the scripts; false when neither sets it. Nothing
    else in them is read (they often hold the database URL and password), and no value is
    ever repeated in a message."""
    found: dict[str, bool] = {}
    data = files.get("flyway.conf")
    if data is not None:
        for line in _text("flyway.conf", data).splitlines():
            line = line.strip()
            if not line or line[0] in "#!":
                continue
            key, _, value = line.replace(":", "=", 1).partition("=")
            if key.strip() == "flyway.mixed":
                found["flyway.conf"] = _flyway_bool("flyway.conf", value)
    data = files.get("flyway.toml")
    if data is not None:
        try:
            document = tomllib.loads(_text("flyway.toml", data))
        except tomllib.TOMLDecodeError:
            raise ImportRefusedError(
                "FlywayConfig", "flyway.toml is not valid TOML: fix it before importing"
            ) from None
        section = document.get("flyway")
        if isinstance(section, dict) and "mixed" in section:
            found["flyway.toml"] = _flyway_bool("flyway.toml", section["mixed"])
    if len(set(found.values())) > 1:
        raise ImportRefusedError(
            "FlywayConfig",
            "flyway.conf and flyway.toml disagree on mixed: keep the one Flyway reads",
        )
    return any(found.values())


def _flyway_non_transactional(name: str, text: str, mixed: bool) -> bool:
    """Whether Flyway runs this PostgreSQL script outside a transaction: when a statement cannot
    run in one. Flyway refuses a script mixing such statements with others unless `mixed`."""
    try:
        statements = split(text, Dialect.POSTGRESQL)
    except SplitError:
        return False
    outside = [
        any(pattern.match(" ".join(s.keywords)) for pattern in _FLYWAY_NON_TRANSACTIONAL)
        for s in statements
    ]
    if any(outside) and not all(outside) and not mixed:
        raise ImportRefusedError(
            "FlywayMixed",
            f"{name} mixes statements that cannot run in a transaction with others, which"
            " Flyway refuses unless its script configuration says mixed=true: split the file,"
            " or add mixed=true to its .conf if Flyway ran it so",
        )
    return any(outside)


def _script_mixed(config: dict[str, str], global_mixed: bool) -> bool:
    """A script's own `mixed` setting wins over Flyway's global one."""
    if "mixed" in config:
        return config["mixed"].lower() == "true"
    return global_mixed


def _flyway(
    files: dict[str, bytes], dialect: Dialect | None
) -> tuple[list[ImportedFile], list[SkippedFile]]:
    imported: list[ImportedFile] = []
    skipped: list[SkippedFile] = []
    global_mixed = _flyway_global_mixed(files)
    for name, data in files.items():
        base = name.rsplit("/", 1)[-1]
        if name in _FLYWAY_GLOBAL_CONFIGS:
            skipped.append(
                SkippedFile(name, "Flyway's configuration (only its mixed setting is read)")
            )
            continue
        if base.lower().endswith(".sql.conf"):
            script = name[: -len(".conf")]
            if script not in files:
                skipped.append(SkippedFile(name, "a script configuration of no script"))
            continue
        if not base.lower().endswith(".sql"):
            skipped.append(SkippedFile(name, "not a .sql file (Flyway ignores it)"))
            continue
        stem = base[: -len(".sql")]
        prefix, sep, description = stem[1:].partition("__")
        kind = stem[:1]
        if _FLYWAY_CALLBACK.match(stem):
            raise ImportRefusedError(
                "FlywayCallback",
                f"{name} is a Flyway callback (it runs around migrations); Ptah has none: fold"
                " it into a migration or run it yourself",
            )
        if not sep or kind not in {"V", "U", "R", "B"}:
            skipped.append(SkippedFile(name, "not a migration name (Flyway ignores it)"))
            continue
        if kind == "U":
            skipped.append(SkippedFile(name, "an undo file (Ptah runs up files only)"))
            continue
        if kind == "R":
            raise ImportRefusedError(
                "FlywayRepeatable",
                f"{name} is a Flyway repeatable migration (run again whenever it changes); Ptah"
                " has no repeatable kind: move its SQL into a versioned file before importing",
            )
        if kind == "B":
            raise ImportRefusedError(
                "FlywayBaseline",
                f"{name} is a Flyway baseline migration; it shares its version with a versioned"
                " file, which a Ptah directory cannot: remove it before importing",
            )
        digits, version = _flyway_version(name, prefix)
        changes: list[str] = []
        target = _target(digits, _description(description, changes))
        text = _text(name, data)
        _no_foreign_markers(Tool.FLYWAY, name, text)
        config = _flyway_config(name + ".conf", files.get(name + ".conf"))
        replaces = config.get("placeholderReplacement", "true").lower() != "false"
        if replaces and _FLYWAY_PLACEHOLDER.search(text):
            raise ImportRefusedError(
                "FlywayPlaceholder",
                f"{name} uses a Flyway placeholder (${{...}}), which Flyway replaces and Ptah"
                " does not: write the value into the file before importing",
            )
        transaction = config.get("executeInTransaction", "").lower()
        header = ""
        if transaction == "false":
            header = PTAH_NO_TRANSACTION
            changes.append("executeInTransaction=false became -- +ptah no_transaction")
        elif (
            not transaction
            and dialect is not Dialect.MYSQL
            and _flyway_non_transactional(name, text, _script_mixed(config, global_mixed))
        ):
            header = PTAH_NO_TRANSACTION
            changes.append(
                "-- +ptah no_transaction added: Flyway runs this file outside a transaction"
                " (a statement that cannot run in one)"
            )
        if "/" in name:
            changes.append("moved out of its subdirectory")
        data_out = (header + text).encode("utf-8") if header else data
        imported.append(
            ImportedFile(name, target, version, tuple(changes or ["copied unchanged"]), data_out)
        )
    return imported, skipped


# ---------------------------------------------------------------------------------------------
# The import

_READERS: dict[
    Tool,
    Callable[[dict[str, bytes], Dialect | None], tuple[list[ImportedFile], list[SkippedFile]]],
] = {
    Tool.GOLANG_MIGRATE: _golang_migrate,
    Tool.GOOSE: _goose,
    Tool.DBMATE: _dbmate,
    Tool.FLYWAY: _flyway,
}


def plan_import(
    tool: Tool, src: str | Path, dialect: Dialect | None = None, limits: Limits | None = None
) -> ImportPlan:
    """Read `src` as `tool` reads it and convert every file; raises ImportRefusedError."""
    files = _source_files(Path(src), recursive=tool is Tool.FLYWAY, limits=limits or Limits())
    imported, skipped = _READERS[tool](files, dialect)
    by_version: dict[int, str] = {}
    for file in sorted(imported, key=lambda f: f.source):
        if file.version in by_version:
            raise ImportRefusedError(
                "DuplicateVersion",
                f"{by_version[file.version]} and {file.source} share version {file.version}",
            )
        by_version[file.version] = file.source
    if not imported:
        raise ImportRefusedError("NothingToImport", f"no {tool.value} migration in {src}")
    ordered = tuple(sorted(imported, key=lambda f: f.version))
    return ImportPlan(tool, ordered, tuple(sorted(skipped, key=lambda s: s.source)))


def write_import(plan: ImportPlan, out: str | Path) -> MigrationDirectory:
    """Write the plan's files and ptah.sum into `out` (absent or empty) and read them back.

    The files are written into a fresh sibling directory that replaces `out` only once the
    whole directory reads as valid, so a refusal leaves nothing behind.
    """
    target = Path(out)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise ImportRefusedError("OutNotADirectory", f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()):
        raise ImportRefusedError(
            "OutNotEmpty", f"{target} is not empty; import writes only into a new directory"
        )
    staging = target.parent / f".{target.name}.import-{secrets.token_hex(4)}"
    try:
        staging.mkdir(parents=True)
    except OSError:
        raise ImportRefusedError("Unwritable", f"{target.parent} is not writable") from None
    try:
        try:
            for file in plan.files:
                (staging / file.target).write_bytes(file.data)
        except OSError:
            raise ImportRefusedError("Unwritable", f"{target} could not be written") from None
        try:
            unchecked = read_directory(staging, verify_sum=False)
            (staging / SUM_FILE).write_text(render_sum(list(unchecked.sum_entries)))
            read_directory(staging)
        except DirectoryError as exc:
            raise ImportRefusedError(exc.reason, exc.raw) from None
        try:
            if target.is_dir():
                target.rmdir()
            staging.rename(target)
        except OSError:
            raise ImportRefusedError("Unwritable", f"{target} could not be written") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return read_directory(target)
