"""Statements of a desired schema that the DDL reader takes from their tokens, not sqlglot's
tree: what dumps write around the schema (session settings, `DROP ... IF EXISTS` before each
object, `ALTER TABLE ... ALTER COLUMN ... SET DEFAULT` and `... ADD GENERATED ... AS
IDENTITY`), extensions, schema owners and comments, triggers; and every kind of object the
engine does not model, refused by name.
"""

from __future__ import annotations

from sqlglot import Token, TokenType

from ptah_operator.engine.schema.dumps import DumpError, mysql_setting, pg_setting
from ptah_operator.engine.schema.functions import read_arguments
from ptah_operator.engine.schema.model import Check, Dialect, Domain, Extension
from ptah_operator.engine.schema.normalize import (
    normalize_default,
    normalize_expression,
    normalize_grantee,
    normalize_type,
)
from ptah_operator.engine.schema.parts import Parts
from ptah_operator.engine.schema.triggers import TriggerError, read_trigger
from ptah_operator.engine.schema.words import UnreadableError, Words, relation, span


class RefusedError(ValueError):
    """A statement the engine will not plan: the message names the construct."""


# Leading words of statements making what the engine does not model, with what they make.
_UNMODELLED: tuple[tuple[tuple[str, ...], str], ...] = (
    (("CREATE", "POLICY"), "row-level security policies"),
    (("ALTER", "POLICY"), "row-level security policies"),
    (("CREATE", "COLLATION"), "collations (CREATE COLLATION)"),
    (("ALTER", "COLLATION"), "collations (CREATE COLLATION)"),
    (("CREATE", "AGGREGATE"), "aggregates"),
    (("CREATE", "OR", "REPLACE", "AGGREGATE"), "aggregates"),
    (("ALTER", "AGGREGATE"), "aggregates"),
    (("CREATE", "PROCEDURE"), "procedures"),
    (("CREATE", "OR", "REPLACE", "PROCEDURE"), "procedures"),
    (("ALTER", "PROCEDURE"), "procedures"),
    (("CREATE", "RULE"), "rules"),
    (("CREATE", "OR", "REPLACE", "RULE"), "rules"),
    (("CREATE", "EVENT"), "event triggers and events"),
    (("CREATE", "OPERATOR"), "operators, operator classes and families"),
    (("CREATE", "CAST"), "casts"),
    (("CREATE", "CONVERSION"), "conversions"),
    (("CREATE", "TEXT", "SEARCH"), "text search configurations"),
    (("ALTER", "TEXT", "SEARCH"), "text search configurations"),
    (("CREATE", "PUBLICATION"), "publications"),
    (("CREATE", "SUBSCRIPTION"), "subscriptions"),
    (("CREATE", "FOREIGN"), "foreign tables and data wrappers"),
    (("CREATE", "SERVER"), "foreign servers"),
    (("CREATE", "USER", "MAPPING"), "user mappings"),
    (("CREATE", "STATISTICS"), "extended statistics"),
    (("CREATE", "TABLESPACE"), "tablespaces"),
    (("CREATE", "ROLE"), "roles"),
    (("CREATE", "USER"), "users and roles"),
    (("CREATE", "GROUP"), "roles"),
    (("CREATE", "DATABASE"), "databases (the desired schema is the URL's database's)"),
    (("USE",), "databases (the desired schema is the URL's database's)"),
    (("CREATE", "ACCESS", "METHOD"), "access methods"),
    (("CREATE", "LANGUAGE"), "procedural languages"),
    (("CREATE", "TRANSFORM"), "transforms"),
    (("CREATE", "CONSTRAINT", "TRIGGER"), "constraint triggers"),
    (("ALTER", "EXTENSION"), "extension changes (ALTER EXTENSION)"),
    (("ALTER", "DEFAULT", "PRIVILEGES"), "default privileges"),
    (("SECURITY", "LABEL"), "security labels"),
)

# ALTER TABLE clauses that change what the engine does not model, with what they change.
_UNMODELLED_CLAUSES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ATTACH", "PARTITION"), "declarative partitioning (ATTACH PARTITION)"),
    (("DETACH", "PARTITION"), "declarative partitioning (DETACH PARTITION)"),
    (("ENABLE", "ROW", "LEVEL", "SECURITY"), "row-level security"),
    (("DISABLE", "ROW", "LEVEL", "SECURITY"), "row-level security"),
    (("FORCE", "ROW", "LEVEL", "SECURITY"), "row-level security"),
    (("NO", "FORCE", "ROW", "LEVEL", "SECURITY"), "row-level security"),
    (("ENABLE", "TRIGGER"), "whether a trigger fires (ENABLE/DISABLE TRIGGER)"),
    (("DISABLE", "TRIGGER"), "whether a trigger fires (ENABLE/DISABLE TRIGGER)"),
    (("ENABLE", "REPLICA"), "whether a trigger or rule fires (ENABLE REPLICA)"),
    (("ENABLE", "ALWAYS"), "whether a trigger or rule fires (ENABLE ALWAYS)"),
    (("ENABLE", "RULE"), "rules"),
    (("DISABLE", "RULE"), "rules"),
    (("REPLICA", "IDENTITY"), "replica identity"),
    (("CLUSTER", "ON"), "the clustering index (CLUSTER ON)"),
    (("SET", "WITHOUT", "CLUSTER"), "the clustering index"),
    (("SET", "("), "storage parameters (SET (...))"),
    (("RESET", "("), "storage parameters"),
    (("SET", "TABLESPACE"), "tablespaces"),
    (("SET", "LOGGED"), "unlogged tables"),
    (("SET", "UNLOGGED"), "unlogged tables"),
    (("SET", "ACCESS", "METHOD"), "table access methods"),
    (("INHERIT",), "table inheritance (INHERIT)"),
    (("NO", "INHERIT"), "table inheritance (NO INHERIT)"),
    (("OF",), "typed tables (OF type)"),
    (("NOT", "OF"), "typed tables"),
)

_COLUMN_CLAUSES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("SET", "STATISTICS"), "per-column statistics targets (SET STATISTICS)"),
    (("SET", "STORAGE"), "column storage (SET STORAGE)"),
    (("SET", "COMPRESSION"), "column compression (SET COMPRESSION)"),
    (("SET", "("), "per-column options (SET (...))"),
    (("RESET", "("), "per-column options"),
)


def _starts(words: Words, lead: tuple[str, ...]) -> bool:
    at = words.at
    for offset, word in enumerate(lead):
        index = at + offset
        if index >= len(words.tokens):
            return False
        token = words.tokens[index]
        if word == "(":
            if token.token_type is not TokenType.L_PAREN:
                return False
        elif token.token_type in Words._NOT_WORDS or token.text.upper() != word:
            return False
    return True


_LONGEST_LEAD = max(len(lead) for lead, _ in _UNMODELLED)


def _head(words: Words) -> tuple[str | None, ...]:
    """The next tokens as `_starts` compares them to a lead: a word in capitals, `(` for an
    opening parenthesis, None for any other value or punctuation."""
    return tuple(
        "("
        if token.token_type is TokenType.L_PAREN
        else None
        if token.token_type in Words._NOT_WORDS
        else token.text.upper()
        for token in words.tokens[words.at : words.at + _LONGEST_LEAD]
    )


def _unmodelled_lead(words: Words) -> tuple[tuple[str, ...], str] | None:
    """The first entry of `_UNMODELLED` the statement starts with: its head computed once
    and compared to every lead (each statement of a file is held to all of them)."""
    head = _head(words)
    for lead, what in _UNMODELLED:
        if head[: len(lead)] == lead:
            return lead, what
    return None


def refused(words: Words) -> str | None:
    """What the statement makes, when the engine does not model it."""
    found = _unmodelled_lead(words)
    return found[1] if found is not None else None


def _named(words: Words) -> str:
    """`: name` of the object a refused statement makes, where its tokens say one plainly."""
    found = _unmodelled_lead(words)
    if found is None:
        return ""
    probe = Words(words.dialect, words.tokens)
    probe.at = len(found[0])
    try:
        return ": " + ".".join(probe.dotted())
    except UnreadableError:
        return ""


def read_statement(dialect: Dialect, text: str, tokens: list[Token], parts: Parts) -> bool:
    """Read the statement when it is one of this module's; False to leave it to the rest of
    the DDL reader. Raises RefusedError (by name) or UnreadableError."""
    words = Words(dialect, tokens)
    pg = dialect.family == "postgresql"
    what = refused(words)
    if what is not None:
        raise RefusedError(f"{what} are not modelled by the engine{_named(words)}")
    try:
        if _session(dialect, words, text, tokens):
            return True
    except DumpError as error:
        raise RefusedError(str(error)) from None
    if words.starts("DROP"):
        _drop(dialect, words, parts)
        return True
    if words.starts("CREATE", "EXTENSION") or words.starts("COMMENT", "ON", "EXTENSION"):
        if not pg:
            raise RefusedError("extensions are PostgreSQL's")
        _extension(dialect, words, parts)
        return True
    if pg and words.starts("COMMENT", "ON") and _object_comment(dialect, words, text, parts):
        return True
    if pg and (words.starts("ALTER", "SCHEMA") or words.starts("COMMENT", "ON", "SCHEMA")):
        _schema(dialect, words, parts)
        return True
    if not pg and words.starts("CREATE", "TABLE") and _partitioned(tokens):
        raise RefusedError("partitioning (PARTITION BY) on MySQL/MariaDB is not modelled")
    if not pg:
        routine = _mysql_routine(tokens)
        if routine is not None:
            raise RefusedError(
                f"{routine} on MySQL/MariaDB are not modelled by the engine"
                + (" (their bodies need the client's DELIMITER)" if routine != "events" else "")
            )
    if words.starts("CREATE", "TRIGGER") or words.starts("CREATE", "OR", "REPLACE", "TRIGGER"):
        if not pg:
            raise RefusedError(
                "triggers on MySQL/MariaDB are not modelled by the engine (their bodies need "
                "the client's DELIMITER)"
            )
        try:
            parts.triggers.append(read_trigger(text, tokens))
        except TriggerError as error:
            raise RefusedError(str(error)) from None
        return True
    if words.starts("CREATE", "DOMAIN"):
        if not pg:
            raise RefusedError("domains are PostgreSQL's")
        parts.domains.append(_domain(dialect, words, text))
        return True
    if words.starts("ALTER", "DOMAIN") and not (
        len(tokens) > 4 and [t.text.upper() for t in tokens[-3:-1]] == ["OWNER", "TO"]
    ):
        raise RefusedError("ALTER DOMAIN is read only as OWNER TO: state the domain whole")
    if words.starts("ALTER", "INDEX"):
        if any(t.text.upper() == "PARTITION" for t in tokens):
            raise RefusedError(
                "declarative partitioning (ALTER INDEX ... ATTACH PARTITION) is not modelled"
            )
        raise RefusedError("ALTER INDEX is not read: state the index as CREATE INDEX")
    if words.starts("ALTER", "TABLE"):
        return _alter_table(dialect, words, text, parts)
    if (words.starts("GRANT") or words.starts("REVOKE")) and pg:
        _object_privileges(words)
    return False


_MYSQL_ROUTINES = {
    "TRIGGER": "triggers",
    "PROCEDURE": "procedures",
    "FUNCTION": "stored functions (functions are planned on PostgreSQL only)",
    "EVENT": "events",
}


def _partitioned(tokens: list[Token]) -> bool:
    """Whether a MySQL CREATE TABLE says PARTITION BY after its columns."""
    depth = 0
    for at, token in enumerate(tokens):
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif (depth == 0 and " ".join(token.text.upper().split()) == "PARTITION BY") or (
            depth == 0
            and token.text.upper() == "PARTITION"
            and at + 1 < len(tokens)
            and tokens[at + 1].text.upper() == "BY"
        ):
            return True
    return False


def _mysql_routine(tokens: list[Token]) -> str | None:
    """What `CREATE [OR REPLACE] [DEFINER = u@h] TRIGGER|PROCEDURE|FUNCTION|EVENT` makes."""
    words = [t.text.upper() for t in tokens[:12]]
    if not words or words[0] != "CREATE":
        return None
    at = 3 if words[1:3] == ["OR", "REPLACE"] else 1
    if at < len(words) and words[at] == "DEFINER":
        at += 3
        if at < len(tokens) and tokens[at].token_type is TokenType.PARAMETER:
            at += 2
    if at < len(words) and words[at] == "AGGREGATE":
        at += 1
    return _MYSQL_ROUTINES.get(words[at]) if at < len(words) else None


def _session(dialect: Dialect, words: Words, text: str, tokens: list[Token]) -> bool:
    """Session settings and transaction control: read (and checked), changing nothing."""
    if words.starts("BEGIN") or words.starts("COMMIT") or words.starts("START", "TRANSACTION"):
        return len(tokens) <= 3
    if words.starts("END") and len(tokens) == 1:
        return True
    if dialect.family == "mysql":
        if words.starts("SET"):
            mysql_setting(span(text, tokens))
            return True
        # The tokenizer reads `LOCK TABLES` as one command token.
        head = " ".join(tokens[0].text.upper().split()) if tokens else ""
        if head in {"LOCK TABLES", "UNLOCK TABLES", "LOCK", "UNLOCK"}:
            return True
        return words.starts("ALTER", "TABLE") and [t.text.upper() for t in tokens[-2:]] in (
            ["DISABLE", "KEYS"],
            ["ENABLE", "KEYS"],
        )
    if words.take("SET"):
        if words.take("SESSION", "AUTHORIZATION") or words.take("ROLE"):
            raise DumpError("SET ROLE / SESSION AUTHORIZATION: name owners with OWNER TO")
        words.take("SESSION") or words.take("LOCAL")
        name = ".".join(words.dotted())
        if not (words.take("TO") or words.peek_type() is TokenType.EQ):
            raise DumpError(f"SET {name}: expected = or TO")
        if words.peek_type() is TokenType.EQ:
            words.at += 1
        values = [t.text for t in words.rest() if t.token_type is not TokenType.COMMA]
        pg_setting(name, values)
        return True
    if words.starts("SELECT") and len(tokens) > 4:
        called = [t.text.lower() for t in tokens[1:4]]
        if called[:3] == ["pg_catalog", ".", "set_config"] or called[0] == "set_config":
            strings = [t.text for t in tokens if t.token_type is TokenType.STRING]
            if len(strings) == 2:
                pg_setting(strings[0], [strings[1]])
                return True
    return False


_DROPPED = {
    "TABLE": "TABLE",
    "VIEW": "VIEW",
    "SEQUENCE": "SEQUENCE",
}


def _drop(dialect: Dialect, words: Words, parts: Parts) -> None:
    words.expect("DROP")
    kind = "MATERIALIZED VIEW" if words.take("MATERIALIZED", "VIEW") else words.next().text.upper()
    if kind not in _DROPPED and kind != "MATERIALIZED VIEW":
        at = words.at
        if (
            any(
                [t.text.upper() for t in words.tokens[i : i + 2]] == ["IF", "EXISTS"]
                for i in range(at, min(at + 3, len(words.tokens)))
            )
            and parts.declares_nothing()
        ):
            # `pg_dump --clean --if-exists` drops every object before it makes any: on the
            # empty database the file is read as, each drops nothing.
            words.rest()
            return
        raise RefusedError(
            f"{kind} dropped after the file declared something: a desired schema states what "
            "exists; only a dump's drops IF EXISTS before anything is made, or of a table, "
            "view or sequence before it is made, are read"
        )
    if not words.take("IF", "EXISTS"):
        raise RefusedError(
            f"{kind} dropped without IF EXISTS: a desired schema states what exists (leave the "
            "object out to drop it)"
        )
    while True:
        schema, name = relation(dialect, words.dotted())
        parts.forget(kind, schema, name)
        if words.peek_type() is not TokenType.COMMA:
            break
        words.at += 1
    words.take("CASCADE") or words.take("RESTRICT")
    if not words.done():
        raise UnreadableError("unsupported DROP clause")


def _comment_value(words: Words) -> str | None:
    words.expect("IS")
    token = words.next()
    if token.token_type is TokenType.NULL or token.text.upper() == "NULL":
        value = None
    elif token.token_type is TokenType.STRING:
        value = token.text
    else:
        raise UnreadableError("COMMENT ... IS takes a string or NULL")
    if not words.done():
        raise UnreadableError("unsupported COMMENT clause")
    return value


def _extension(dialect: Dialect, words: Words, parts: Parts) -> None:
    if words.take("COMMENT", "ON", "EXTENSION"):
        name = words.name()
        parts.extension_comments.append((name, _comment_value(words)))
        return
    words.expect("CREATE", "EXTENSION")
    words.take("IF", "NOT", "EXISTS")
    name = words.name()
    schema = "public"
    words.take("WITH")
    while not words.done():
        if words.take("SCHEMA"):
            schema = words.name()
        elif words.take("VERSION"):
            words.next()  # the version is not compared (ALTER EXTENSION UPDATE is not planned)
        elif words.take("CASCADE"):
            raise RefusedError(
                f"extension {name}: CASCADE makes extensions the desired schema does not name; "
                "name each"
            )
        else:
            raise UnreadableError(f"extension {name}: unsupported clause")
    parts.extensions.append(Extension(name=name, schema=schema))


_COMMENTED = ("VIEW", "SEQUENCE", "TYPE", "DOMAIN", "INDEX", "FUNCTION", "CONSTRAINT", "TRIGGER")


def _object_comment(dialect: Dialect, words: Words, text: str, parts: Parts) -> bool:
    """`COMMENT ON VIEW|MATERIALIZED VIEW|SEQUENCE|TYPE|DOMAIN|INDEX name`, `... FUNCTION
    name(types)`, `... CONSTRAINT|TRIGGER name ON table`; False for another kind (tables and
    columns are read with the rest, the others refused there)."""
    start = words.at
    words.expect("COMMENT", "ON")
    kind = "MATERIALIZED VIEW" if words.take("MATERIALIZED", "VIEW") else None
    if kind is None:
        token = words.next()
        kind = token.text.upper()
        if kind in {"TABLE", "COLUMN", "SCHEMA", "EXTENSION"}:
            words.at = start
            return False
        if kind not in _COMMENTED:
            raise RefusedError(
                f"COMMENT ON {kind}: comments are modelled on tables, columns, schemas, "
                "extensions, views, sequences, types, domains, indexes, functions, constraints "
                "and triggers"
            )
    table: str | None = None
    arguments = None
    if kind in {"CONSTRAINT", "TRIGGER"}:
        name = words.name()
        words.expect("ON")
        schema, table = relation(dialect, words.dotted())
    else:
        schema, name = relation(dialect, words.dotted())
        if kind == "FUNCTION":
            arguments = read_arguments(text, words.parenthesized())
    parts.object_comments.append((kind, schema, name, table, arguments, _comment_value(words)))
    return True


def _schema(dialect: Dialect, words: Words, parts: Parts) -> None:
    if words.take("COMMENT", "ON", "SCHEMA"):
        name = words.name()
        parts.schema_comments.append((name, _comment_value(words)))
        return
    words.expect("ALTER", "SCHEMA")
    name = words.name()
    if not words.take("OWNER", "TO"):
        raise RefusedError(f"ALTER SCHEMA {name}: only OWNER TO is read")
    token = words.next()
    quoted = token.token_type in {TokenType.IDENTIFIER, TokenType.STRING}
    if not quoted and token.text.upper() in {"CURRENT_USER", "SESSION_USER", "CURRENT_ROLE"}:
        raise UnreadableError("name the owning role")
    if not words.done():
        raise UnreadableError("unsupported OWNER TO clause")
    parts.schema_owners.append((name, normalize_grantee(dialect, token.text, None, quoted=quoted)))


def _alter_table(dialect: Dialect, words: Words, text: str, parts: Parts) -> bool:
    """`ALTER TABLE [IF EXISTS] [ONLY] t` followed by a column's default or identity (how
    pg_dump states them), or a clause the engine does not model (refused by name). Anything
    else is left to the rest of the reader (ADD CONSTRAINT, OWNER TO)."""
    start = words.at
    words.expect("ALTER", "TABLE")
    words.take("IF", "EXISTS")
    words.take("ONLY")
    schema, table = relation(dialect, words.dotted())
    if (
        words.tokens[2].text.upper() == "IF"
        and parts.declares_nothing()
        and any(t.text.upper() == "DROP" for t in words.tokens[words.at : words.at + 4])
    ):
        # pg_dump --clean --if-exists: `ALTER TABLE IF EXISTS ... DROP CONSTRAINT IF EXISTS`
        # and `... ALTER COLUMN ... DROP DEFAULT` before anything is made drop nothing.
        words.rest()
        return True
    for lead, what in _UNMODELLED_CLAUSES:
        if _starts(words, lead):
            raise RefusedError(f"table {table}: {what} is not modelled by the engine")
    if [t.text.upper() for t in words.tokens[-2:]] == ["NOT", "VALID"]:
        raise RefusedError(f"table {table}: NOT VALID constraints are not modelled (add it valid)")
    if dialect.family != "postgresql" or not words.starts("ALTER"):
        words.at = start
        return False
    words.expect("ALTER")
    words.take("COLUMN")
    column = words.name()
    for lead, what in _COLUMN_CLAUSES:
        if _starts(words, lead):
            raise RefusedError(f"column {table}.{column}: {what} is not modelled by the engine")
    if words.take("SET", "DEFAULT"):
        default = words.rest()
        if not default:
            raise UnreadableError("SET DEFAULT takes an expression")
        parts.column_defaults.append((schema, table, column, span(text, default)))
        return True
    if words.take("ADD", "GENERATED"):
        if words.take("ALWAYS"):
            kind = "always"
        else:
            words.expect("BY", "DEFAULT")
            kind = "by default"
        words.expect("AS", "IDENTITY")
        options: dict[str, int | bool] = {}
        sequence: str | None = None
        if words.peek_type() is TokenType.L_PAREN:
            options, sequence = identity_clause(dialect, Words(dialect, words.parenthesized()))
        if not words.done():
            raise UnreadableError("unsupported clause after AS IDENTITY")
        parts.identities.append((schema, table, column, kind, options, sequence))
        return True
    raise RefusedError(
        f"column {table}.{column}: only ALTER COLUMN ... SET DEFAULT and ADD GENERATED ... AS "
        "IDENTITY are read; state the column whole in CREATE TABLE"
    )


# What ends a domain's type or default: its next clause.
_DOMAIN_CLAUSES = frozenset({"COLLATE", "DEFAULT", "CONSTRAINT", "NOT", "NULL", "CHECK"})


def _until_clause(words: Words) -> list[Token]:
    taken: list[Token] = []
    depth = 0
    while not words.done():
        token = words.tokens[words.at]
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif (
            depth == 0
            and taken
            and token.token_type not in Words._NOT_WORDS
            and token.text.upper() in _DOMAIN_CLAUSES
        ):
            break
        taken.append(token)
        words.at += 1
    return taken


def _domain(dialect: Dialect, words: Words, text: str) -> Domain:
    """`CREATE DOMAIN name [AS] type [COLLATE c] [DEFAULT e] [[CONSTRAINT n] NOT NULL | NULL |
    CHECK (e)]...`."""
    words.expect("CREATE", "DOMAIN")
    schema, name = relation(dialect, words.dotted())
    words.take("AS")
    type_tokens = _until_clause(words)
    if not type_tokens:
        raise UnreadableError(f"domain {name} has no type")
    type_text = normalize_type(dialect, span(text, type_tokens))
    nullable, default, collation = True, None, None
    checks: list[Check] = []
    while not words.done():
        constraint: str | None = None
        if words.take("CONSTRAINT"):
            constraint = words.name()
        if words.take("NOT", "NULL"):
            nullable = False
        elif words.take("NULL"):
            nullable = True
        elif words.take("CHECK"):
            expression = words.parenthesized()
            if words.starts("NOT", "VALID"):
                raise RefusedError(f"domain {name}: NOT VALID constraints are not modelled")
            checks.append(
                Check(expr=normalize_expression(dialect, span(text, expression)), name=constraint)
            )
        elif constraint is None and words.take("DEFAULT"):
            default = normalize_default(dialect, span(text, _until_clause(words)), type_text)
        elif constraint is None and words.take("COLLATE"):
            names = words.dotted()
            if len(names) == 2 and names[0] != "pg_catalog":
                raise UnreadableError(f"domain {name}: a collation of another schema")
            collation = names[-1]
        else:
            raise UnreadableError(f"domain {name}: unsupported clause")
    return Domain(
        schema=schema,
        name=name,
        type=type_text,
        nullable=nullable,
        default=default,
        collation=collation,
        checks=tuple(checks),
    )


def identity_clause(dialect: Dialect, words: Words) -> tuple[dict[str, int | bool], str | None]:
    """The options of `GENERATED ... AS IDENTITY (...)`: what `normalize.identity_options`
    takes, and the sequence's name (`SEQUENCE NAME`, as pg_dump writes it) or None."""
    options: dict[str, int | bool] = {}
    sequence: str | None = None
    while not words.done():
        if words.take("SEQUENCE", "NAME"):
            sequence = words.dotted()[-1]
        elif words.take("START"):
            words.take("WITH")
            options["start"] = words.number()
        elif words.take("INCREMENT"):
            words.take("BY")
            options["increment"] = words.number()
        elif words.take("NO", "MINVALUE") or words.take("NO", "MAXVALUE"):
            continue
        elif words.take("NO", "CYCLE"):
            options["cycle"] = False
        elif words.take("MINVALUE"):
            options["min_value"] = words.number()
        elif words.take("MAXVALUE"):
            options["max_value"] = words.number()
        elif words.take("CACHE"):
            options["cache"] = words.number()
        elif words.take("CYCLE"):
            options["cycle"] = True
        elif words.take("AS"):
            raise UnreadableError("an identity's sequence has its column's type (leave out AS)")
        else:
            raise UnreadableError("unsupported identity option")
    return options, sequence


_OBJECT_KINDS = {
    "SCHEMA": "privileges on schemas",
    "SEQUENCE": "privileges on sequences",
    "FUNCTION": "privileges on functions",
    "PROCEDURE": "privileges on procedures",
    "ROUTINE": "privileges on routines",
    "TYPE": "privileges on types",
    "DOMAIN": "privileges on domains",
    "DATABASE": "privileges on databases",
    "LANGUAGE": "privileges on languages",
    "TABLESPACE": "privileges on tablespaces",
    "FOREIGN": "privileges on foreign servers and data wrappers",
    "LARGE": "privileges on large objects",
}


def _object_privileges(words: Words) -> None:
    """GRANT and REVOKE on what is not a table: refused by name."""
    for index, token in enumerate(words.tokens):
        if token.token_type not in Words._NOT_WORDS and token.text.upper() == "ON":
            if index + 1 < len(words.tokens):
                kind = words.tokens[index + 1].text.upper()
                if kind in _OBJECT_KINDS:
                    raise RefusedError(
                        f"{_OBJECT_KINDS[kind]} are not modelled by the engine (only privileges "
                        "on tables are planned)"
                    )
                if kind == "ALL":
                    raise RefusedError("grant on each table, not on ALL TABLES IN SCHEMA")
            return
