"""A statement's tokens read one at a time: for the statements the DDL reader takes apart
itself rather than through sqlglot's tree (sequences, grants, owners, dump clauses)."""

from __future__ import annotations

from sqlglot import Token, TokenType

from ptah_operator.engine.schema.model import Dialect


class UnreadableError(ValueError):
    """A statement read token by token that says something the engine does not take."""


class Words:
    """A statement's tokens read one at a time, for the statements sqlglot's tree misreads."""

    # Tokens that are values or punctuation, never a keyword.
    _NOT_WORDS = frozenset(
        {
            TokenType.STRING,
            TokenType.IDENTIFIER,
            TokenType.NUMBER,
            TokenType.DOT,
            TokenType.COMMA,
            TokenType.L_PAREN,
            TokenType.R_PAREN,
            TokenType.DASH,
            TokenType.PLUS,
            TokenType.PARAMETER,
        }
    )

    def __init__(self, dialect: Dialect, tokens: list[Token]) -> None:
        self.dialect = dialect
        self.tokens = tokens
        self.at = 0

    def _word(self, offset: int = 0) -> str | None:
        index = self.at + offset
        if index >= len(self.tokens):
            return None
        token = self.tokens[index]
        if token.token_type in self._NOT_WORDS:
            return None
        return token.text.upper()

    def starts(self, *words: str) -> bool:
        at, tokens = self.at, self.tokens
        if at + len(words) > len(tokens):
            return False
        for offset, word in enumerate(words):
            token = tokens[at + offset]
            if token.token_type in self._NOT_WORDS or token.text.upper() != word:
                return False
        return True

    def take(self, *words: str) -> bool:
        """Consume `words` if they come next."""
        if not self.starts(*words):
            return False
        self.at += len(words)
        return True

    def expect(self, *words: str) -> None:
        if not self.take(*words):
            raise UnreadableError(f"expected {' '.join(words)}")

    def done(self) -> bool:
        return self.at >= len(self.tokens)

    def peek_type(self) -> TokenType | None:
        return self.tokens[self.at].token_type if not self.done() else None

    def next(self) -> Token:
        if self.done():
            raise UnreadableError("the statement ends too early")
        token = self.tokens[self.at]
        self.at += 1
        return token

    def name(self) -> str:
        """One identifier, as the catalog stores it."""
        token = self.next()
        if token.token_type is TokenType.IDENTIFIER:
            return token.text
        if token.token_type in self._NOT_WORDS or not token.text.replace("_", "").isalnum():
            raise UnreadableError("expected a name")
        return token.text.lower() if self.dialect.family == "postgresql" else token.text

    def dotted(self) -> list[str]:
        names = [self.name()]
        while self.peek_type() is TokenType.DOT:
            self.at += 1
            names.append(self.name())
        return names

    def number(self) -> int:
        sign = 1
        if self.peek_type() in {TokenType.DASH, TokenType.PLUS}:
            sign = -1 if self.next().token_type is TokenType.DASH else 1
        token = self.next()
        if token.token_type is not TokenType.NUMBER:
            raise UnreadableError("expected a number")
        return sign * int(token.text)

    def parenthesized(self) -> list[Token]:
        """The tokens inside the parentheses that come next (nested ones kept)."""
        if self.peek_type() is not TokenType.L_PAREN:
            raise UnreadableError("expected (")
        self.at += 1
        inside: list[Token] = []
        depth = 1
        while True:
            token = self.next()
            if token.token_type is TokenType.L_PAREN:
                depth += 1
            elif token.token_type is TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    return inside
            inside.append(token)

    def rest(self) -> list[Token]:
        """The tokens left, consumed."""
        remaining = self.tokens[self.at :]
        self.at = len(self.tokens)
        return remaining


def relation(dialect: Dialect, names: list[str]) -> tuple[str, str]:
    if len(names) == 1:
        return ("" if dialect.family == "mysql" else "public"), names[0]
    if len(names) == 2:
        return ("" if dialect.family == "mysql" else names[0]), names[1]
    raise UnreadableError("expected [schema.]name")


def span(text: str, tokens: list[Token]) -> str:
    """The source text `tokens` cover (they come from `text`), "" for none."""
    if not tokens:
        return ""
    return text[tokens[0].start : tokens[-1].end + 1]
