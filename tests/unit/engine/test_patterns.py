"""`or_non_ascii` writes the same character set as the plain `[...\\x80-\\U0010ffff]` class it
replaces (issue #16: the plain form took milliseconds each to compile), on every code point;
and the patterns built with it are those sets."""

from __future__ import annotations

import re

import pytest

from ptah_operator.engine.patterns import or_non_ascii

BODIES = ["A-Za-z0-9_$", "A-Za-z_", "A-Za-z0-9_", "'\"\\-/$;()A-Za-z_", "\\x00-\\x7f", "a"]


@pytest.mark.parametrize("body", BODIES)
def test_the_complement_form_is_the_plain_class_on_every_code_point(body: str) -> None:
    plain = re.compile(f"[{body}\\x80-\\U0010ffff]")
    written = re.compile(or_non_ascii(body))
    text = "".join(chr(c) for c in range(0x110000))
    assert [m.start() for m in plain.finditer(text)] == [m.start() for m in written.finditer(text)]


def test_the_patterns_built_with_it_match_identifiers_beyond_ascii() -> None:
    from ptah_operator.engine import splitter

    assert splitter._DOLLAR_TAG.fullmatch("$fñ_1$")
    assert splitter._DOLLAR_TAG.fullmatch("$$")
    assert not splitter._DOLLAR_TAG.fullmatch("$1a$")
    assert splitter._IDENT_RUN.fullmatch("naïve_$1")
    assert not splitter._IDENT_RUN.fullmatch("a-b")
