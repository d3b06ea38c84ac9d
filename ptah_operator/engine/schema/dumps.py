"""What the servers' own dump tools write besides schema statements, read as a desired schema.

`pg_dump --schema-only` and `mariadb-dump --no-data` wrap the statements that state a schema
in what their clients and sessions need: psql meta-commands (`\\restrict`, `\\unrestrict`),
session settings (`SET ...`, `SELECT pg_catalog.set_config('search_path', '', false)`,
MySQL's `/*!40101 SET ... */`), `LOCK TABLES`, `ALTER TABLE ... DISABLE KEYS`, `DELIMITER`
lines and MySQL executable comments (`/*!50001 CREATE VIEW ... */`), which carry real
statements. This module takes them apart:

- psql meta-commands are client commands: `\\restrict` and `\\unrestrict` (pg_dump's guard
  against a hostile dump) are taken out; any other is refused by name;
- a MySQL executable comment is code the server runs (MariaDB runs `/*!NNNNN ...*/` and
  `/*M!NNNNN ...*/` alike): its content is read as SQL, never dropped as a comment.
  `/*M!999999\\- enable the sandbox mode */`, the client's sandbox line, is taken out;
- a session setting changes nothing a desired schema states, except those that change how
  its text reads: on PostgreSQL a `search_path` other than empty or `public` (unqualified
  names are read as `public`'s), `standard_conforming_strings = off`, a `client_encoding`
  other than UTF-8 (files are read as UTF-8), a `default_tablespace` or a
  `default_table_access_method` other than `heap`; on MySQL/MariaDB an `sql_mode` with
  `ANSI_QUOTES` or `ANSI` (double quotes would name, not quote) or a character set other than
  a UTF-8 one for the client. Those are refused, naming the setting.
"""

from __future__ import annotations

import re

from ptah_operator.engine.dialect import Dialect as SplitDialect
from ptah_operator.engine.patterns import or_non_ascii
from ptah_operator.engine.splitter import SplitError, split


class DumpError(ValueError):
    """What a dump holds that the engine will not read (the message names it)."""


# psql meta-commands pg_dump writes: the session's restrict key, nothing schema-related.
_PSQL_ACCEPTED = frozenset({"restrict", "unrestrict"})


# Where a meta-command could start: a backslash first on its line, after blanks. Only these
# need the scan that tells a line inside a string or comment from one outside.
_META_CANDIDATE = re.compile(r"^[ \t\r]*\\", re.MULTILINE)


def psql_meta_commands(text: str) -> str:
    """`text` with each psql meta-command line (a backslash command at the start of a line,
    outside quotes, comments and dollar quoting) blanked: `\\restrict` and `\\unrestrict`;
    any other is refused. Line and column positions stay where they were."""
    if _META_CANDIDATE.search(text) is None:
        # No line starts with a backslash: there is nothing to blank or refuse, and the
        # scan below (a Python step per character) is left out.
        return text
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        ch = text[i]
        if ch == "\n":
            line_start = True
            i += 1
            continue
        if ch in " \t\r":
            i += 1
            continue
        if line_start and ch == "\\":
            end = text.find("\n", i)
            end = n if end < 0 else end
            command = re.match(r"\\([A-Za-z_!?]*)", text[i:end])
            name = command.group(1) if command else ""
            if name not in _PSQL_ACCEPTED:
                raise DumpError(
                    f"psql meta-command \\{name or text[i + 1 : i + 2]} is a client command, "
                    "not schema; only pg_dump's \\restrict and \\unrestrict are read (and "
                    "ignored)"
                )
            for j in range(i, end):
                out[j] = " "
            i = end
            continue
        line_start = False
        i = _skip_pg_token(text, i)
    return "".join(out)


def _quoted_end(text: str, i: int, *, backslash: bool) -> int:
    """Index past the quoted string or name opened at `i` (a doubled quote stays inside it; a
    backslash escapes the next character where `backslash`); the end of `text` if it never
    closes."""
    quote, n = text[i], len(text)
    j = i + 1
    while j < n:
        if backslash and text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            if j + 1 < n and text[j + 1] == quote:
                j += 2
                continue
            return j + 1
        j += 1
    return n


_DOLLAR_TAG = re.compile(rf"\$({or_non_ascii('A-Za-z_')}{or_non_ascii('A-Za-z0-9_')}*)?\$")


def _skip_pg_token(text: str, i: int) -> int:
    """Index past what starts at `i` when it is a string, quoted name, comment or dollar
    quote (so that a backslash inside one is never taken for a meta-command); else i + 1."""
    n = len(text)
    ch = text[i]
    if ch == "'" or ch == '"':
        return _quoted_end(text, i, backslash=ch == "'" and i > 0 and text[i - 1] in "eE")
    if text.startswith("--", i):
        end = text.find("\n", i)
        return n if end < 0 else end
    if text.startswith("/*", i):
        depth, j = 0, i
        while j < n:
            if text.startswith("/*", j):
                depth += 1
                j += 2
            elif text.startswith("*/", j):
                depth -= 1
                j += 2
                if depth == 0:
                    return j
            else:
                j += 1
        return n
    if ch == "$" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
        match = _DOLLAR_TAG.match(text, i)
        if match is not None:
            close = text.find(match.group(0), match.end())
            return n if close < 0 else close + len(match.group(0))
    return i + 1


_EXECUTABLE = re.compile(r"/\*M?!(\d*)")


def mysql_statements(text: str) -> list[str]:
    """The statements of a MySQL/MariaDB file as the mysql client cuts them (`DELIMITER`
    lines included), each with its executable comments opened: `/*!50001 CREATE VIEW v AS
    ... */` reads as `CREATE VIEW v AS ...`. The client's sandbox line is taken out."""
    try:
        statements = split(text, SplitDialect.MYSQL)
    except SplitError as error:
        raise DumpError(str(error)) from None
    return [opened for s in statements if (opened := _open_executable(s.text)).strip()]


def _open_executable(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    open_comment = False
    while i < n:
        ch = text[i]
        if ch in "'\"`":
            end = _quoted_end(text, i, backslash=ch != "`")
            out.append(text[i:end])
            i = end
            continue
        if ch == "#" or (text.startswith("--", i) and (i + 2 >= n or text[i + 2].isspace())):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            executable = _EXECUTABLE.match(text, i)
            if executable is not None and not open_comment:
                end = text.find("*/", executable.end())
                end = n if end < 0 else end
                if text[executable.end() : end].lstrip().startswith("\\"):
                    # `/*M!999999\- enable the sandbox mode */`: the client's, not SQL.
                    i = end + 2
                    continue
                open_comment = True
                out.append(" ")
                i = executable.end()
                continue
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
            continue
        if open_comment and text.startswith("*/", i):
            open_comment = False
            out.append(" ")
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


# PostgreSQL settings a dump sets for its session: values that change nothing the desired
# schema states (None: any value), or the only values that do not.
_PG_SETTINGS: dict[str, frozenset[str] | None] = {
    "statement_timeout": None,
    "lock_timeout": None,
    "idle_in_transaction_session_timeout": None,
    "transaction_timeout": None,
    "client_min_messages": None,
    "check_function_bodies": None,
    "row_security": None,
    "xmloption": frozenset({"content"}),
    "client_encoding": frozenset({"utf8", "utf-8", "unicode"}),
    "standard_conforming_strings": frozenset({"on", "true", "1"}),
    "default_tablespace": frozenset({""}),
    "default_table_access_method": frozenset({"heap"}),
    "default_with_oids": frozenset({"false", "off", "0"}),
    "escape_string_warning": None,
    "search_path": frozenset({"", "public", '"$user",public', "$user,public"}),
    "synchronous_commit": None,
    "timezone": None,
    "datestyle": None,
    "intervalstyle": None,
    "extra_float_digits": None,
}


def pg_setting(name: str, values: list[str]) -> None:
    """Accept `SET name = values` (or `set_config(name, value, ...)`) when it changes nothing
    the desired schema states; refuse it by name otherwise."""
    key = name.lower()
    value = ",".join(v.strip().strip("'").lower() for v in values)
    if key not in _PG_SETTINGS:
        raise DumpError(f"SET {name}: a setting the engine does not know to leave the schema alone")
    allowed = _PG_SETTINGS[key]
    if allowed is not None and value.replace(" ", "") not in allowed:
        if key == "search_path":
            raise DumpError(
                "SET search_path: unqualified names are read as public's; qualify them instead"
            )
        shown = ", ".join(v or "''" for v in sorted(allowed))
        raise DumpError(f"SET {name}: only {shown} is read")


def mysql_setting(text: str) -> None:
    """Accept a MySQL/MariaDB `SET ...` of a session (dumps save and restore variables, turn
    checks off, set the time zone), refusing what changes how the file reads."""
    lowered = " ".join(text.lower().split())
    mode = re.search(r"sql_mode\s*=\s*'([^']*)'", lowered)
    if mode is not None and {"ansi_quotes", "ansi"} & set(mode.group(1).split(",")):
        raise DumpError("SET sql_mode with ANSI_QUOTES: double quotes would name, not quote")
    names = re.search(r"set\s+names\s+'?([a-z0-9_]+)", lowered)
    clients = re.findall(r"character_set_client\s*=\s*'?([a-z0-9_@]+)", lowered)
    for charset in ([names.group(1)] if names else []) + clients:
        if not charset.startswith(("utf8", "@")):
            raise DumpError(f"SET NAMES {charset}: files are read as UTF-8")
