"""PostgreSQL functions: reading `CREATE FUNCTION` headers and the catalog's argument lists.

Both sides go through the same reader: a person's `CREATE FUNCTION` and what
`pg_get_function_arguments` / `pg_get_function_result` print (read with `search_path` set to
`pg_catalog`, so that a user-defined type is always schema-qualified). Arguments, result and
options are normalized; the body is never parsed. It is kept verbatim on the desired side (for
CREATE FUNCTION) and compared by digest: `pg_proc.prosrc` holds exactly the text between the
quotes, so an unchanged body has the same digest on both sides.

Modelled: arguments (mode, name, type, default), result (a type, SETOF, TABLE(...)),
LANGUAGE, volatility, STRICT, SECURITY DEFINER, LEAKPROOF, PARALLEL, COST, ROWS and SET
clauses. Refused: C functions (`AS 'file', 'symbol'`), SQL-standard bodies (`BEGIN ATOMIC`,
`RETURN`), WINDOW, SUPPORT, TRANSFORM and `SET ... FROM CURRENT`.
"""

from __future__ import annotations

import hashlib
import re

import sqlglot
from sqlglot import Token, TokenType

from ptah_operator.engine.schema.model import Argument, Dialect, Function
from ptah_operator.engine.schema.normalize import (
    NormalizationError,
    normalize_default,
    normalize_qualified_name,
    normalize_type,
)

_PG = Dialect.POSTGRESQL


class FunctionError(ValueError):
    """A function the engine does not read (the message names it, never its body)."""


def body_digest(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()


def canonical_number(value: float) -> float:
    """COST and ROWS are `real` in the catalog: compare them at its precision."""
    return float(f"{float(value):.7g}")


def number_text(value: float) -> str:
    return f"{value:.7g}"


# Settings whose value is a list of names, which PostgreSQL keeps quoted as identifiers.
_LIST_SETTINGS = frozenset({"search_path", "temp_tablespaces"})
_BARE_NAME = re.compile(r"[a-z_][a-z0-9_$]*")


def _quote_name(name: str) -> str:
    return name if _BARE_NAME.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def setting_clause(entry: str) -> str:
    """`search_path=public, pg_temp` -> `search_path = public, pg_temp`; any other setting's
    value as a string literal."""
    name, _, value = entry.partition("=")
    if name in _LIST_SETTINGS:
        return f"{name} = {value}"
    return f"{name} = '" + value.replace("'", "''") + "'"


_MODES = frozenset({"IN", "OUT", "INOUT", "VARIADIC"})
# Two words that begin one type, not a name and a type.
_TYPE_PAIRS = frozenset(
    {
        ("double", "precision"),
        ("character", "varying"),
        ("char", "varying"),
        ("bit", "varying"),
        ("national", "character"),
        ("timestamp", "with"),
        ("timestamp", "without"),
        ("time", "with"),
        ("time", "without"),
    }
)
_OPENING = {TokenType.L_PAREN: TokenType.R_PAREN, TokenType.L_BRACKET: TokenType.R_BRACKET}
_NOT_NAMES = frozenset({TokenType.DOT, TokenType.L_PAREN, TokenType.L_BRACKET})


def tokenize(text: str) -> list[Token]:
    try:
        return list(sqlglot.Dialect.get_or_raise(_PG.sqlglot).tokenize(text))
    except sqlglot.errors.TokenError as error:
        raise FunctionError("not readable as PostgreSQL") from error


_TEXTS = frozenset({TokenType.STRING, TokenType.IDENTIFIER, TokenType.HEREDOC_STRING})


def _separate(text: str, tokens: list[Token]) -> list[Token]:
    """The tokenizer reads some word pairs as one token (`SQL SECURITY`, as in `LANGUAGE sql
    SECURITY DEFINER`): each word its own token again, placed where it is in `text`."""
    separated: list[Token] = []
    for token in tokens:
        if token.token_type in _TEXTS or " " not in token.text:
            separated.append(token)
            continue
        source = text[token.start : token.end + 1]
        for word in re.finditer(r"\S+", source):
            separated.append(
                Token(
                    TokenType.VAR,
                    word.group(),
                    token.line,
                    token.col,
                    token.start + word.start(),
                    token.start + word.end() - 1,
                )
            )
    return separated


def _span(text: str, tokens: list[Token]) -> str:
    return text[tokens[0].start : tokens[-1].end + 1]


def _split_top(tokens: list[Token]) -> list[list[Token]]:
    """Split at commas outside parentheses and brackets."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        if token.token_type in _OPENING:
            depth += 1
        elif token.token_type in {TokenType.R_PAREN, TokenType.R_BRACKET}:
            depth -= 1
        if token.token_type is TokenType.COMMA and depth == 0:
            parts.append([])
        else:
            parts[-1].append(token)
    return [p for p in parts if p]


def _name(token: Token) -> str:
    if token.token_type is TokenType.IDENTIFIER:
        return token.text
    if not token.text.replace("_", "").replace("$", "").isalnum():
        raise FunctionError("expected a name")
    return token.text.lower()


def _named_type(text: str, tokens: list[Token]) -> tuple[str, str]:
    """`[name] type` -> (name or "", normalized type)."""
    if len(tokens) >= 2 and (
        tokens[1].token_type not in _NOT_NAMES
        and (tokens[0].text.lower(), tokens[1].text.lower()) not in _TYPE_PAIRS
    ):
        return _name(tokens[0]), normalize_type(_PG, _span(text, tokens[1:]))
    if not tokens:
        raise FunctionError("an argument has no type")
    return "", normalize_type(_PG, _span(text, tokens))


def read_arguments(text: str, tokens: list[Token]) -> tuple[Argument, ...]:
    """An argument list (without its parentheses), as written or as the catalog prints it."""
    arguments: list[Argument] = []
    for part in _split_top(tokens):
        mode = "IN"
        if len(part) > 1 and part[0].text.upper() in _MODES:
            mode = part[0].text.upper()
            part = part[1:]
        default: str | None = None
        for position, token in enumerate(part):
            if token.text.upper() == "DEFAULT" or token.token_type is TokenType.EQ:
                rest = part[position + 1 :]
                if not rest:
                    raise FunctionError("an argument default is empty")
                default = _span(text, rest)
                part = part[:position]
                break
        name, type_text = _named_type(text, part)
        arguments.append(
            Argument(
                mode=mode,
                name=name,
                type=type_text,
                default=normalize_default(_PG, default, type_text) if default else None,
            )
        )
    return tuple(arguments)


def read_result(text: str, tokens: list[Token]) -> tuple[str, bool, tuple[tuple[str, str], ...]]:
    """(type, returns a set, TABLE columns) of `RETURNS ...` or `pg_get_function_result`."""
    if not tokens:
        raise FunctionError("RETURNS names no type")
    head = tokens[0].text.upper()
    if head == "TABLE" and len(tokens) > 2 and tokens[1].token_type is TokenType.L_PAREN:
        if tokens[-1].token_type is not TokenType.R_PAREN:
            raise FunctionError("RETURNS TABLE is not closed")
        columns = tuple(_named_type(text, part) for part in _split_top(tokens[2:-1]))
        if any(not name for name, _ in columns):
            raise FunctionError("each RETURNS TABLE column has a name")
        return "record", True, columns
    if head == "SETOF":
        return normalize_type(_PG, _span(text, tokens[1:])), True, ()
    return normalize_type(_PG, _span(text, tokens)), False, ()


def catalog_function(
    *,
    schema: str,
    name: str,
    arguments: str,
    result: str,
    language: str,
    body: str,
    volatility: str,
    strict: bool,
    security_definer: bool,
    leakproof: bool,
    parallel: str,
    cost: float,
    rows: float,
    config: list[str] | None,
    owner: str,
) -> Function:
    """A function as `pg_proc` describes it (codes as the catalog stores them)."""
    returns, returns_set, columns = read_result(result, tokenize(result))
    return Function(
        schema=schema,
        name=name,
        arguments=read_arguments(arguments, tokenize(arguments)),
        returns=returns,
        returns_set=returns_set,
        table_columns=columns,
        language=language,
        body_digest=body_digest(body),
        volatility={"i": "immutable", "s": "stable", "v": "volatile"}[volatility],
        strict=strict,
        security_definer=security_definer,
        leakproof=leakproof,
        parallel={"s": "safe", "r": "restricted", "u": "unsafe"}[parallel],
        cost=canonical_number(cost),
        rows=canonical_number(rows),
        config=tuple(config or ()),
        owner=owner,
    )


# Words that end RETURNS and start the next clause of CREATE FUNCTION.
_CLAUSES = frozenset(
    {
        "LANGUAGE",
        "AS",
        "IMMUTABLE",
        "STABLE",
        "VOLATILE",
        "STRICT",
        "CALLED",
        "RETURNS",
        "SECURITY",
        "EXTERNAL",
        "LEAKPROOF",
        "NOT",
        "PARALLEL",
        "COST",
        "ROWS",
        "SUPPORT",
        "SET",
        "WINDOW",
        "TRANSFORM",
        "BEGIN",
        "RETURN",
    }
)


class _Reader:
    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.at = 0

    def done(self) -> bool:
        return self.at >= len(self.tokens)

    def word(self, offset: int = 0) -> str | None:
        index = self.at + offset
        if index >= len(self.tokens):
            return None
        token = self.tokens[index]
        if token.token_type in {TokenType.STRING, TokenType.IDENTIFIER, TokenType.HEREDOC_STRING}:
            return None
        return token.text.upper()

    def take(self, *words: str) -> bool:
        if all(self.word(i) == w for i, w in enumerate(words)):
            self.at += len(words)
            return True
        return False

    def next(self) -> Token:
        if self.done():
            raise FunctionError("the statement ends too early")
        token = self.tokens[self.at]
        self.at += 1
        return token

    def until_clause(self) -> list[Token]:
        """Tokens up to the next clause word outside parentheses."""
        taken: list[Token] = []
        depth = 0
        while not self.done():
            token = self.tokens[self.at]
            if depth == 0 and self.word() in _CLAUSES:
                break
            if token.token_type in _OPENING:
                depth += 1
            elif token.token_type in {TokenType.R_PAREN, TokenType.R_BRACKET}:
                depth -= 1
            taken.append(token)
            self.at += 1
        return taken

    def number(self) -> float:
        sign = -1.0 if self.take("-") else 1.0
        token = self.next()
        if token.token_type is not TokenType.NUMBER:
            raise FunctionError("expected a number")
        return sign * float(token.text)


_SETTING_NAME = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?")


def _setting(reader: _Reader) -> str:
    name = _name(reader.next()).lower()
    if not _SETTING_NAME.fullmatch(name):
        # Spelt into CREATE FUNCTION as it is (`SET name = ...`).
        raise FunctionError("a SET clause names a setting: letters, digits, _ and one dot")
    if reader.take("FROM", "CURRENT"):
        raise FunctionError("SET ... FROM CURRENT is not supported; name the value")
    if not (reader.take("=") or reader.take("TO")):
        raise FunctionError("SET takes a value")
    values: list[str] = []
    while True:
        token = reader.next()
        if (
            token.token_type is TokenType.STRING
            or token.token_type is TokenType.IDENTIFIER
            or token.token_type is TokenType.NUMBER
        ):
            value = token.text
        else:
            value = _name(token)
        values.append(_quote_name(value) if name in _LIST_SETTINGS else value)
        if not reader.take(","):
            break
    return f"{name}={', '.join(values)}"


def read_create_function(text: str, tokens: list[Token]) -> Function:
    """`CREATE [OR REPLACE] FUNCTION ...`, as a function of the desired schema. Types are
    normalized but not yet qualified (see `desired`)."""
    reader = _Reader(text, _separate(text, tokens))
    reader.take("CREATE")
    reader.take("OR", "REPLACE")
    if not reader.take("FUNCTION"):
        raise FunctionError("expected CREATE FUNCTION")
    names = [_name(reader.next())]
    while reader.take("."):
        names.append(_name(reader.next()))
    if len(names) > 2:
        raise FunctionError("expected [schema.]name")
    schema, name = (names[0], names[1]) if len(names) == 2 else ("public", names[0])
    where = f"function {schema}.{name}"
    if reader.next().token_type is not TokenType.L_PAREN:
        raise FunctionError(f"{where}: expected its arguments")
    inside: list[Token] = []
    depth = 1
    while True:
        token = reader.next()
        if token.token_type in _OPENING:
            depth += 1
        elif token.token_type in {TokenType.R_PAREN, TokenType.R_BRACKET}:
            depth -= 1
            if depth == 0:
                break
        inside.append(token)
    try:
        arguments = read_arguments(text, inside)
    except FunctionError as error:
        raise FunctionError(f"{where}: {error}") from error
    result: tuple[str, bool, tuple[tuple[str, str], ...]] | None = None
    language: str | None = None
    body: str | None = None
    volatility, strict, definer, leakproof, parallel = "volatile", False, False, False, "unsafe"
    cost: float | None = None
    rows: float | None = None
    config: list[str] = []
    while not reader.done():
        if reader.take("RETURNS", "NULL", "ON", "NULL", "INPUT"):
            strict = True
        elif reader.take("RETURNS"):
            result = read_result(text, reader.until_clause())
        elif reader.take("LANGUAGE"):
            language = reader.next().text.lower()
            try:
                # Spelt into CREATE FUNCTION as it is: one name and nothing more.
                normalize_qualified_name(language, "a function's language")
            except NormalizationError as error:
                raise FunctionError(str(error)) from None
        elif reader.word() in {"IMMUTABLE", "STABLE", "VOLATILE"}:
            volatility = reader.next().text.lower()
        elif reader.take("STRICT"):
            strict = True
        elif reader.take("CALLED", "ON", "NULL", "INPUT"):
            strict = False
        elif reader.take("SECURITY", "DEFINER") or reader.take("EXTERNAL", "SECURITY", "DEFINER"):
            definer = True
        elif reader.take("SECURITY", "INVOKER") or reader.take("EXTERNAL", "SECURITY", "INVOKER"):
            definer = False
        elif reader.take("LEAKPROOF"):
            leakproof = True
        elif reader.take("NOT", "LEAKPROOF"):
            leakproof = False
        elif reader.take("PARALLEL"):
            parallel = reader.next().text.lower()
            if parallel not in {"safe", "restricted", "unsafe"}:
                raise FunctionError(f"{where}: PARALLEL is SAFE, RESTRICTED or UNSAFE")
        elif reader.take("COST"):
            cost = reader.number()
        elif reader.take("ROWS"):
            rows = reader.number()
        elif reader.take("SET"):
            config.append(_setting(reader))
        elif reader.take("AS"):
            token = reader.next()
            if token.token_type not in {TokenType.STRING, TokenType.HEREDOC_STRING}:
                raise FunctionError(f"{where}: AS takes the body as a string")
            if reader.take(","):
                raise FunctionError(f"{where}: C functions (AS 'file', 'symbol') are not supported")
            body = token.text
        elif reader.word() in {"BEGIN", "RETURN"}:
            raise FunctionError(
                f"{where}: SQL-standard bodies are not supported; write AS $$ ... $$"
            )
        else:
            raise FunctionError(f"{where}: unsupported clause")
    if body is None:
        raise FunctionError(f"{where} has no body (AS ...)")
    if language is None:
        raise FunctionError(f"{where} names no LANGUAGE")
    if language in {"c", "internal"}:
        raise FunctionError(f"{where}: {language} functions are not supported")
    if result is None:
        outputs = [a for a in arguments if a.mode in {"OUT", "INOUT"}]
        if not outputs:
            raise FunctionError(f"{where} has no RETURNS")
        result = (outputs[0].type if len(outputs) == 1 else "record", False, ())
    returns, returns_set, columns = result
    return Function(
        schema=schema,
        name=name,
        arguments=arguments,
        returns=returns,
        returns_set=returns_set,
        table_columns=columns,
        language=language,
        body_digest=body_digest(body),
        volatility=volatility,
        strict=strict,
        security_definer=definer,
        leakproof=leakproof,
        parallel=parallel,
        cost=canonical_number(100.0 if cost is None else cost),
        rows=canonical_number((1000.0 if returns_set else 0.0) if rows is None else rows),
        config=tuple(config),
        body=body,
    )
