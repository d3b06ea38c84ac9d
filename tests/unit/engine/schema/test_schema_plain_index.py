"""The plain CREATE INDEX read from its tokens (`ddl._plain_index`) gives what sqlglot's
parser gives: on generated statements of that shape (names bare, quoted, keyword-like, of
every case and length), with and without a clause that takes them off the shape, the Parts
(or the refusal) are the same with the fast path and without it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ptah_operator.engine.schema import ddl
from ptah_operator.engine.schema.model import Dialect, Index
from ptah_operator.engine.schema.parts import DesiredSchemaError

DIALECTS = [Dialect.POSTGRESQL, Dialect.MARIADB, Dialect.MYSQL]

# Names a schema has, keywords among them (PostgreSQL's tokenizer makes `name` a keyword,
# MySQL's `key`), and names at and over the 63/64-character limits.
WORDS = ["id", "name", "email", "code", "key", "type", "value", "index", "user", "order",
         "nulls", "using", "where", "include", "only", "concurrently", "if", "Mixed", "a1_b",
         "x" * 63, "y" * 64, "z" * 65]  # fmt: skip


def quoted(dialect: Dialect, text: str) -> str:
    quote = '"' if dialect is Dialect.POSTGRESQL else "`"
    return quote + text.replace(quote, quote * 2) + quote


def names(dialect: Dialect) -> st.SearchStrategy[str]:
    bare = st.from_regex(r"[A-Za-z_][A-Za-z0-9_$]{0,12}", fullmatch=True)
    inside = st.text(st.characters(blacklist_characters="\x00", codec="utf-8"), max_size=8)
    parser_words = sorted(ddl._parser_words() or ())
    return st.one_of(
        st.sampled_from(WORDS),
        st.sampled_from(parser_words),
        st.builds(lambda w: quoted(dialect, w.lower()), st.sampled_from(parser_words)),
        bare,
        st.builds(lambda w: w.upper(), st.sampled_from(WORDS)),
        st.builds(lambda t: quoted(dialect, t), inside | st.sampled_from(WORDS)),
    )


# What takes a statement off the plain shape, and where it goes (0: after INDEX, 1: after
# the name, 2: after the table, 3: inside the key list, 4: at the end).
CLAUSES = [
    (0, "CONCURRENTLY"), (0, "IF NOT EXISTS"), (1, "USING btree"), (2, "USING hash"),
    (3, "DESC"), (3, "ASC NULLS FIRST"), (3, "(10)"), (3, "text_pattern_ops"),
    (4, "WHERE a > 0"), (4, "INCLUDE (b)"), (4, "NULLS NOT DISTINCT"), (4, "WITH (fillfactor = 70)"),
    (4, "; DROP TABLE t"), (4, ")"), (2, "ONLY"), (4, "COMMENT 'c'"), (4, "INVISIBLE"),
]  # fmt: skip


@st.composite
def statements(draw: Callable[..., Any]) -> tuple[Dialect, str]:
    dialect = draw(st.sampled_from(DIALECTS))
    name = names(dialect)
    keys = draw(st.lists(name, min_size=1, max_size=5))
    clause = draw(st.none() | st.sampled_from(CLAUSES))
    spelled = draw(st.sampled_from([str.upper, str.lower, str.title]))
    where = clause[0] if clause else None
    text = clause[1] if clause else ""
    lead = spelled("create ") + (spelled("unique ") if draw(st.booleans()) else "")
    lead += spelled("index ") + (text + " " if where == 0 else "")
    table = draw(name)
    if draw(st.booleans()):
        table = draw(name) + "." + table
    head = f"{lead}{draw(name)}{' ' + text if where == 1 else ''} {spelled('on')} {table}"
    head += f" {text}" if where == 2 else ""
    listed = [k + (" " + text if where == 3 and i == 0 else "") for i, k in enumerate(keys)]
    return dialect, f"{head} ({', '.join(listed)}){' ' + text if where == 4 else ''}"


def read(dialect: Dialect, text: str) -> str:
    try:
        return repr(ddl.parse_ddl(dialect, text, "f.sql"))
    except DesiredSchemaError as error:
        return f"refused: {error}"


def read_by_the_parser(dialect: Dialect, text: str) -> str:
    fast = ddl._plain_index
    ddl._plain_index = lambda *_: None
    try:
        return read(dialect, text)
    finally:
        ddl._plain_index = fast


@settings(max_examples=1500, deadline=None)
@given(statements())
def test_the_fast_path_reads_what_the_parser_reads(statement: tuple[Dialect, str]) -> None:
    dialect, text = statement
    assert read(dialect, text) == read_by_the_parser(dialect, text), text


def test_the_fast_path_is_taken_for_the_plain_shape() -> None:
    for dialect in DIALECTS:
        tokens = ddl._split(dialect, "CREATE UNIQUE INDEX ix ON tb (email, code)", "f.sql")[0][1]
        assert ddl._plain_index(dialect, tokens) == (
            "" if dialect.family == "mysql" else "public",
            "tb",
            Index(name="ix", columns=("email", "code"), unique=True),
        )
    tokens = ddl._split(Dialect.POSTGRESQL, 'create index "Ix" on Sc."Tb" (Email)', "f.sql")[0][1]
    assert ddl._plain_index(Dialect.POSTGRESQL, tokens) == (
        "sc",
        "Tb",
        Index(name="Ix", columns=("email",)),
    )
    # Off the shape: left to the parser.
    for text in [
        "CREATE INDEX i ON t (a DESC)",
        "CREATE INDEX ON t (a)",
        "CREATE INDEX i ON t ()",
        "CREATE INDEX concurrently ON t (a)",  # a word the parser matches by its text
        'CREATE INDEX "concurrently" ON t (a)',  # even quoted
    ]:
        tokens = ddl._split(Dialect.POSTGRESQL, text, "f.sql")[0][1]
        assert ddl._plain_index(Dialect.POSTGRESQL, tokens) is None, text
