"""A migration directory read from disk: its files, their directives and its ptah.sum.

A directory is the checked snapshot or the fetched files of a source, already on disk: it is
never read from the network. Only the directory's own entries are read (no recursion); a
symbolic link, or a ptah.sum entry that names anything but a plain file name, is refused, so no
path can lead outside it. Files are opened with O_NOFOLLOW, so a link swapped in after the
listing is refused too.

Naming (golang-migrate's layout, so its directories are read as they are):
    NNNNNNNNNN_description.up.sql              a migration
    NNNNNNNNNN_description.down.sql            its optional reverse (never run by the engine)
    NNNNNNNNNN_description.checkpoint.up.sql   a checkpoint: the whole schema up to its version
                                               (beside a .checkpoint.down.sql of its name, which
                                               golang-migrate reads as a migration and its down
                                               file, it is refused, not guessed)
The version is the leading digits (at most 18, so it fits a signed 64-bit column) and must
be unique across the directory. The description is everything between the first `_` and the
suffix, as golang-migrate reads it: letters, digits, `.`, `_` and `-` (what a ConfigMap key can
carry), at most 200, possibly empty. Any other `.sql` name is refused rather than ignored,
because a misspelt migration that silently never runs is worse than a refusal; a name another
tool writes (goose, dbmate, Flyway) is refused with the `ptah migrations import` that converts it.
So is a near miss that does not end in `.sql`: `.sql` in another case or followed by more
(`.up.SQL`, `.up.sql.bak`, `.sql~`), or a versioned `.up` / `.down` with another extension
(`.up.sq`, `.down.txt`). Any other file (a README, a LICENSE) is ignored.

Directives are comment lines at the top of a file, before its first statement:
    -- +ptah no_transaction            run this file with transaction mode `none`
    -- morph:nontransactional          the same, as morph writes it (only as the first line)
    -- +goose NO TRANSACTION           the same, as goose writes it
    -- migrate:up transaction:false    the same, as dbmate writes it
Each counts only where its tool honours it (goose's only in a file with `-- +goose Up`); markers
of two tools in one file are refused. An unknown directive, or a directive line after the first statement, is refused; so is any
other tool's marker that would make Ptah run a down section or mis-split a statement
(`-- +goose Down`, `-- +goose StatementBegin`, `-- migrate:down`, ...).

ptah.sum (optional; verified whenever present):
    ptah.sum v1 sha256:<directory hash>
    <file name> sha256:<file hash>
    ...
one line per `.sql` file, sorted by name. The directory hash is the SHA-256 of the lines
`<file name> sha256:<file hash>\\n` in that order, so it changes when any file, name or entry
changes. Every `.sql` file must be listed and every listed file must exist.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

SUM_FILE = "ptah.sum"
SUM_HEADER = "ptah.sum v1"

# The description is lazy so that a name ending in `.checkpoint.up.sql` is a checkpoint, and
# anchored so that it runs to the last `.up.sql` / `.down.sql`, as golang-migrate's greedy title.
_NAME = re.compile(
    r"^(?P<version>[0-9]{1,18})_(?P<description>[A-Za-z0-9._\-]{0,200}?)"
    r"\.(?P<suffix>up|down|checkpoint\.up)\.sql$"
)
# golang-migrate's own rule, to say why a name it accepts is refused here.
_GOLANG_MIGRATE_NAME = re.compile(r"^(?P<version>[0-9]+)_(?P<description>.*)\.(up|down)\.sql$")
_FLYWAY_NAME = re.compile(r"^[VUBR][0-9._]*__.*\.sql$", re.IGNORECASE)
_ONE_FILE_NAME = re.compile(r"^[0-9]+.*\.sql$")
# Nearly a migration's name (issue #18, narrowed after review): a stem that starts like a
# version (`<digits>_`, or Flyway's `V1__`), ending in `.sql` in another case or with a backup
# suffix after it, or in `.up` / `.down` with nothing or an SQL-looking extension after it. A
# name ending in `.sql` is judged by _NAME instead; dotfiles only as an editor's swap file.
_VERSION_STEM = r"(?:[0-9]+_|[VUBR][0-9._]*__)"
_NEAR_MISS = re.compile(
    _VERSION_STEM + r".*"
    r"(?:\.sql(?:~|\.(?:bak|orig|old|tmp|save|backup|rej|new|copy|swp|swo)~?)?"
    r"|\.(?:up|down)(?:\.[a-z]*sq[a-z]*)?)",
    re.IGNORECASE,
)
_SWAP_FILE = re.compile(_VERSION_STEM + r".*\.sql.*\.sw[a-p]", re.IGNORECASE)
_DESCRIPTION_CHAR = re.compile(r"[^A-Za-z0-9._\-]")
_DIRECTIVE = re.compile(r"^--\s*\+ptah\b(?P<rest>.*)$")
_KNOWN_DIRECTIVES = frozenset({"no_transaction"})
NO_TRANSACTION = "no_transaction"
# Other tools' markers (their own spellings; see docs/guide-migrations.md).
_GOOSE = re.compile(r"^--\s*\+goose\b(?P<rest>.*)$", re.IGNORECASE)
_DBMATE = re.compile(r"^--\s*migrate:(?P<section>up|down)(?P<options>(?:\s.*)?)$")
_MORPH = re.compile(r"^--\s*morph:(?P<values>.*)$")
_SUM_LINE = re.compile(r"^(?P<name>[^\s/\\]+) sha256:(?P<hash>[0-9a-f]{64})$")


def printable(text: str) -> str:
    """`text` with what a terminal or a JSON reader must not get escaped: control and other
    non-printable characters as `\\xNN` / `\\uNNNN`, the bytes of a name that is not UTF-8
    (read as lone surrogates) as `\\xNN`, and a backslash as two."""
    out: list[str] = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char == "\\":
            out.append("\\\\")
        elif char.isprintable() and not 0xD800 <= code <= 0xDFFF:
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


class DirectoryError(ValueError):
    """The directory cannot be used. `reason` is a stable code; the message names files only,
    escaped by `printable` (a name with a newline or a control byte cannot break or forge a
    line of output); `raw` keeps it unescaped for a caller that escapes on its own."""

    def __init__(
        self, reason: str, message: str, *, name: str | None = None, line: int | None = None
    ) -> None:
        super().__init__(printable(message))
        self.reason = reason
        self.raw = message
        self.name = name
        """The file refused, when one is, and the line: positions a report may carry."""
        self.line = line


class FileKind(StrEnum):
    MIGRATION = "migration"
    CHECKPOINT = "checkpoint"


@dataclass(frozen=True)
class Limits:
    """Bounds on what a directory may hold, so a hostile artifact cannot exhaust the runner."""

    max_files: int = 20_000
    max_file_bytes: int = 16 * 1024 * 1024
    max_total_bytes: int = 512 * 1024 * 1024


@dataclass(frozen=True)
class MigrationFile:
    version: int
    description: str
    kind: FileKind
    name: str
    checksum: str
    sql: str
    directives: frozenset[str]
    down_name: str | None = None

    @property
    def no_transaction(self) -> bool:
        return NO_TRANSACTION in self.directives


@dataclass(frozen=True)
class MigrationDirectory:
    path: Path
    files: tuple[MigrationFile, ...]
    directory_hash: str
    sum_verified: bool
    sum_entries: tuple[tuple[str, str], ...] = field(compare=False, repr=False)
    by_version: dict[int, MigrationFile] = field(compare=False, repr=False)

    @property
    def latest_version(self) -> int | None:
        return self.files[-1].version if self.files else None

    @property
    def checkpoints(self) -> tuple[MigrationFile, ...]:
        return tuple(f for f in self.files if f.kind is FileKind.CHECKPOINT)


def file_checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def directory_hash(entries: list[tuple[str, str]]) -> str:
    """The directory hash over (file name, file hash) pairs, in name order."""
    digest = hashlib.sha256()
    for name, checksum in sorted(entries):
        digest.update(f"{name} sha256:{checksum}\n".encode())
    return digest.hexdigest()


def render_sum(entries: list[tuple[str, str]]) -> str:
    """The text of a ptah.sum for these (file name, file hash) pairs."""
    lines = [f"{SUM_HEADER} sha256:{directory_hash(entries)}"]
    lines += [f"{name} sha256:{checksum}" for name, checksum in sorted(entries)]
    return "\n".join(lines) + "\n"


def _read_regular(dir_fd: int, name: str, limit: int) -> bytes:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DirectoryError("SymlinkRefused", f"{name} is a symbolic link", name=name) from exc
        raise DirectoryError("Unreadable", f"{name} cannot be opened", name=name) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise DirectoryError("NotAFile", f"{name} is not a regular file", name=name)
        if info.st_size > limit:
            raise DirectoryError("FileTooLarge", f"{name} is larger than {limit} bytes", name=name)
        # One read of the size fstat gave, plus a byte to see the end: asking for more would
        # have the interpreter allocate (and shrink) that much for every file, which for a
        # directory of small files cost four times the system calls. A read that comes up short
        # once fstat's size is in is the end; a short read before it (a network or FUSE file
        # system may give less) and a file that grew since fstat are read on, in bounded
        # pieces, to an empty read.
        chunks: list[bytes] = []
        remaining = limit + 1
        total = 0
        want = min(remaining, info.st_size + 1)
        while remaining > 0:
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            total += len(chunk)
            if len(chunk) < want and total >= info.st_size:
                break
            want = min(remaining, 1 << 20)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise DirectoryError("FileTooLarge", f"{name} is larger than {limit} bytes", name=name)
    return data


def marker_tool(line: str) -> str | None:
    """Which other tool's marker a stripped line is (`goose`, `dbmate`, `morph`), or None."""
    if _GOOSE.match(line):
        return "goose"
    if _DBMATE.match(line):
        return "dbmate"
    if _MORPH.match(line):
        return "morph"
    return None


def parse_directives(name: str, sql: str) -> frozenset[str]:
    """The directives in the leading comment lines of a file; refuses unknown or misplaced ones.

    Besides Ptah's own, the no-transaction markers of morph, goose and dbmate are honoured, each
    only where its own tool would honour it: goose's only in a file holding `-- +goose Up` (goose
    refuses a file without one). Markers of two of those tools in one file are refused: which
    tool's rules the file follows would be a guess. Any other marker of those tools is refused,
    because running the file as it stands would run its down section too or cut a statement
    where the tool would not.
    """
    if "--" not in sql or ("+" not in sql and "migrate:" not in sql and "morph:" not in sql):
        # Every marker is a `--` comment holding `+ptah`, `+goose`, `migrate:` or `morph:`: a
        # file without them holds none (and most files do not), so no line need be looked at.
        return frozenset()
    found: set[str] = set()
    in_header = True
    first_line: dict[str, int] = {}
    goose_up = False
    goose_no_transaction: int | None = None
    for number, raw in enumerate(sql.splitlines(), start=1):
        line = raw.strip()
        where = f"{name} line {number}"
        match = _DIRECTIVE.match(line)
        if match is not None:
            if not in_header:
                raise DirectoryError(
                    "MisplacedDirective",
                    f"{where}: a +ptah directive must come before the first statement",
                    name=name,
                    line=number,
                )
            words = match.group("rest").split()
            if len(words) != 1 or words[0] not in _KNOWN_DIRECTIVES:
                raise DirectoryError(
                    "UnknownDirective", f"{where}: unknown +ptah directive", name=name, line=number
                )
            found.add(words[0])
            continue
        foreign = _foreign_directive(where, number, raw, line, in_header)
        if foreign is None:
            if line and not line.startswith("--"):
                in_header = False
            continue
        tool = marker_tool(line)
        assert tool is not None
        other = next((t for t in first_line if t != tool), None)
        if other is not None:
            raise DirectoryError(
                "MixedDirectives",
                f"{where}: a {tool} marker in a file holding {other}'s (line"
                f" {first_line[other]}): which tool's rules apply would be a guess: keep one"
                " tool's markers, or write -- +ptah no_transaction",
                name=name,
                line=number,
            )
        first_line.setdefault(tool, number)
        if tool == "goose":
            if not foreign:
                goose_up = True
            elif goose_no_transaction is None:
                goose_no_transaction = number
            continue
        found |= foreign
    if goose_no_transaction is not None:
        if not goose_up:
            raise DirectoryError(
                "UnknownDirective",
                f"{name} line {goose_no_transaction}: -- +goose NO TRANSACTION in a file without"
                " -- +goose Up, which goose would not run, so the marker is not goose's: write"
                " -- +ptah no_transaction if the file must run outside a transaction, or delete"
                " the line",
                name=name,
                line=goose_no_transaction,
            )
        found.add(NO_TRANSACTION)
    return frozenset(found)


def _foreign_directive(
    where: str, number: int, raw: str, line: str, in_header: bool
) -> set[str] | None:
    """The directives another tool's marker on this line means, or None if it holds none."""
    goose = _GOOSE.match(line)
    if goose is not None:
        annotation = " ".join(goose.group("rest").split()).upper()
        if annotation in {"NO TRANSACTION", "UP"} and in_header:
            return {NO_TRANSACTION} if annotation == "NO TRANSACTION" else set()
        if annotation in {"NO TRANSACTION", "UP"}:
            raise DirectoryError(
                "MisplacedDirective", f"{where}: a goose annotation after the first statement"
            )
        raise DirectoryError(
            "UnknownDirective",
            f"{where}: goose's annotation is not one Ptah runs (a goose file holds up and down"
            " sections and StatementBegin/End blocks): convert the directory with"
            " `ptah migrations import --from goose`",
        )
    dbmate = _DBMATE.match(line)
    if dbmate is not None:
        if dbmate.group("section") == "down" or not in_header:
            raise DirectoryError(
                "UnknownDirective",
                f"{where}: a dbmate section marker Ptah would run through (a dbmate file holds"
                " up and down sections): convert the directory with"
                " `ptah migrations import --from dbmate`",
            )
        options = dict(
            pair.split(":", 1) for pair in dbmate.group("options").split() if pair.count(":") == 1
        )
        return {NO_TRANSACTION} if options.get("transaction") == "false" else set()
    morph = _MORPH.match(line)
    if morph is not None:
        values = [v.strip() for v in morph.group("values").split(",")]
        if any(v != "nontransactional" for v in values):
            raise DirectoryError("UnknownDirective", f"{where}: unknown morph: directive")
        if number != 1 or not raw.startswith("-- morph:"):
            raise DirectoryError(
                "MisplacedDirective",
                f"{where}: morph honours `-- morph:nontransactional` only as the file's first line",
            )
        return {NO_TRANSACTION}
    return None


def explain_bad_name(name: str) -> str:
    """Why a `.sql` name is refused and what to do, naming the rule it breaks."""
    golang = _GOLANG_MIGRATE_NAME.match(name)
    if golang is not None:
        if len(golang.group("version")) > 18:
            return (
                f"{name}: the version has more than 18 digits; Ptah's versions fit a signed"
                " 64-bit column: renumber it"
            )
        description = golang.group("description")
        fixed = _DESCRIPTION_CHAR.sub("_", description)[:200]
        return (
            f"{name}: the description (between the first '_' and '.up.sql') may hold only"
            " letters, digits, '.', '_' and '-', at most 200 (what a ConfigMap key can carry):"
            f" rename it, e.g. {golang.group('version')}_{fixed}"
            f"{name[golang.end('description') :]}"
        )
    if _FLYWAY_NAME.match(name):
        return (
            f"{name} is named as Flyway names its migrations (V<version>__<description>.sql):"
            " convert the directory with `ptah migrations import --from flyway`"
        )
    if _ONE_FILE_NAME.match(name):
        return (
            f"{name} is one file for up and down, as goose and dbmate name theirs"
            " (<version>_<description>.sql): convert the directory with"
            " `ptah migrations import --from goose` (or `--from dbmate`)"
        )
    return f"{name} is not NNNN_description.up.sql, .down.sql or .checkpoint.up.sql"


def _ambiguous_checkpoint(up: str, down: str) -> str:
    """Why `N_x.checkpoint.up.sql` beside `N_x.checkpoint.down.sql` is refused, not guessed."""
    renamed = up.removesuffix(".checkpoint.up.sql") + "_checkpoint.up.sql"
    return (
        f"{up} and {down}: golang-migrate reads them as a migration whose description ends in"
        " '.checkpoint' and its down file, Ptah reads a name ending '.checkpoint.up.sql' as a"
        " checkpoint (the whole schema up to its version), which has no down file: rename them"
        f" (e.g. {renamed}) if they are a migration, drop the down file if it is a checkpoint,"
        " or convert the directory with `ptah migrations import --from golang-migrate`"
    )


def is_near_miss(name: str) -> bool:
    """A name that is nearly a migration file's but does not end in `.sql`: `.sql` in another
    case or followed by more (`.up.SQL`, `.up.sql.bak`, `.sql~`, an editor's swap file), or a
    versioned `.up` / `.down` with an SQL-looking extension or none (`.up.sq`, `.up.psql`,
    `.up`). Only a versioned stem counts, and a dotfile only as a swap file of one; tooling
    files (`.sqlfluff`, `V1__init.sql.conf`, `1_a.up.sql.sha256`, `1_a.down.md`) are not."""
    if name.startswith("."):
        return _SWAP_FILE.fullmatch(name[1:]) is not None
    return not name.endswith(".sql") and _NEAR_MISS.fullmatch(name) is not None


def explain_near_miss(name: str) -> str:
    return (
        f"{name} is nearly a migration file's name but would never run: rename it to end in"
        " .up.sql, .down.sql or .checkpoint.up.sql (lower case), or remove it"
    )


def read_directory(
    path: str | Path, limits: Limits | None = None, *, verify_sum: bool = True
) -> MigrationDirectory:
    """Read and check a migration directory. Raises DirectoryError on anything it refuses.

    `verify_sum=False` is only for writing a new ptah.sum: the old one is then not consulted.
    """
    limits = limits or Limits()
    root = Path(path)
    try:
        dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise DirectoryError("NotADirectory", f"{root} is not a readable directory") from exc
    try:
        return _read(root, dir_fd, limits, verify_sum)
    finally:
        os.close(dir_fd)


def _read(root: Path, dir_fd: int, limits: Limits, verify_sum: bool) -> MigrationDirectory:
    names: list[str] = []
    near_misses: list[str] = []
    with os.scandir(dir_fd) as listing:
        for entry in listing:
            if entry.is_symlink():
                raise DirectoryError(
                    "SymlinkRefused", f"{entry.name} is a symbolic link", name=entry.name
                )
            if is_near_miss(entry.name):
                near_misses.append(entry.name)
            elif entry.name.endswith(".sql") or entry.name == SUM_FILE:
                if not entry.is_file(follow_symlinks=False):
                    raise DirectoryError(
                        "NotAFile", f"{entry.name} is not a regular file", name=entry.name
                    )
                names.append(entry.name)
                if len(names) > limits.max_files + 1:
                    raise DirectoryError(
                        "TooManyFiles", f"the directory holds more than {limits.max_files} files"
                    )
    if near_misses:
        first = min(near_misses)
        raise DirectoryError("BadFileName", explain_near_miss(first), name=first)
    sql_names = sorted(n for n in names if n.endswith(".sql"))
    if len(sql_names) > limits.max_files:
        raise DirectoryError(
            "TooManyFiles", f"the directory holds more than {limits.max_files} files"
        )

    total = 0
    contents: dict[str, bytes] = {}
    for name in sql_names:
        if _NAME.match(name) is None:
            raise DirectoryError("BadFileName", explain_bad_name(name), name=name)
        data = _read_regular(dir_fd, name, limits.max_file_bytes)
        total += len(data)
        if total > limits.max_total_bytes:
            raise DirectoryError(
                "DirectoryTooLarge", f"the files add up to more than {limits.max_total_bytes} bytes"
            )
        contents[name] = data

    checksums = {name: file_checksum(data) for name, data in contents.items()}
    entries = list(checksums.items())
    sum_verified = False
    if verify_sum and SUM_FILE in names:
        _verify_sum(_read_regular(dir_fd, SUM_FILE, limits.max_file_bytes), checksums)
        sum_verified = True

    ups: dict[int, MigrationFile] = {}
    downs: dict[int, str] = {}
    down_descriptions: dict[int, str] = {}
    for name in sql_names:
        match = _NAME.match(name)
        assert match is not None
        version = int(match.group("version"))
        description = match.group("description")
        suffix = match.group("suffix")
        if suffix == "down":
            if version in downs:
                raise DirectoryError("DuplicateVersion", f"two down files for version {version}")
            downs[version] = name
            down_descriptions[version] = description
            continue
        if version in ups:
            raise DirectoryError(
                "DuplicateVersion", f"{ups[version].name} and {name} share version {version}"
            )
        try:
            sql = contents[name].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DirectoryError("NotUTF8", f"{name} is not UTF-8 text", name=name) from exc
        sql = sql.removeprefix("\ufeff")
        ups[version] = MigrationFile(
            version=version,
            description=description,
            kind=FileKind.CHECKPOINT if suffix == "checkpoint.up" else FileKind.MIGRATION,
            name=name,
            checksum=checksums[name],
            sql=sql,
            directives=parse_directives(name, sql),
        )
    for version, down in downs.items():
        up = ups.get(version)
        if (
            up is not None
            and up.kind is FileKind.CHECKPOINT
            and down_descriptions[version] == f"{up.description}.checkpoint"
        ):
            raise DirectoryError("BadFileName", _ambiguous_checkpoint(up.name, down))
        if up is None or up.description != down_descriptions[version]:
            raise DirectoryError(
                "OrphanDownFile", f"{down} has no up file of the same name", name=down
            )
        if up.kind is FileKind.CHECKPOINT:
            raise DirectoryError("OrphanDownFile", f"{down} pairs with a checkpoint", name=down)
        ups[version] = MigrationFile(
            version=up.version,
            description=up.description,
            kind=up.kind,
            name=up.name,
            checksum=up.checksum,
            sql=up.sql,
            directives=up.directives,
            down_name=down,
        )
    files = tuple(ups[v] for v in sorted(ups))
    return MigrationDirectory(
        path=root,
        files=files,
        directory_hash=directory_hash(entries),
        sum_verified=sum_verified,
        sum_entries=tuple(sorted(entries)),
        by_version={f.version: f for f in files},
    )


def _verify_sum(data: bytes, checksums: dict[str, str]) -> None:
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DirectoryError("SumMismatch", "ptah.sum is not UTF-8 text") from exc
    if not lines:
        raise DirectoryError("SumMismatch", "ptah.sum is empty")
    header = lines[0].split(" sha256:")
    if len(header) != 2 or header[0] != SUM_HEADER:
        raise DirectoryError("SumMismatch", f"ptah.sum does not start with '{SUM_HEADER}'")
    listed: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        match = _SUM_LINE.match(line)
        if match is None or match.group("name") in {".", ".."}:
            raise DirectoryError("SumMismatch", f"ptah.sum line {number} is malformed")
        name = match.group("name")
        if name in listed:
            raise DirectoryError("SumMismatch", f"ptah.sum lists {name} twice")
        listed[name] = match.group("hash")
    missing = sorted(set(listed) - set(checksums))
    if missing:
        raise DirectoryError("SumMismatch", f"ptah.sum lists files that are absent: {missing[:5]}")
    unlisted = sorted(set(checksums) - set(listed))
    if unlisted:
        raise DirectoryError("SumMismatch", f"files not listed in ptah.sum: {unlisted[:5]}")
    changed = sorted(name for name, digest in listed.items() if checksums[name] != digest)
    if changed:
        raise DirectoryError(
            "SumMismatch", f"files whose hash differs from ptah.sum: {changed[:5]}"
        )
    if header[1] != directory_hash(list(listed.items())):
        raise DirectoryError("SumMismatch", "the directory hash in ptah.sum does not match")
