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
change the terminator for procedure and trigger bodies (a quoted argument loses its quotes, as
the client strips them).

Without a `DELIMITER` line, a compound statement is still one statement, cut where the same
text between `DELIMITER //` lines would be cut: a stored program (`CREATE [DEFINER = ...]
PROCEDURE | FUNCTION | TRIGGER | EVENT`, `ALTER EVENT`) and MariaDB's compound statements
outside one (`BEGIN NOT ATOMIC`, `IF`, `CASE`, `LOOP`, `REPEAT`, `WHILE`, `FOR`, labelled).
Inside one, `;` ends the statement only when every `BEGIN`, `CASE`, `IF`, loop opened has met its
`END`; `IF(a, b, c)`, `REPEAT('x', 2)` and `IF [NOT] EXISTS` after an object word are not
openers. `BEGIN` opens a block, and a bare `END` closes one, only where a statement can start
(after `;`, a label, THEN, ELSE, DO, FOR EACH ROW, a handler's conditions, the routine head):
`WHERE begin < NOW()` and `SET end = 1` name columns. `END IF`, `END LOOP`, ... close only a
block of that kind; a CASE expression's `END` leaves the next word alone (`END FOR UPDATE`). A body that never closes refuses the file rather than being cut where it happens to.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.patterns import or_non_ascii


class SplitError(ValueError):
    """The text cannot be split: an unterminated string, identifier, comment or body, or a
    `DELIMITER` line the mysql client would not take. `message` never quotes the text."""

    def __init__(self, what: str, line: int, message: str | None = None) -> None:
        super().__init__(message or f"unterminated {what} starting on line {line}")
        self.what = what
        self.line = line


@dataclass(frozen=True)
class Statement:
    """One statement: its text without the terminator, its first line, and its leading words."""

    text: str
    line: int
    keywords: tuple[str, ...] = field(default=())


_SPACE = " \t\r\n\f\v"
_IDENT_CHAR = re.compile(or_non_ascii("A-Za-z0-9_$"))
_DOLLAR_TAG = re.compile(rf"\$({or_non_ascii('A-Za-z_')}{or_non_ascii('A-Za-z0-9_')}*)?\$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_PG_SIGNIFICANT = re.compile(r"['\"\-/$;()]")
_PG_SIGNIFICANT_WORDS = re.compile(or_non_ascii("'\"\\-/$;()A-Za-z_"))
_MYSQL_SIGNIFICANT = "[\\n'\"`#/\\-]"
_DELIMITER_LINE = re.compile(r"[ \t]*delimiter(?:[ \t]+([^\r\n]*?))?[ \t]*\r?$", re.IGNORECASE)


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
        # Statements come in order: count newlines from the last one, not from the top.
        self._counted_to = 0
        self._newlines = 0

    def line_at(self, index: int) -> int:
        if index < self._counted_to:
            return _line_of(self.text, index)
        self._newlines += self.text.count("\n", self._counted_to, index)
        self._counted_to = index
        return self._newlines + 1

    def emit(self, end: int, resume: int) -> None:
        chunk = self.text[self.start : end]
        code = _first_code(chunk, self.dialect)
        if code >= 0:
            stripped = chunk.strip()
            self.out.append(
                Statement(
                    text=stripped,
                    line=self.line_at(self.start + code),
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
                blank = match is not None and _is_blank(text[self.start : i], self.dialect)
                changed = match is not None and _delimiter_argument(
                    match.group(1), _line_of(text, i), statement_start=blank
                )
                if changed and blank:
                    # The mysql client reads DELIMITER itself; it never reaches the server.
                    delimiter = changed
                    significant = re.compile(_MYSQL_SIGNIFICANT + "|" + re.escape(delimiter))
                    self.start = min(line_end + 1, n)
                    i = self.start
                    continue
                if changed:
                    # A DELIMITER line ends whatever statement was open, as the client does.
                    self.emit(i, min(line_end + 1, n))
                    delimiter = changed
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
                if delimiter == ";" and self._opens_compound():
                    end, at_delimiter_line = self._compound_end()
                    if at_delimiter_line:
                        i, at_line_start = end, True
                        continue
                    self.emit(end, min(end + 1, n))
                    i = end + 1
                    continue
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

    def _opens_compound(self) -> bool:
        """Whether the statement open since `self.start` is a stored program or a compound
        statement, whose inner `;` do not end it."""
        head = _MYSQL_HEAD.match(self.text, self.start)
        assert head is not None  # every part of the pattern is optional
        word, second, label = head.group(1), head.group(2), head.group(3)
        if word is not None and label is None:
            upper = word.upper()
            if upper not in _COMPOUND_FIRST:
                return False
            if upper in ("CREATE", "ALTER") and second and second.upper() not in _PROGRAM_HEAD:
                return False  # CREATE TABLE, ALTER TABLE, ...: no closer look needed
        if word is None and self.text.startswith(";", head.end()):
            return False
        tokens = _MySQLTokens(self, self.start, executable=True)
        first = tokens.next()
        if first is None:
            return False
        second = tokens.peek()
        if second is not None and second.kind is _Tok.PUNCT and second.value == ":":
            return first.kind in (_Tok.WORD, _Tok.NAME)  # a label: `name: LOOP ...`
        if first.kind is not _Tok.WORD:
            return False
        if first.value in _COMPOUND_OPENERS:
            return True
        if first.value == "BEGIN":
            return _is_word(second, "NOT") and _is_word(tokens.peek(1), "ATOMIC")
        if first.value in ("CREATE", "ALTER"):
            return _creates_program(tokens, first.value)
        return False

    def _compound_end(self) -> tuple[int, bool]:
        """Where the compound statement open since `self.start` ends: the index of its `;`, or
        of a DELIMITER line (True), or the end of the text. Raises SplitError when a block is
        still open there."""
        text, n = self.text, len(self.text)
        tokens = _MySQLTokens(self, self.start, executable=False)
        blocks: list[tuple[str, int]] = []  # (opener, paren depth it opened at)
        paren = 0
        prev: _Token | None = None
        where = _Where()
        while True:
            tok = tokens.next()
            if tok is None or tok.kind is _Tok.DELIMITER_LINE:
                if blocks:
                    first = _first_code(text[self.start :], self.dialect)
                    line = _line_of(text, self.start + max(first, 0))
                    raise SplitError(
                        "compound statement",
                        line,
                        f"unterminated compound statement starting on line {line}: a BEGIN,"
                        " CASE, IF or loop has no END (or write DELIMITER lines around it)",
                    )
                return (n, False) if tok is None else (tok.start, True)
            if tok.kind is _Tok.PUNCT:
                if tok.value == ";":
                    if not blocks:
                        return tok.start, False
                    paren = 0
                    where.handler = False
                elif tok.value == "(":
                    paren += 1
                elif tok.value == ")":
                    paren = max(0, paren - 1)
            elif tok.kind is _Tok.WORD and not _qualified(prev, tokens.peek()):
                starts = paren == 0 and where.statement_starts(tok.value, prev)
                took_next = _block_word(tok.value, prev, tokens, blocks, paren, starts=starts)
                if paren == 0:
                    where.note_word(tok.value, prev, in_block=bool(blocks))
                if took_next:
                    tok = tokens.next() or tok  # the IF of END IF, ...
            where.before_prev = prev
            prev = tok


_MYSQL_HEAD = re.compile(
    r"(?:[ \t\r\n\f\v]+|#[^\n]*|--(?=[ \t\r\n\f\v]|$)[^\n]*|/\*(?![!M])(?:[^*]|\*(?!/))*\*/)*"
    r"(?:([A-Za-z_][A-Za-z0-9_$]*)(?:[ \t\r\n\f\v]+([A-Za-z_][A-Za-z0-9_$]*)\b)?"
    r"[ \t\r\n\f\v]*(:(?!=))?)?"
)
# Words that can start a stored program or a compound statement, and so ask for a closer look.
_COMPOUND_FIRST = frozenset(
    {"CREATE", "ALTER", "BEGIN", "IF", "CASE", "LOOP", "REPEAT", "WHILE", "FOR"}
)
_COMPOUND_OPENERS = frozenset({"IF", "CASE", "LOOP", "REPEAT", "WHILE", "FOR"})
_END_KINDS = ("IF", "CASE", "LOOP", "REPEAT", "WHILE", "FOR")
# Second words of a CREATE or ALTER that may still lead to a stored program.
_PROGRAM_HEAD = frozenset(
    {"PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "DEFINER", "OR", "AGGREGATE", "SQL"}
    | {"EDITIONABLE", "NONEDITIONABLE"}
)
_PROGRAM_MODIFIERS = frozenset(
    {"OR", "REPLACE", "AGGREGATE", "SQL", "EDITIONABLE", "NONEDITIONABLE"}
)
# Words after which `IF [NOT] EXISTS` belongs to a DDL statement, not to an IF statement.
_DDL_BEFORE_IF = frozenset(
    {
        "TABLE", "TABLES", "VIEW", "PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "DATABASE",
        "SCHEMA", "INDEX", "KEY", "COLUMN", "CONSTRAINT", "PARTITION", "USER", "ROLE",
        "SEQUENCE", "SERVER", "TABLESPACE", "PACKAGE", "BODY", "ADD", "DROP", "CHANGE",
        "MODIFY", "RENAME", "CHECK", "PERIOD", "SYNONYM", "STATISTICS",
    }
)  # fmt: skip
_IDENT_RUN = re.compile(or_non_ascii("A-Za-z0-9_$") + "+")


class _Tok(Enum):
    WORD = "word"  # an unquoted word that may be a keyword (upper-cased)
    NAME = "name"  # a quoted identifier, or a run that starts with a digit
    STRING = "string"
    VARIABLE = "variable"  # @name, @@name, @'host'
    PUNCT = "punct"
    DELIMITER_LINE = "delimiter line"


@dataclass(frozen=True)
class _Token:
    kind: _Tok
    value: str
    start: int


class _MySQLTokens:
    """The tokens of MySQL text from `start`, with a lookahead. Comments are skipped; with
    `executable`, the code inside `/*! ... */` is read as code (to name a statement),
    otherwise the whole comment is skipped as the splitter's main loop does. A line that is a
    DELIMITER command ends the tokens with a DELIMITER_LINE token."""

    def __init__(self, splitter: _Splitter, start: int, *, executable: bool) -> None:
        self.splitter = splitter
        self.text = splitter.text
        self.i = start
        self.executable = executable
        self.ahead: deque[_Token] = deque()
        self.done = False

    def next(self) -> _Token | None:
        if self.ahead:
            return self.ahead.popleft()
        return self._lex()

    def peek(self, k: int = 0) -> _Token | None:
        while len(self.ahead) <= k:
            tok = self._lex()
            if tok is None:
                return None
            self.ahead.append(tok)
        return self.ahead[k]

    def _lex(self) -> _Token | None:
        if self.done:
            return None
        text, n = self.text, len(self.text)
        i = self.i
        while i < n:
            ch = text[i]
            if ch == "\n":
                i += 1
                if not self.executable and _delimiter_line_at(text, i):
                    self.i, self.done = i, True
                    return _Token(_Tok.DELIMITER_LINE, "", i)
                continue
            if ch in _SPACE:
                i += 1
                continue
            if ch in "'\"`":
                what = "quoted identifier" if ch == "`" else "string"
                end = self.splitter.skip_quoted(i, ch, backslash=ch != "`", what=what)
                self.i = end
                return _Token(_Tok.NAME if ch == "`" else _Tok.STRING, "", i)
            if _line_comment_at(text, i, Dialect.MYSQL):
                end = text.find("\n", i)
                i = n if end < 0 else end
                continue
            if text.startswith("/*", i):
                opened = re.match(r"/\*M?!\d*", text[i : i + 12])
                if self.executable and opened is not None:
                    i += opened.end()
                    continue
                end = text.find("*/", i + 2)
                if end < 0:
                    raise SplitError("block comment", _line_of(text, i))
                i = end + 2
                continue
            if self.executable and text.startswith("*/", i):
                i += 2
                continue
            run = _IDENT_RUN.match(text, i)
            if run is not None:
                self.i = run.end()
                word = run.group(0)
                if word[0].isdigit():
                    return _Token(_Tok.NAME, word, i)
                return _Token(_Tok.WORD, word.upper(), i)
            if ch == "@":
                j = i + 2 if text.startswith("@@", i) else i + 1
                if j < n and text[j] in "'\"`":
                    j = self.splitter.skip_quoted(
                        j, text[j], backslash=text[j] != "`", what="string"
                    )
                else:
                    after = _IDENT_RUN.match(text, j)
                    j = after.end() if after is not None else j
                self.i = j
                return _Token(_Tok.VARIABLE, "", i)
            width = 2 if text.startswith(":=", i) else 1
            self.i = i + width
            return _Token(_Tok.PUNCT, text[i : i + width], i)
        self.i, self.done = n, True
        return None


def _is_word(tok: _Token | None, *words: str) -> bool:
    return tok is not None and tok.kind is _Tok.WORD and tok.value in words


def _is_punct(tok: _Token | None, value: str) -> bool:
    return tok is not None and tok.kind is _Tok.PUNCT and tok.value == value


def _qualified(prev: _Token | None, following: _Token | None) -> bool:
    """A word beside a `.` names a table or column (`t.end`, `begin.x`), never a keyword."""
    return _is_punct(prev, ".") or _is_punct(following, ".")


def _creates_program(tokens: _MySQLTokens, verb: str) -> bool:
    """After CREATE (or ALTER): whether the statement defines a stored program."""
    tok = tokens.next()
    while tok is not None and tok.kind is _Tok.WORD:
        if tok.value in ("PROCEDURE", "FUNCTION", "TRIGGER"):
            return verb == "CREATE"
        if tok.value == "EVENT":
            return True
        if tok.value == "DEFINER":
            # DEFINER [=] user[@host] | CURRENT_USER[()] | CURRENT_ROLE[()]
            if _is_punct(tokens.peek(), "="):
                tokens.next()
            tokens.next()
            host = tokens.peek()
            if host is not None and host.kind is _Tok.VARIABLE:
                tokens.next()
            if _is_punct(tokens.peek(), "(") and _is_punct(tokens.peek(1), ")"):
                tokens.next()
                tokens.next()
        elif tok.value == "SECURITY":
            tokens.next()  # DEFINER or INVOKER
        elif tok.value not in _PROGRAM_MODIFIERS:
            return False
        tok = tokens.next()
    return False


# Tokens after which a statement of a compound statement can start (so BEGIN opens a block
# there, a bare END closes one, IF is the IF statement): `;`, a label's `:`, THEN, ELSE, DO,
# FOR EACH ROW, the start of a block or loop.
_STATEMENT_AFTER_WORDS = frozenset(
    {"THEN", "ELSE", "DO", "ROW", "BEGIN", "ATOMIC", "LOOP", "REPEAT"}
)
# Words that start the body of a routine written without BEGIN: the routine head is over.
_BODY_FIRST = frozenset(
    {
        "RETURN", "SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "SET", "CALL", "WITH",
        "VALUES", "TABLE", "CREATE", "ALTER", "DROP", "TRUNCATE", "RENAME", "GRANT", "REVOKE",
        "DECLARE", "OPEN", "CLOSE", "FETCH", "SIGNAL", "RESIGNAL", "PREPARE", "EXECUTE",
        "DEALLOCATE", "START", "COMMIT", "ROLLBACK", "LOCK", "UNLOCK", "FLUSH", "SHOW", "LOAD",
        "DO", "IF", "CASE", "LOOP", "REPEAT", "WHILE", "FOR", "BEGIN", "LEAVE", "ITERATE",
    }
)  # fmt: skip
# Words of a handler's condition list (`DECLARE ... HANDLER FOR SQLSTATE '23000', NOT FOUND`).
_HANDLER_CONDITION = frozenset({"SQLSTATE", "VALUE", "SQLWARNING", "SQLEXCEPTION", "NOT", "FOUND"})


class _Where:
    """Where in a compound statement a statement can start, beside the block stack: in the
    head of a PROCEDURE or FUNCTION (before its body), and after a handler's condition list."""

    def __init__(self) -> None:
        self.head = False  # between PROCEDURE/FUNCTION and the first word of the body
        self.head_done = False
        self.handler = False  # after DECLARE ... HANDLER FOR, until the body's first word
        self.before_prev: _Token | None = None

    def statement_starts(self, word: str, prev: _Token | None) -> bool:
        """Whether a statement can start at `word` (which follows `prev`)."""
        if self.handler:
            if _is_word(prev, "FOR") or _is_punct(prev, ",") or word in _HANDLER_CONDITION:
                return False  # a condition name or a condition word
            self.handler = False
            return True
        if self.head:
            return True
        if prev is None or _is_punct(prev, ";") or _is_punct(prev, ":"):
            return True
        if _is_word(self.before_prev, "FOLLOWS", "PRECEDES"):
            return True  # FOR EACH ROW FOLLOWS other_trigger BEGIN
        return _is_word(prev, *_STATEMENT_AFTER_WORDS)

    def note_word(self, word: str, prev: _Token | None, *, in_block: bool) -> None:
        """Follow a word outside parentheses: the routine head opens at PROCEDURE or FUNCTION
        and closes at the first word of the body (or inside a block); a handler's condition
        list opens at HANDLER FOR."""
        if word == "FOR" and _is_word(prev, "HANDLER"):
            self.handler = True
        if in_block:
            self.head, self.head_done = False, True
        elif self.head:
            ddl_if = word == "IF" and _is_word(prev, *_DDL_BEFORE_IF)
            charset = word == "SET" and _is_word(prev, "CHARACTER")
            if word in _BODY_FIRST and not ddl_if and not charset:
                self.head, self.head_done = False, True
        elif not self.head_done and word in ("PROCEDURE", "FUNCTION"):
            self.head = True


def _block_word(
    word: str,
    prev: _Token | None,
    tokens: _MySQLTokens,
    blocks: list[tuple[str, int]],
    paren: int,
    *,
    starts: bool,
) -> bool:
    """Open or close a block for one word of a compound statement; `starts` says a statement
    can start at it. True when the END took the word after it (END IF, END LOOP, ...)."""
    following = tokens.peek()
    if word == "END":
        if following is not None and _is_word(following, *_END_KINDS):
            if blocks and blocks[-1][0] == following.value:
                blocks.pop()
                return True
            if blocks and blocks[-1][0] == "CASE":
                # A CASE expression's END before FOR UPDATE, IF(...), ...: the word is not END's.
                blocks.pop()
                return False
            _close(blocks, (following.value,))
            return True
        if paren > 0:
            # Inside parentheses only a CASE expression can end (`MAX(end)` is a column).
            if blocks and blocks[-1] == ("CASE", paren):
                blocks.pop()
        elif blocks and blocks[-1][0] == "CASE":
            blocks.pop()
        elif starts:
            _close(blocks, ("BEGIN", "CASE"))
        # Otherwise `end` is a name: `SET end = NOW()`, `SELECT a AS end`.
        return False
    if word == "CASE":
        blocks.append(("CASE", paren))
    elif paren > 0:
        return False  # blocks and statements never start inside parentheses
    elif word == "BEGIN":
        # Only where a statement starts: `WHERE begin < NOW()` names a column.
        if starts and not _is_word(prev, "XA"):
            blocks.append(("BEGIN", paren))
    elif word == "IF":
        if _is_word(prev, *_DDL_BEFORE_IF):
            return False  # DROP TABLE IF EXISTS, ADD COLUMN IF NOT EXISTS, ...
        if not starts and _is_punct(following, "(") and _comma_in_parentheses(tokens):
            return False  # the IF(condition, then, else) function
        blocks.append(("IF", paren))
    elif word in ("LOOP", "WHILE"):
        blocks.append((word, paren))
    elif word == "REPEAT":
        if not _is_punct(following, "("):  # REPEAT('x', 2) is a function
            blocks.append(("REPEAT", paren))
    elif word == "FOR":
        # MariaDB's FOR loop is `FOR name IN ...`; FOR EACH ROW, FOR UPDATE, CURSOR FOR,
        # HANDLER FOR are not.
        loop_var = following is not None and following.kind in (_Tok.WORD, _Tok.NAME)
        if loop_var and _is_word(tokens.peek(1), "IN"):
            blocks.append(("FOR", paren))
    return False


def _close(blocks: list[tuple[str, int]], kinds: tuple[str, ...]) -> None:
    """Close the innermost open block of one of `kinds`, and any left open inside it."""
    for index in range(len(blocks) - 1, -1, -1):
        if blocks[index][0] in kinds:
            del blocks[index:]
            return


def _comma_in_parentheses(tokens: _MySQLTokens) -> bool:
    """Whether the parenthesised group the next token opens holds a comma at its own level."""
    depth = 0
    k = 0
    while (tok := tokens.peek(k)) is not None:
        if tok.kind is _Tok.PUNCT:
            if tok.value == "(":
                depth += 1
            elif tok.value == ")":
                depth -= 1
                if depth == 0:
                    return False
            elif tok.value == "," and depth == 1:
                return True
            elif tok.value == ";":
                return False
        k += 1
    return False


def _delimiter_line_at(text: str, i: int) -> bool:
    """Whether the line starting at `i` is a DELIMITER command inside a statement."""
    if not text.startswith(("d", "D", " ", "\t"), i):
        return False
    line_end = text.find("\n", i)
    match = _DELIMITER_LINE.match(text, i, len(text) if line_end < 0 else line_end)
    return match is not None and bool((match.group(1) or "").strip())


def _delimiter_argument(argument: str | None, line: int, *, statement_start: bool) -> str | None:
    """The delimiter a DELIMITER line sets, read as the mariadb client reads it: a quoted
    argument (' " `) loses its quotes, a doubled quote is one, a backslash escapes (not in
    backticks); an unquoted one ends at whitespace; anything after it is ignored. None when the
    line is not a DELIMITER command (a bare `delimiter` inside a statement is a word)."""
    argument = (argument or "").strip()
    if not argument:
        if not statement_start:
            return None
        raise SplitError("empty delimiter", line, f"DELIMITER on line {line} names no delimiter")
    quote = argument[0]
    if quote not in "'\"`":
        value = argument.split(None, 1)[0]
    else:
        chars: list[str] = []
        j, closed = 1, False
        while j < len(argument):
            ch = argument[j]
            if ch == "\\" and quote != "`" and j + 1 < len(argument):
                chars.append(argument[j + 1])
                j += 2
            elif ch == quote and argument.startswith(quote * 2, j):
                chars.append(quote)
                j += 2
            elif ch == quote:
                closed = True
                break
            else:
                chars.append(ch)
                j += 1
        if not closed:
            raise SplitError("quoted delimiter", line)
        value = "".join(chars)
        if not value:
            raise SplitError(
                "empty delimiter", line, f"DELIMITER on line {line} names no delimiter"
            )
    if "\\" in value:
        raise SplitError(
            "delimiter with a backslash",
            line,
            f"DELIMITER on line {line} holds a backslash, which the mysql client refuses",
        )
    return value
