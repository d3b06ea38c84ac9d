"""PostgreSQL triggers: `CREATE TRIGGER` read alike from a desired schema and from the catalog.

The catalog side is `pg_get_triggerdef`, read with `search_path` at `pg_catalog` (so that the
table and a user function print schema-qualified, and pg_catalog's functions bare); both go
through `read_trigger`. Canonical form: timing (`BEFORE`, `AFTER`, `INSTEAD OF`), events in
one order (INSERT, DELETE, UPDATE [OF columns, sorted], TRUNCATE), level (`ROW` or
`STATEMENT`, the default), the WHEN condition normalized as any expression, `REFERENCING` as
written, the function qualified as the catalog prints it and its arguments as strings.

Refused by name: constraint triggers (`CREATE CONSTRAINT TRIGGER`, with `FROM` and
`DEFERRABLE`), which the engine does not model. A trigger whose function the desired schema
names without a schema takes `public`'s function of that name when the desired schema makes
one (as `search_path` would find it), otherwise pg_catalog's (`tsvector_update_trigger`).
"""

from __future__ import annotations

import dataclasses
import re

from sqlglot import Token, TokenType

from ptah_operator.engine.schema.model import Dialect, Trigger
from ptah_operator.engine.schema.normalize import canonical_expression, parse_expression
from ptah_operator.engine.schema.words import UnreadableError, Words, span

_PG = Dialect.POSTGRESQL
_BARE = re.compile(r"[a-z_][a-z0-9_$]*")
_EVENT_ORDER = {"INSERT": 0, "DELETE": 1, "UPDATE": 2, "TRUNCATE": 3}


class TriggerError(ValueError):
    """A trigger the engine does not read (the message names it)."""


def quote(name: str) -> str:
    """A name as PostgreSQL prints it: bare when it can be, else double-quoted."""
    return name if _BARE.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def read_trigger(text: str, tokens: list[Token]) -> tuple[str, str, Trigger]:
    """(schema, table, trigger) of a `CREATE [OR REPLACE] TRIGGER` statement's tokens."""
    words = Words(_PG, tokens)
    words.expect("CREATE")
    words.take("OR", "REPLACE")
    if words.starts("CONSTRAINT"):
        raise TriggerError("constraint triggers (CREATE CONSTRAINT TRIGGER) are not modelled")
    try:
        words.expect("TRIGGER")
        name = words.name()
        return _rest(text, words, name)
    except UnreadableError as error:
        raise TriggerError(f"trigger {name if 'name' in locals() else ''}: {error}") from None


def _rest(text: str, words: Words, name: str) -> tuple[str, str, Trigger]:
    if words.take("INSTEAD", "OF"):
        timing = "INSTEAD OF"
    elif words.take("BEFORE"):
        timing = "BEFORE"
    elif words.take("AFTER"):
        timing = "AFTER"
    else:
        raise UnreadableError("expected BEFORE, AFTER or INSTEAD OF")
    events: list[str] = []
    while True:
        token = words.next()
        event = token.text.upper()
        if event not in _EVENT_ORDER:
            raise UnreadableError("an event is INSERT, UPDATE, DELETE or TRUNCATE")
        if event == "UPDATE" and words.take("OF"):
            columns = [words.name()]
            while words.peek_type() is TokenType.COMMA:
                words.at += 1
                columns.append(words.name())
            event = "UPDATE OF " + ", ".join(quote(c) for c in sorted(columns))
        events.append(event)
        if not words.take("OR"):
            break
    events.sort(key=lambda e: _EVENT_ORDER[e.split(" ", 1)[0]])
    words.expect("ON")
    table = words.dotted()
    if len(table) > 2:
        raise UnreadableError("expected [schema.]table")
    schema, table_name = (table[0], table[1]) if len(table) == 2 else ("public", table[0])
    if words.starts("FROM") or words.starts("DEFERRABLE") or words.starts("NOT", "DEFERRABLE"):
        raise UnreadableError("FROM and DEFERRABLE belong to constraint triggers")
    if words.starts("INITIALLY"):
        raise UnreadableError("INITIALLY belongs to constraint triggers")
    referencing: list[str] = []
    if words.take("REFERENCING"):
        while words.starts("OLD") or words.starts("NEW"):
            which = words.next().text.upper()
            words.expect("TABLE")
            words.take("AS")
            referencing.append(f"{which} TABLE AS {quote(words.name())}")
    level = "STATEMENT"
    if words.take("FOR"):
        words.take("EACH")
        if words.take("ROW"):
            level = "ROW"
        elif words.take("STATEMENT"):
            level = "STATEMENT"
        else:
            raise UnreadableError("FOR EACH takes ROW or STATEMENT")
    when: str | None = None
    if words.take("WHEN"):
        condition = words.parenthesized()
        when = canonical_expression(
            _PG, parse_expression(_PG, span(text, condition), "trigger condition")
        )
    words.expect("EXECUTE")
    if not (words.take("FUNCTION") or words.take("PROCEDURE")):
        raise UnreadableError("EXECUTE takes FUNCTION")
    function = words.dotted()
    if len(function) > 2:
        raise UnreadableError("expected [schema.]function")
    if len(function) == 2 and function[0] == "pg_catalog":
        function = function[1:]
    arguments = tuple(_argument(t) for t in words.parenthesized() if _is_argument(t))
    if not words.done():
        raise UnreadableError("unsupported clause after the function")
    return (
        schema,
        table_name,
        Trigger(
            name=name,
            timing=timing,
            events=tuple(events),
            level=level,
            function=".".join(quote(part) for part in function),
            arguments=arguments,
            when=when,
            referencing=" ".join(referencing) or None,
        ),
    )


def _is_argument(token: Token) -> bool:
    return token.token_type is not TokenType.COMMA


def _argument(token: Token) -> str:
    """A trigger argument: PostgreSQL keeps each as a string, whether written as a string, a
    number or a bare word."""
    if token.token_type in {TokenType.L_PAREN, TokenType.R_PAREN}:
        raise UnreadableError("a trigger argument is a literal")
    return token.text


_QUALIFIED = re.compile(r'(?:"(?:[^"]|"")+"|[^".]+)\.(?:"(?:[^"]|"")+"|[^".]+)')


def resolve_function(trigger: Trigger, known: set[str]) -> Trigger:
    """The desired side: a function named without a schema is `public`'s when the desired
    schema makes `public.name()` (`known` holds `schema.name` of functions without
    arguments, names quoted as `quote` does), else pg_catalog's, which the catalog prints
    bare."""
    if _QUALIFIED.fullmatch(trigger.function):
        return trigger
    candidate = f"public.{trigger.function}"
    if candidate in known:
        return dataclasses.replace(trigger, function=candidate)
    return trigger


def render_trigger(schema: str, table: str, trigger: Trigger) -> str:
    """`CREATE TRIGGER` of `trigger` on `schema.table`."""
    parts = [
        f"CREATE TRIGGER {_q(trigger.name)} {trigger.timing}",
        " OR ".join(trigger.events),
        f"ON {_q(schema)}.{_q(table)}",
    ]
    if trigger.referencing:
        parts.append(f"REFERENCING {trigger.referencing}")
    parts.append(f"FOR EACH {trigger.level}")
    if trigger.when is not None:
        parts.append(f"WHEN ({trigger.when})")
    arguments = ", ".join("'" + a.replace("'", "''") + "'" for a in trigger.arguments)
    parts.append(f"EXECUTE FUNCTION {trigger.function}({arguments})")
    return " ".join(parts)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
