"""Splitting SQL text into the statements sent to the server one at a time: a migration file
(engine/migrations), and each entry of a schema plan or a dump read as desired (engine/schema),
which must be exactly one statement as the server's own client cuts it.

Each statement is sent on its own so a failure can be pinned to its position and, without a
per-file transaction, progress recorded after each one. The split follows what the engines'
own command-line clients do:

PostgreSQL (as psql): single-quoted strings ('' doubles a quote; E'' strings also take
backslash escapes), double-quoted identifiers, dollar quoting with optional tags ($$, $fn$),
`--` line comments, nested `/* */` block comments, and SQL-standard function bodies
(`CREATE FUNCTION ... BEGIN ATOMIC ... END`) whose inner semicolons do not end the statement.

MySQL / MariaDB (as the mysql client): single- and double-quoted strings with backslash
escapes, backtick identifiers, `#` comments, `-- ` comments (the dashes must be followed by
whitespace: `1--1` is arithmetic), `/* */` comments (not nested), and `DELIMITER` lines that
change the terminator for procedure and trigger bodies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum


class Dialect(StrEnum):
    POSTGRESQL = "postgresql"
    MYSQL = "mysql"


class SplitError(ValueError):
    """The text cannot be split: an unterminated string, identifier, comment or body."""

    def __init__(self, what: str, line: int) -> None:
        super().__init__(f"unterminated {what} starting on line {line}")
        self.what = what
        self.line = line


@dataclass(frozen=True)
class Statement:
    """One statement: its text without the terminator, its first line, and its leading words."""

    text: str
    line: int
    keywords: tuple[str, ...] = field(default=())


_SPACE = " \t\r\n\f\v"
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_$\x80-\U0010ffff]")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*)?\$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_PG_SIGNIFICANT = re.compile(r"['\"\-/$;()]")
_PG_SIGNIFICANT_WORDS = re.compile(r"['\"\-/$;()A-Za-z_\x80-\U0010ffff]")
_MYSQL_SIGNIFICANT = "[\\n'\"`#/\\-]"
_DELIMITER_LINE = re.compile(r"[ \t]*delimiter[ \t]+(\S+)[ \t]*\r?$", re.IGNORECASE)


def split(text: str, dialect: Dialect) -> list[Statement]:
    """The statements of `text` in order; comment-only and empty statements are dropped."""
    if dialect is Dialect.POSTGRESQL:
        return _PostgresSplitter(text).run()
    return _MySQLSplitter(text).run()


def leading_keywords(text: str, dialect: Dialect, count: int = 4) -> tuple[str, ...]:
    """The first `count` words of a statement, upper-cased, comments skipped."""
    words: list[str] = []
    i, n = 0, len(text)
    while i < n and len(words) < count:
        if text[i].isspace():
            i += 1
            continue
        past = _past_comment(text, i, dialect)
        if past != i:
            i = past
        elif dialect is Dialect.MYSQL and text.startswith("/*!", i):
            # An executable comment carries code the server runs: read into it.
            i += 3
            while i < n and text[i].isdigit():
                i += 1
        elif text.startswith("*/", i):
            i += 2
        else:
            match = _WORD.match(text, i)
            if match is None:
                break
            words.append(match.group(0).upper())
            i = match.end()
    return tuple(words)


def _skip_block_comment(text: str, i: int, *, nested: bool) -> int:
    """Index just past the comment opening at `i`, or -1 when it never closes."""
    depth = 0
    n = len(text)
    while i < n:
        if text.startswith("/*", i):
            depth += 1 if nested or depth == 0 else 0
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return -1


def _line_comment_at(text: str, i: int, dialect: Dialect) -> bool:
    if dialect is Dialect.MYSQL:
        if text[i] == "#":
            return True
        # The mysql client and server take `--` as a comment only before whitespace.
        return text.startswith("--", i) and (i + 2 >= len(text) or text[i + 2] in _SPACE)
    return text.startswith("--", i)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _first_code(text: str, dialect: Dialect) -> int:
    """Index of the first character that is neither whitespace nor comment, or -1."""
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        past = _past_comment(text, i, dialect)
        if past == i:
            return i
        i = past
    return -1


def _past_comment(text: str, i: int, dialect: Dialect) -> int:
    """Index just past the comment opening at `i` (the end of `text` when it never closes), or
    `i` itself when none opens there. MySQL's `/*!` is code the server runs, not a comment."""
    n = len(text)
    if _line_comment_at(text, i, dialect):
        end = text.find("\n", i)
        return n if end < 0 else end + 1
    if text.startswith("/*", i) and not (dialect is Dialect.MYSQL and text.startswith("/*!", i)):
        end = _skip_block_comment(text, i, nested=dialect is Dialect.POSTGRESQL)
        return n if end < 0 else end
    return i


def _is_blank(text: str, dialect: Dialect) -> bool:
    return _first_code(text, dialect) < 0


class _Splitter:
    dialect: Dialect

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[Statement] = []
        self.start = 0

    def emit(self, end: int, resume: int) -> None:
        chunk = self.text[self.start : end]
        code = _first_code(chunk, self.dialect)
        if code >= 0:
            stripped = chunk.strip()
            self.out.append(
                Statement(
                    text=stripped,
                    line=_line_of(self.text, self.start + code),
                    keywords=leading_keywords(stripped, self.dialect),
                )
            )
        self.start = resume

    def skip_quoted(self, i: int, quote: str, *, backslash: bool, what: str) -> int:
        """Index just past the closing `quote` of the literal opening at `i`."""
        text, n = self.text, len(self.text)
        j = i + 1
        while j < n:
            ch = text[j]
            if backslash and ch == "\\":
                j += 2
                continue
            if ch == quote:
                if j + 1 < n and text[j + 1] == quote:
                    j += 2
                    continue
                return j + 1
            j += 1
        raise SplitError(what, _line_of(text, i))


class _PostgresSplitter(_Splitter):
    dialect = Dialect.POSTGRESQL

    def run(self) -> list[Statement]:
        text, n = self.text, len(self.text)
        i = 0
        # psql's rule for SQL-standard bodies: inside CREATE FUNCTION/PROCEDURE, BEGIN opens a
        # block (and CASE inside one opens another) that END closes; `;` ends the statement
        # only at depth zero.
        begin_depth = 0
        paren_depth = 0
        words_in_statement: list[str] = []
        while i < n:
            # Jump to the next character that can matter; letters matter only while the
            # statement's first words are unknown or it creates a routine.
            wants_words = len(words_in_statement) < 4 or _creates_routine(words_in_statement)
            found = (_PG_SIGNIFICANT_WORDS if wants_words else _PG_SIGNIFICANT).search(text, i)
            if found is None:
                break
            i = found.start()
            ch = text[i]
            if ch == "'":
                backslash = i > 0 and text[i - 1] in "eE" and not _ident_before(text, i - 1)
                i = self.skip_quoted(i, "'", backslash=backslash, what="string")
            elif ch == '"':
                i = self.skip_quoted(i, '"', backslash=False, what="quoted identifier")
            elif ch == "-" and text.startswith("--", i):
                end = text.find("\n", i)
                i = n if end < 0 else end + 1
            elif ch == "/" and text.startswith("/*", i):
                end = _skip_block_comment(text, i, nested=True)
                if end < 0:
                    raise SplitError("block comment", _line_of(text, i))
                i = end
            elif ch == "$" and not _ident_before(text, i):
                match = _DOLLAR_TAG.match(text, i)
                if match is None:
                    i += 1
                    continue
                tag = match.group(0)
                close = text.find(tag, match.end())
                if close < 0:
                    raise SplitError("dollar-quoted string", _line_of(text, i))
                i = close + len(tag)
            elif ch == ";" and begin_depth == 0:
                self.emit(i, i + 1)
                words_in_statement = []
                paren_depth = 0
                i += 1
            elif ch in "();":
                paren_depth += {"(": 1, ")": -1, ";": 0}[ch]
                i += 1
            elif _IDENT_CHAR.match(ch) and not _ident_before(text, i):
                match = _WORD.match(text, i)
                if match is None:
                    i += 1
                    continue
                word = match.group(0).upper()
                if len(words_in_statement) < 4:
                    words_in_statement.append(word)
                if paren_depth == 0 and _creates_routine(words_in_statement):
                    if word == "BEGIN" or (word == "CASE" and begin_depth > 0):
                        begin_depth += 1
                    elif word == "END" and begin_depth > 0:
                        begin_depth -= 1
                i = match.end()
            else:
                i += 1
        self.emit(n, n)
        return self.out


def _ident_before(text: str, i: int) -> bool:
    """True when the character before `i` continues an identifier (so `$` or `'` is inside it)."""
    return i > 0 and _IDENT_CHAR.match(text[i - 1]) is not None


def _creates_routine(words: list[str]) -> bool:
    if not words or words[0] != "CREATE":
        return False
    rest = words[1:]
    if rest[:2] == ["OR", "REPLACE"]:
        rest = rest[2:]
    return bool(rest) and rest[0] in {"FUNCTION", "PROCEDURE"}


class _MySQLSplitter(_Splitter):
    dialect = Dialect.MYSQL

    def run(self) -> list[Statement]:
        text, n = self.text, len(self.text)
        delimiter = ";"
        significant = re.compile(_MYSQL_SIGNIFICANT + "|" + re.escape(delimiter))
        i = 0
        at_line_start = True
        while i < n:
            if at_line_start:
                line_end = text.find("\n", i)
                line_end = n if line_end < 0 else line_end
                match = _DELIMITER_LINE.match(text, i, line_end)
                if match is not None and _is_blank(text[self.start : i], self.dialect):
                    # The mysql client reads DELIMITER itself; it never reaches the server.
                    delimiter = match.group(1)
                    significant = re.compile(_MYSQL_SIGNIFICANT + "|" + re.escape(delimiter))
                    self.start = min(line_end + 1, n)
                    i = self.start
                    continue
                if match is not None:
                    # A DELIMITER line ends whatever statement was open, as the client does.
                    self.emit(i, min(line_end + 1, n))
                    delimiter = match.group(1)
                    significant = re.compile(_MYSQL_SIGNIFICANT + "|" + re.escape(delimiter))
                    i = self.start
                    continue
            at_line_start = False
            found = significant.search(text, i)
            if found is None:
                break
            i = found.start()
            ch = text[i]
            if text.startswith(delimiter, i):
                self.emit(i, i + len(delimiter))
                i += len(delimiter)
                continue
            if ch in "'\"":
                i = self.skip_quoted(i, ch, backslash=True, what="string")
            elif ch == "`":
                i = self.skip_quoted(i, "`", backslash=False, what="quoted identifier")
            elif _line_comment_at(text, i, self.dialect):
                end = text.find("\n", i)
                i = n if end < 0 else end
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    raise SplitError("block comment", _line_of(text, i))
                i = end + 2
            elif ch == "\n":
                at_line_start = True
                i += 1
            else:
                i += 1
        self.emit(n, n)
        return self.out
