"""Every model field the renderer spells into SQL has the shape of what it is: types carry
only a type's words, grantees only a user's and a host's characters, plain index keys no
parenthesis, function settings one name. Each row is a way out of its place that a review
found."""

from __future__ import annotations

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.hcl import parse_hcl
from ptah_operator.engine.schema.model import Dialect
from ptah_operator.engine.schema.normalize import (
    NormalizationError,
    normalize_type,
    parse_grantee,
)
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.render import Renderer

PG, MY = Dialect.POSTGRESQL, Dialect.MARIADB


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        (PG, "int primary key"),
        (PG, "integer references t"),
        (PG, "text collate x"),
        (MY, "int invisible"),
        (MY, "int auto_increment"),
        (MY, "varchar(10) not null"),
    ],
)
def test_a_type_carries_no_constraint_or_attribute(dialect: Dialect, text: str) -> None:
    with pytest.raises(NormalizationError):
        normalize_type(dialect, text)


@pytest.mark.parametrize(
    ("dialect", "text", "canonical"),
    [
        (PG, "timestamp(3) with time zone", "timestamp(3) with time zone"),
        (PG, "double precision", "double precision"),
        (PG, "character varying(20)[]", "character varying(20)[]"),
        (PG, "interval day to second(3)", "interval day to second(3)"),
        (MY, "bigint(20) unsigned zerofill", "bigint unsigned zerofill"),
        (MY, "decimal(10,2) unsigned", "decimal(10,2) unsigned"),
    ],
)
def test_the_words_of_a_type_stay(dialect: Dialect, text: str, canonical: str) -> None:
    assert normalize_type(dialect, text) == canonical


@pytest.mark.parametrize(
    "grantee",
    [
        'x\\@ IDENTIFIED BY "pw", app2 WITH GRANT OPTION #',
        "app@local host",
        "a`b@%",
        'a"b',
        "app@%' OR 1",
    ],
)
def test_a_mysql_grantee_cannot_leave_its_quotes(grantee: str) -> None:
    with pytest.raises(NormalizationError):
        parse_grantee(MY, grantee)


def test_a_mysql_grantee_is_spelt_again_part_by_part() -> None:
    renderer = Renderer(MY)
    assert renderer.grantee(parse_grantee(MY, "'app'@'10.0.%'")) == "'app'@'10.0.%'"
    assert renderer.grantee(parse_grantee(MY, "reader")) == "'reader'"
    # Whatever the model holds, a part is a literal.
    assert renderer.grantee("'a\\'@'%'") == "'a\\\\'@'%'"


HCL = """
table "t" {{
  column "id" {{ type = int  null = false }}
  primary_key {{ columns = [column.id] }}
  {body}
}}
"""


@pytest.mark.parametrize(
    ("dialect", "body"),
    [
        (d, body)
        for d in (PG, MY)
        for body in (
            'index "ix" { on { column = "id)) WHERE (id > 0) --" } }',
            'index "ix" { columns = ["id+0)), DROP COLUMN secret, ADD INDEX iz ((id+0"] }',
        )
    ]
    # On PostgreSQL a role name is a quoted identifier, whatever it holds.
    + [(MY, 'grant { to = "x\\\\@ IDENTIFIED BY pw"  privileges = [SELECT] }')],
)
def test_hcl_names_that_would_read_as_sql_are_refused(dialect: Dialect, body: str) -> None:
    with pytest.raises(DesiredSchemaError):
        parse_hcl(dialect, HCL.format(body=body), "t.hcl")


@pytest.mark.parametrize(
    "ddl",
    [
        'CREATE TABLE t (id int PRIMARY KEY); CREATE INDEX ix ON t ("id) WHERE (id > 0");',
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql"
        " SET \"search_path TO evil, public SET work_mem\" = '64MB' AS $$ SELECT 1 $$;",
    ],
)
def test_sql_names_that_would_read_as_sql_are_refused(ddl: str) -> None:
    with pytest.raises(DesiredSchemaError):
        parse_ddl(PG, ddl, "t.sql")


def test_a_privilege_refused_is_not_quoted_back() -> None:
    with pytest.raises(DesiredSchemaError) as refused:
        parse_ddl(PG, "CREATE TABLE t (id int); GRANT 'x y' ON t TO app;", "t.sql")
    # The statement is named by its position; the reason quotes nothing.
    reason = str(refused.value).split(": ", 2)[-1]
    assert reason.startswith("a privilege named is not a table privilege")
    assert "x y" not in str(refused.value)
