"""MySQL/MariaDB columns restated whole: ON UPDATE, character sets, INVISIBLE, VIRTUAL and
STORED generation, SRIDs, column-level checks; FULLTEXT and SPATIAL indexes; foreign keys
dropped and added again around a type change; what the engine refuses to restate."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import PlanError, Statement, plan_changes
from ptah_operator.engine.schema.hcl import parse_hcl
from ptah_operator.engine.schema.model import Check, Column, Dialect, Index, Schema, Table
from ptah_operator.engine.schema.mysql_columns import (
    Extra,
    _Collations,
    normalize_on_update,
    read_extra,
    settle_column,
)
from ptah_operator.engine.schema.normalize import NormalizationError
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.render import Renderer
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.severity import Severity

PG = Dialect.POSTGRESQL
MY = Dialect.MARIADB
MYSQL = Dialect.MYSQL


def schema(dialect: Dialect, ddl: str) -> Schema:
    return assemble(dialect, [parse_ddl(dialect, ddl, "s.sql")], Scope())


def hcl_schema(dialect: Dialect, text: str) -> Schema:
    return assemble(dialect, [parse_hcl(dialect, text, "s.hcl")], Scope())


def plan(before: str, after: str, dialect: Dialect = MY) -> list[Statement]:
    return plan_changes(schema(dialect, before), schema(dialect, after))


def column(s: Schema, table: str, name: str) -> Column:
    found = s.table("", table)
    assert found is not None
    result = found.column(name)
    assert result is not None
    return result


def with_table(s: Schema, name: str, **changes: Any) -> Schema:
    return dataclasses.replace(
        s,
        tables=tuple(dataclasses.replace(t, **changes) if t.name == name else t for t in s.tables),
    )


# EXTRA as each server spells it.


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", Extra()),
        ("auto_increment", Extra(auto_increment=True)),
        ("on update current_timestamp()", Extra(on_update="CURRENT_TIMESTAMP()")),
        (
            "on update current_timestamp(3), INVISIBLE",
            Extra(on_update="CURRENT_TIMESTAMP(3)", invisible=True),
        ),
        ("VIRTUAL GENERATED", Extra(generated="virtual")),
        ("STORED GENERATED, INVISIBLE", Extra(generated="stored", invisible=True)),
        ("auto_increment, INVISIBLE", Extra(auto_increment=True, invisible=True)),
        # MySQL 8
        ("DEFAULT_GENERATED", Extra()),
        ("DEFAULT_GENERATED on update CURRENT_TIMESTAMP", Extra(on_update="CURRENT_TIMESTAMP()")),
        (
            "DEFAULT_GENERATED on update CURRENT_TIMESTAMP(6) INVISIBLE",
            Extra(on_update="CURRENT_TIMESTAMP(6)", invisible=True),
        ),
        ("VIRTUAL GENERATED INVISIBLE", Extra(generated="virtual", invisible=True)),
        ("WITHOUT SYSTEM VERSIONING", Extra(unmodelled=("WITHOUT SYSTEM VERSIONING",))),
        (
            "auto_increment, SOMETHING NEW",
            Extra(auto_increment=True, unmodelled=("EXTRA 'something new'",)),
        ),
    ],
)
def test_extra_is_read_as_both_servers_spell_it(text: str, expected: Extra) -> None:
    assert read_extra(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP()"),
        ("current_timestamp()", "CURRENT_TIMESTAMP()"),
        ("CURRENT_TIMESTAMP(0)", "CURRENT_TIMESTAMP()"),
        ("now(3)", "CURRENT_TIMESTAMP(3)"),
        ("LOCALTIMESTAMP( 6 )", "CURRENT_TIMESTAMP(6)"),
    ],
)
def test_on_update_synonyms_read_alike(text: str, expected: str) -> None:
    assert normalize_on_update(text) == expected


@pytest.mark.parametrize("text", ["1", "CURRENT_DATE", "CURRENT_TIMESTAMP(7)", "now() + 1"])
def test_on_update_takes_current_timestamp_only(text: str) -> None:
    with pytest.raises(NormalizationError):
        normalize_on_update(text)


# The desired side: SQL and HCL.

COLUMNS_DDL = """
CREATE TABLE t (
  id int PRIMARY KEY,
  updated timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE now(3),
  title varchar(200) CHARACTER SET Latin1 COLLATE latin1_bin,
  secret int INVISIBLE,
  twice int AS (id * 2),
  thrice int GENERATED ALWAYS AS (id * 3) PERSISTENT,
  place point NOT NULL REF_SYSTEM_ID=4326,
  area polygon SRID 3857,
  shape geometry,
  body text,
  FULLTEXT KEY t_ft (title),
  SPATIAL INDEX t_sp (place)
);
CREATE FULLTEXT INDEX t_body ON t (body);
"""

COLUMNS_HCL = """
table "t" {
  column "id" { type = int }
  column "updated" {
    type      = timestamp(3)
    null      = false
    default   = sql("CURRENT_TIMESTAMP(3)")
    on_update = sql("CURRENT_TIMESTAMP(3)")
  }
  column "title" {
    type    = varchar(200)
    charset = "latin1"
    collate = "latin1_bin"
  }
  column "secret" {
    type      = int
    invisible = true
  }
  column "twice" {
    type = int
    as {
      expr = "id * 2"
      type = VIRTUAL
    }
  }
  column "thrice" {
    type = int
    as { expr = "id * 3" }
  }
  column "place" {
    type = point
    null = false
    srid = 4326
  }
  column "area" {
    type = polygon
    srid = 3857
  }
  column "shape" { type = geometry }
  column "body" { type = text }
  primary_key { columns = [column.id] }
  index "t_ft" {
    type    = FULLTEXT
    columns = [column.title]
  }
  index "t_sp" {
    type    = SPATIAL
    columns = [column.place]
  }
  index "t_body" {
    type    = FULLTEXT
    columns = [column.body]
  }
}
"""


def test_mariadb_columns_read_from_sql() -> None:
    s = schema(MY, COLUMNS_DDL)
    updated = column(s, "t", "updated")
    assert (updated.on_update, updated.default) == ("CURRENT_TIMESTAMP(3)", "CURRENT_TIMESTAMP(3)")
    title = column(s, "t", "title")
    assert (title.charset, title.collation) == ("latin1", "latin1_bin")
    assert column(s, "t", "secret").invisible
    # Without STORED (or PERSISTENT) the server makes a VIRTUAL column.
    assert column(s, "t", "twice").virtual
    assert column(s, "t", "thrice") == Column(name="thrice", type="int", generated="id * 3")
    assert (column(s, "t", "place").type, column(s, "t", "place").srid) == ("point", 4326)
    assert (column(s, "t", "area").type, column(s, "t", "area").srid) == ("polygon", 3857)
    assert column(s, "t", "shape").srid is None
    table = s.table("", "t")
    assert table is not None
    assert {(i.name, i.method) for i in table.indexes} == {
        ("t_ft", "fulltext"),
        ("t_sp", "spatial"),
        ("t_body", "fulltext"),
    }


def test_spatial_words_are_types_only_where_a_type_goes() -> None:
    ddl = (
        "CREATE TABLE t (`point` point NOT NULL, srid int DEFAULT 1, "
        "SPATIAL KEY point (`point`), CONSTRAINT polygon CHECK (srid > 0));"
    )
    table = schema(MY, ddl).table("", "t")
    assert table is not None
    assert [(c.name, c.type, c.srid) for c in table.columns] == [
        ("point", "point", None),
        ("srid", "int", None),
    ]
    assert [(i.name, i.method) for i in table.indexes] == [("point", "spatial")]
    assert [c.name for c in table.checks] == ["polygon"]


def test_mariadb_sql_and_hcl_read_the_same_columns() -> None:
    assert schema(MY, COLUMNS_DDL) == hcl_schema(MY, COLUMNS_HCL)


def test_mysql_plain_indexes_have_no_method() -> None:
    ddl = "CREATE TABLE t (a int, b text, KEY t_a (a) USING HASH, KEY t_b USING BTREE (a));"
    table = schema(MY, ddl).table("", "t")
    assert table is not None
    assert all(i.method is None for i in table.indexes)
    hcl = 'table "t" {\n column "a" { type = int }\n index "t_a" {\n type = HASH\n columns = [column.a]\n }\n}\n'
    hashed = hcl_schema(MY, hcl).table("", "t")
    assert hashed is not None
    assert hashed.indexes == (Index(name="t_a", columns=("a",)),)
    with pytest.raises(DesiredSchemaError):
        hcl_schema(MY, hcl.replace("HASH", "GIN"))


@pytest.mark.parametrize(
    "ddl",
    [
        "CREATE TABLE t (a timestamp ON UPDATE CURRENT_TIMESTAMP);",
        "CREATE TABLE t (a text CHARACTER SET latin1);",
        "CREATE TABLE t (a int INVISIBLE);",
    ],
)
def test_postgresql_refuses_mysql_column_clauses(ddl: str) -> None:
    with pytest.raises(DesiredSchemaError, match=r"unsupported clause|not valid postgresql"):
        parse_ddl(PG, ddl, "s.sql")


@pytest.mark.parametrize(
    "attribute", ['on_update = sql("now()")', 'charset = "latin1"', "invisible = true", "srid = 1"]
)
def test_postgresql_refuses_mysql_column_attributes_in_hcl(attribute: str) -> None:
    hcl = f'table "t" {{\n column "a" {{\n type = int\n {attribute}\n }}\n}}\n'
    with pytest.raises(DesiredSchemaError, match="MySQL/MariaDB only"):
        parse_hcl(PG, hcl, "s.hcl")


def test_postgresql_generates_stored_columns_only() -> None:
    hcl = (
        'table "t" {\n column "a" {\n type = int\n as {\n expr = "1"\n type = VIRTUAL\n }\n }\n}\n'
    )
    with pytest.raises(DesiredSchemaError, match="STORED only"):
        parse_hcl(PG, hcl, "s.hcl")
    stored = hcl_schema(PG, hcl.replace("VIRTUAL", "STORED")).tables[0].columns[0]
    assert not stored.virtual


# Rendering: the whole column, in an order both servers take.


def test_a_column_is_rendered_whole() -> None:
    full = Column(
        name="c",
        type="varchar(10)",
        nullable=False,
        default="'x'",
        collation="latin1_bin",
        comment="note",
        charset="latin1",
        invisible=True,
    )
    assert Renderer(MY).column_definition(full, (Check(expr="c <> ''", name="c"),)) == (
        "`c` varchar(10) CHARACTER SET `latin1` COLLATE `latin1_bin` DEFAULT 'x' NOT NULL "
        "INVISIBLE COMMENT 'note' CHECK (c <> '')"
    )
    stamp = Column(
        name="u",
        type="timestamp",
        nullable=False,
        default="CURRENT_TIMESTAMP()",
        on_update="CURRENT_TIMESTAMP()",
    )
    assert Renderer(MY).column_definition(stamp) == (
        "`u` timestamp DEFAULT CURRENT_TIMESTAMP() NOT NULL ON UPDATE CURRENT_TIMESTAMP()"
    )
    virtual = Column(name="v", type="int", generated="a * 2", virtual=True)
    assert Renderer(MY).column_definition(virtual) == "`v` int GENERATED ALWAYS AS (a * 2) VIRTUAL"
    assert Renderer(MYSQL).column_definition(dataclasses.replace(virtual, nullable=False)) == (
        "`v` int GENERATED ALWAYS AS (a * 2) VIRTUAL NOT NULL"
    )
    place = Column(name="p", type="point", nullable=False, srid=4326)
    assert Renderer(MY).column_definition(place) == "`p` point REF_SYSTEM_ID=4326 NOT NULL"
    assert Renderer(MYSQL).column_definition(place) == "`p` point SRID 4326 NOT NULL"


def test_postgresql_rendering_is_unchanged() -> None:
    generated = Column(name="g", type="integer", generated="a * 2")
    assert Renderer(PG).column_definition(generated) == (
        '"g" integer GENERATED ALWAYS AS (a * 2) STORED NULL'
    )


# Planning: what MODIFY COLUMN restates, and what it refuses to.

STAMPED = (
    "CREATE TABLE t (id int PRIMARY KEY, updated_at timestamp NOT NULL "
    "DEFAULT current_timestamp() ON UPDATE current_timestamp() COMMENT 'when'{});"
)


def test_a_comment_change_restates_on_update() -> None:
    statements = plan(STAMPED.format(""), STAMPED.format(" INVISIBLE").replace("'when'", "'w'"))
    assert [s.sql for s in statements] == [
        "ALTER TABLE `t` MODIFY COLUMN `updated_at` timestamp DEFAULT CURRENT_TIMESTAMP() "
        "NOT NULL ON UPDATE CURRENT_TIMESTAMP() INVISIBLE COMMENT 'w'"
    ]
    assert statements[0].severity is Severity.WARNING
    assert "comment changes" in statements[0].reason
    assert "visibility changes" in statements[0].reason


def test_on_update_is_added_and_removed_safely() -> None:
    bare = "CREATE TABLE t (id int PRIMARY KEY, u timestamp NULL);"
    stamped = "CREATE TABLE t (id int PRIMARY KEY, u timestamp NULL ON UPDATE CURRENT_TIMESTAMP);"
    added = plan(bare, stamped)
    assert [s.sql for s in added] == [
        "ALTER TABLE `t` MODIFY COLUMN `u` timestamp NULL ON UPDATE CURRENT_TIMESTAMP()"
    ]
    assert added[0].severity is Severity.SAFE
    assert [s.sql for s in plan(stamped, bare)] == [
        "ALTER TABLE `t` MODIFY COLUMN `u` timestamp NULL"
    ]


@pytest.mark.parametrize(
    "unmodelled",
    [
        ("WITHOUT SYSTEM VERSIONING",),
        ("SRID (this server does not report it)",),
        ("EXTRA 'something new'",),
    ],
)
def test_a_column_the_model_cannot_restate_is_refused(unmodelled: tuple[str, ...]) -> None:
    before = schema(MY, "CREATE TABLE t (id int PRIMARY KEY, g geometry, n int);")
    table = before.tables[0]
    observed = with_table(
        before,
        "t",
        columns=tuple(
            dataclasses.replace(c, unmodelled=unmodelled) if c.name == "g" else c
            for c in table.columns
        ),
    )
    # Unchanged, it plans nothing; another column changes freely.
    assert plan_changes(observed, before) == []
    other = schema(MY, "CREATE TABLE t (id int PRIMARY KEY, g geometry, n bigint);")
    assert [s.sql for s in plan_changes(observed, other)] == [
        "ALTER TABLE `t` MODIFY COLUMN `n` bigint NULL"
    ]
    changed = schema(MY, "CREATE TABLE t (id int PRIMARY KEY, g geometry COMMENT 'x', n int);")
    with pytest.raises(PlanError, match=r"column t\.g holds " + unmodelled[0].split(" ")[0]):
        plan_changes(observed, changed)


def test_mariadb_column_checks_are_restated_by_modify() -> None:
    before = schema(
        MY,
        "CREATE TABLE t (id int PRIMARY KEY, a int, b int, CONSTRAINT a CHECK (a > 0), CONSTRAINT t_b CHECK (b > a));",
    )
    table = before.tables[0]
    # As introspection reads MariaDB's `a int CHECK (a > 0)`: named after its column.
    observed = with_table(
        before,
        "t",
        checks=tuple(
            dataclasses.replace(c, column="a") if c.name == "a" else c for c in table.checks
        ),
    )
    after = schema(
        MY,
        "CREATE TABLE t (id int PRIMARY KEY, a int COMMENT 'x', b int, CHECK (a > 0), CONSTRAINT t_b CHECK (b > a));",
    )
    assert [s.sql for s in plan_changes(observed, after)] == [
        "ALTER TABLE `t` MODIFY COLUMN `a` int NULL COMMENT 'x' CHECK (a > 0)"
    ]
    # A check that goes is not restated: the column's MODIFY drops it. (MariaDB refuses
    # DROP CONSTRAINT of a column's own check, errno 1091: the plan once began with one.)
    gone = schema(
        MY,
        "CREATE TABLE t (id int PRIMARY KEY, a int COMMENT 'x', b int, CONSTRAINT t_b CHECK (b > a));",
    )
    assert [s.sql for s in plan_changes(observed, gone)] == [
        "ALTER TABLE `t` MODIFY COLUMN `a` int NULL COMMENT 'x'",
    ]
    # The column unchanged, a MODIFY of it restated as it is drops the check (destructive).
    kept = schema(
        MY, "CREATE TABLE t (id int PRIMARY KEY, a int, b int, CONSTRAINT t_b CHECK (b > a));"
    )
    dropped = plan_changes(observed, kept)
    assert [(s.sql, s.severity.value) for s in dropped] == [
        ("ALTER TABLE `t` MODIFY COLUMN `a` int NULL", "destructive")
    ]
    # A check written on the column replaces the one it had: one MODIFY.
    replaced = schema(
        MY,
        "CREATE TABLE t (id int PRIMARY KEY, a int CHECK (a > 1), b int, "
        "CONSTRAINT t_b CHECK (b > a));",
    )
    assert [s.sql for s in plan_changes(observed, replaced)] == [
        "ALTER TABLE `t` MODIFY COLUMN `a` int NULL CHECK (a > 1)"
    ]


def test_virtual_and_stored_are_different_columns() -> None:
    stored = "CREATE TABLE t (id int PRIMARY KEY, g int AS (id * 2) STORED);"
    virtual = "CREATE TABLE t (id int PRIMARY KEY, g int AS (id * 2) VIRTUAL);"
    assert plan(virtual, virtual.replace(" VIRTUAL", "")) == []
    statements = plan(stored, virtual)
    assert [s.sql for s in statements] == [
        "ALTER TABLE `t` DROP COLUMN `g`",
        "ALTER TABLE `t` ADD COLUMN `g` int GENERATED ALWAYS AS (id * 2) VIRTUAL",
    ]
    assert statements[0].severity is Severity.DESTRUCTIVE


def test_a_character_set_change_is_destructive_a_collation_change_a_warning() -> None:
    base = "CREATE TABLE t (id int PRIMARY KEY, c varchar(10){});"
    converted = plan(base.format(""), base.format(" CHARACTER SET latin1"))
    assert (
        converted[0].sql
        == "ALTER TABLE `t` MODIFY COLUMN `c` varchar(10) CHARACTER SET `latin1` NULL"
    )
    assert converted[0].severity is Severity.DESTRUCTIVE
    recollated = plan(base.format(""), base.format(" COLLATE utf8mb4_bin"))
    assert recollated[0].severity is Severity.WARNING


def test_an_srid_change_is_planned() -> None:
    base = "CREATE TABLE t (id int PRIMARY KEY, p point NOT NULL{});"
    statements = plan(base.format(""), base.format(" REF_SYSTEM_ID=4326"))
    assert [s.sql for s in statements] == [
        "ALTER TABLE `t` MODIFY COLUMN `p` point REF_SYSTEM_ID=4326 NOT NULL"
    ]
    assert statements[0].severity is Severity.WARNING


def test_a_new_table_states_its_spatial_types_and_srid_in_create_table() -> None:
    statements = plan(
        "", "CREATE TABLE t (id int PRIMARY KEY, p point NOT NULL SRID 4326, g geometry, s text);"
    )
    assert [s.sql for s in statements] == [
        "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `p` point REF_SYSTEM_ID=4326 NOT NULL,\n"
        "  `g` geometry NULL,\n  `s` text NULL,\n  PRIMARY KEY (`id`)\n)",
    ]
    assert {s.severity for s in statements} == {Severity.SAFE}


# FULLTEXT and SPATIAL indexes.

TEXTS = "CREATE TABLE t (id int PRIMARY KEY, body text, p point NOT NULL, {});"


def test_a_fulltext_index_that_matches_plans_nothing() -> None:
    ddl = TEXTS.format("FULLTEXT KEY t_ft (body), SPATIAL KEY t_sp (p)")
    assert plan(ddl, ddl) == []
    separate = TEXTS.format("SPATIAL KEY t_sp (p)").replace(
        ");", "); CREATE FULLTEXT INDEX t_ft ON t (body);"
    )
    assert plan(ddl, separate) == []


def test_plain_and_fulltext_are_different_indexes() -> None:
    plain = TEXTS.format("KEY t_ft (body(10))")
    full = TEXTS.format("FULLTEXT KEY t_ft (body)")
    statements = plan(plain, full)
    assert [(s.sql, s.severity) for s in statements] == [
        ("ALTER TABLE `t` DROP INDEX `t_ft`", Severity.WARNING),
        ("ALTER TABLE `t` ADD FULLTEXT INDEX `t_ft` (`body`)", Severity.SAFE),
    ]
    back = plan(full, plain)
    assert [s.sql for s in back] == [
        "ALTER TABLE `t` DROP INDEX `t_ft`",
        "ALTER TABLE `t` ADD INDEX `t_ft` (`body`(10))",
    ]


# Foreign keys around a type change.

LINKED = """
CREATE TABLE parent (id {0} PRIMARY KEY, code varchar(10) UNIQUE);
CREATE TABLE child (
  id int PRIMARY KEY,
  parent_id {0},
  note text,
  CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE
);
"""


def test_foreign_keys_are_dropped_and_added_again_around_a_type_change() -> None:
    statements = plan(LINKED.format("int"), LINKED.format("bigint"))
    assert [(s.sql, s.severity, s.category) for s in statements] == [
        (
            "ALTER TABLE `child` DROP FOREIGN KEY `child_parent`",
            Severity.WARNING,
            "columns_changed",
        ),
        (
            "ALTER TABLE `child` MODIFY COLUMN `parent_id` bigint NULL",
            Severity.WARNING,
            "columns_changed",
        ),
        (
            "ALTER TABLE `parent` MODIFY COLUMN `id` bigint NOT NULL",
            Severity.WARNING,
            "columns_changed",
        ),
        (
            "ALTER TABLE `child` ADD CONSTRAINT `child_parent` FOREIGN KEY (`parent_id`) "
            "REFERENCES `parent` (`id`) ON DELETE CASCADE ON UPDATE RESTRICT",
            Severity.WARNING,
            "columns_changed",
        ),
    ]
    assert "parent.id" in statements[0].reason
    assert "child.parent_id" in statements[0].reason


def test_a_type_change_keeps_its_own_severity_under_a_foreign_key() -> None:
    statements = plan(LINKED.format("bigint"), LINKED.format("int"))
    modify = [s for s in statements if "MODIFY" in s.sql]
    assert {s.severity for s in modify} == {Severity.DESTRUCTIVE}
    assert statements[0].sql.endswith("DROP FOREIGN KEY `child_parent`")


def test_foreign_keys_stay_when_no_linked_column_changes_type() -> None:
    before = LINKED.format("int")
    after = before.replace("note text", "note text COMMENT 'n'").replace(
        "parent_id int", "parent_id int NOT NULL"
    )
    assert [s.sql for s in plan(before, after)] == [
        "ALTER TABLE `child` MODIFY COLUMN `parent_id` int NOT NULL",
        "ALTER TABLE `child` MODIFY COLUMN `note` text NULL COMMENT 'n'",
    ]


def test_a_foreign_key_that_goes_is_dropped_once_and_not_added_again() -> None:
    after = LINKED.format("bigint").replace(
        ",\n  CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE",
        "",
    )
    sql = [s.sql for s in plan(LINKED.format("int"), after)]
    assert sql.count("ALTER TABLE `child` DROP FOREIGN KEY `child_parent`") == 1
    assert not any("ADD CONSTRAINT" in s for s in sql)


def test_postgresql_converts_foreign_keys_along() -> None:
    pg_linked = LINKED.replace("varchar(10) UNIQUE", "text")
    sql = [s.sql for s in plan(pg_linked.format("int"), pg_linked.format("bigint"), PG)]
    assert not any("FOREIGN KEY" in s or "DROP CONSTRAINT" in s for s in sql)


# Settling character sets and collations against what the server says.

COLLATIONS = _Collations(
    database="utf8mb4_general_ci",
    defaults={
        "utf8mb4": "utf8mb4_general_ci",
        "latin1": "latin1_swedish_ci",
        "utf8mb3": "utf8mb3_general_ci",
        "binary": "binary",
    },
)


@pytest.mark.parametrize(
    ("table_collation", "charset", "collation", "expected"),
    [
        # A set named alone takes its default collation.
        ("utf8mb4_general_ci", "latin1", None, ("latin1", "latin1_swedish_ci")),
        ("utf8mb4_general_ci", None, "latin1_bin", ("latin1", "latin1_bin")),
        ("utf8mb4_general_ci", "latin1", "latin1_bin", ("latin1", "latin1_bin")),
        # The table's own: nothing to say.
        ("utf8mb4_general_ci", None, "utf8mb4_general_ci", (None, None)),
        ("utf8mb4_general_ci", "utf8mb4", None, (None, None)),
        # The table's set, not its collation: the set's default, which differs.
        ("utf8mb4_unicode_ci", "utf8mb4", None, (None, "utf8mb4_general_ci")),
        # `utf8` is `utf8mb3` on this server.
        ("utf8mb4_general_ci", "utf8", None, ("utf8mb3", "utf8mb3_general_ci")),
        ("utf8mb4_general_ci", None, "utf8_bin", ("utf8mb3", "utf8mb3_bin")),
        # Unknown to the server: left for it to refuse.
        ("utf8mb4_general_ci", "klingon", None, ("klingon", None)),
    ],
)
def test_settle_column(
    table_collation: str,
    charset: str | None,
    collation: str | None,
    expected: tuple[str | None, str | None],
) -> None:
    settled = settle_column(
        Column(name="c", type="text", charset=charset, collation=collation),
        table_collation,
        COLLATIONS,
    )
    assert (settled.charset, settled.collation) == expected


def test_model_defaults_leave_postgresql_columns_alone() -> None:
    table = schema(PG, "CREATE TABLE t (a int GENERATED ALWAYS AS (1) STORED, b text);").table(
        "public", "t"
    )
    assert isinstance(table, Table)
    for c in table.columns:
        assert (c.virtual, c.charset, c.on_update, c.invisible, c.srid, c.unmodelled) == (
            False,
            None,
            None,
            False,
            None,
            (),
        )
