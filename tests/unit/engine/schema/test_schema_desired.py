"""Desired schema from SQL DDL and from Ptah HCL: the two formats, merging, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble, load_files
from ptah_operator.engine.schema.hcl import parse_hcl
from ptah_operator.engine.schema.model import Dialect, ForeignKey, Index
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.scope import Scope

PG = Dialect.POSTGRESQL
MY = Dialect.MARIADB

PG_DDL = """
CREATE TYPE status AS ENUM ('a', 'b');
CREATE TABLE orgs (id serial PRIMARY KEY, name text NOT NULL);
CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email varchar(255) NOT NULL,
  st status DEFAULT 'a',
  made timestamptz DEFAULT now(),
  org_id int,
  CONSTRAINT users_org_fk FOREIGN KEY (org_id) REFERENCES orgs (id) ON DELETE CASCADE,
  CONSTRAINT positive CHECK (id > 0)
);
CREATE UNIQUE INDEX users_email ON users (email) INCLUDE (st) WHERE email <> '';
COMMENT ON COLUMN users.email IS 'mail';
"""

PG_HCL = """
schema "public" {}
enum "status" {
  schema = schema.public
  values = ["a", "b"]
}
table "orgs" {
  schema = schema.public
  column "id" { type = serial }
  column "name" {
    type = text
    null = false
  }
  primary_key { columns = [column.id] }
}
table "users" {
  schema = schema.public
  column "id" {
    type = bigint
    identity { generated = ALWAYS }
  }
  column "email" {
    type    = varchar(255)
    null    = false
    comment = "mail"
  }
  column "st" {
    type    = enum.status
    default = "a"
  }
  column "made" {
    type    = timestamptz
    default = sql("now()")
  }
  column "org_id" { type = int }
  primary_key { columns = [column.id] }
  index "users_email" {
    unique  = true
    columns = [column.email]
    include = [column.st]
    where   = "email <> ''"
  }
  foreign_key "users_org_fk" {
    columns     = [column.org_id]
    ref_columns = [table.orgs.column.id]
    on_delete   = CASCADE
  }
  check "positive" { expr = "id > 0" }
}
"""


def test_ddl_and_hcl_describe_the_same_postgresql_schema() -> None:
    from_ddl = assemble(PG, [parse_ddl(PG, PG_DDL, "schema.sql")], Scope())
    from_hcl = assemble(PG, [parse_hcl(PG, PG_HCL, "schema.hcl")], Scope())
    assert from_ddl == from_hcl
    assert from_ddl.fingerprint() == from_hcl.fingerprint()


def test_ddl_reads_every_part_of_a_table() -> None:
    schema = assemble(PG, [parse_ddl(PG, PG_DDL, "schema.sql")], Scope())
    users = schema.table("public", "users")
    assert users is not None
    assert [c.name for c in users.columns] == ["id", "email", "st", "made", "org_id"]
    id_column, email, st, made, _ = users.columns
    assert (id_column.identity, id_column.nullable) == ("always", False)
    assert (email.type, email.comment) == ("character varying(255)", "mail")
    assert (st.type, st.default) == ("public.status", "'a'")
    assert made.default == "CURRENT_TIMESTAMP"
    assert users.indexes == (
        Index(
            name="users_email",
            columns=("email",),
            unique=True,
            where="email <> ''",
            include=("st",),
        ),
    )
    assert users.foreign_keys == (
        ForeignKey(
            columns=("org_id",),
            ref_schema="public",
            ref_table="orgs",
            ref_columns=("id",),
            on_delete="CASCADE",
            name="users_org_fk",
        ),
    )
    orgs = schema.table("public", "orgs")
    assert orgs is not None
    assert orgs.columns[0].identity == "serial"
    assert [e.values for e in schema.enums] == [("a", "b")]


def test_mysql_uniques_become_unique_indexes_with_prefixes() -> None:
    ddl = """
    CREATE TABLE t (
      id int AUTO_INCREMENT PRIMARY KEY,
      body text,
      code varchar(10) UNIQUE,
      KEY body_prefix (body(20)),
      kind enum('x','y') NOT NULL DEFAULT 'x'
    ) COMMENT 'things';
    """
    schema = assemble(MY, [parse_ddl(MY, ddl, "t.sql")], Scope())
    table = schema.tables[0]
    assert table.schema == ""
    assert table.comment == "things"
    assert table.columns[0].identity == "auto_increment"
    assert table.columns[3].type == "enum('x','y')"
    assert Index(name=None, columns=("code",), unique=True) in table.indexes
    assert Index(name="body_prefix", columns=("body",), prefix_lengths=(20,)) in table.indexes


def test_files_merge_and_identical_duplicates_are_taken_once(tmp_path: Path) -> None:
    (tmp_path / "a.sql").write_text("CREATE TABLE t (id int PRIMARY KEY);")
    (tmp_path / "b.sql").write_text(
        "CREATE TABLE t (id int PRIMARY KEY);\nCREATE INDEX t_id ON t (id);"
    )
    schema = load_files(PG, [tmp_path], Scope())
    assert len(schema.tables) == 1
    assert schema.tables[0].indexes[0].name == "t_id"


def test_a_conflicting_duplicate_is_refused_naming_file_and_object(tmp_path: Path) -> None:
    (tmp_path / "a.sql").write_text("CREATE TABLE t (id int PRIMARY KEY);")
    (tmp_path / "b.hcl").write_text('table "t" {\n  column "id" { type = bigint }\n}\n')
    with pytest.raises(DesiredSchemaError) as caught:
        load_files(PG, [tmp_path], Scope())
    message = str(caught.value)
    assert "public.t" in message
    assert "a.sql" in message
    assert "b.hcl" in message


def test_a_statement_that_is_not_schema_is_refused() -> None:
    with pytest.raises(DesiredSchemaError, match=r"data\.sql"):
        parse_ddl(PG, "INSERT INTO t VALUES (1);", "data.sql")


def test_scope_exclusions_apply_to_the_desired_schema() -> None:
    parts = parse_ddl(PG, "CREATE TABLE keep (id int); CREATE TABLE skip_me (id int);", "s.sql")
    schema = assemble(PG, [parts], Scope(exclude=("skip_*",)))
    assert [t.name for t in schema.tables] == ["keep"]


def test_index_key_options_read_the_same_from_sql_and_hcl() -> None:
    ddl = """
    CREATE TABLE t (a int, b text, c int);
    CREATE INDEX t_k ON t (a DESC, b text_pattern_ops NULLS FIRST, c DESC NULLS FIRST,
                           lower(b) ASC NULLS LAST);
    CREATE INDEX t_plain ON t (a ASC, b text_ops, c NULLS LAST);
    """
    hcl = """
    schema "public" {}
    table "t" {
      schema = schema.public
      column "a" { type = int }
      column "b" { type = text }
      column "c" { type = int }
      index "t_k" {
        on {
          column = column.a
          desc   = true
        }
        on {
          column = column.b
          ops    = "text_pattern_ops"
          nulls  = "first"
        }
        on {
          column = column.c
          desc   = true
          nulls  = "first"
        }
        on { expr = "lower(b)" }
      }
      index "t_plain" {
        on {
          column = column.a
          ops    = "int4_ops"
        }
        on { column = column.b }
        on {
          column = column.c
          nulls  = "last"
        }
      }
    }
    """
    from_sql = assemble(PG, [parse_ddl(PG, ddl, "t.sql")], Scope()).tables[0].indexes
    from_hcl = assemble(PG, [parse_hcl(PG, hcl, "t.hcl")], Scope()).tables[0].indexes
    assert from_sql == from_hcl
    keyed = next(i for i in from_sql if i.name == "t_k")
    # DESC sorts NULLs first already; only departures from the default order are kept.
    assert keyed.key_options == ("DESC", "text_pattern_ops NULLS FIRST", "DESC", "")
    plain = next(i for i in from_sql if i.name == "t_plain")
    assert plain.key_options == ()
    assert plain == Index(name="t_plain", columns=("a", "b", "c"))


def test_mariadb_index_keys_keep_desc_only() -> None:
    ddl = "CREATE TABLE t (a int, b varchar(50), KEY t_k (a DESC, b(10)), KEY t_p (a ASC));"
    indexes = assemble(MY, [parse_ddl(MY, ddl, "t.sql")], Scope()).tables[0].indexes
    assert (
        Index(name="t_k", columns=("a", "b"), prefix_lengths=(None, 10), key_options=("DESC", ""))
        in indexes
    )
    assert Index(name="t_p", columns=("a",)) in indexes


def test_postgresql_key_options_are_refused_in_mariadb_hcl() -> None:
    hcl = """
    table "t" {
      column "b" { type = text }
      index "t_b" {
        on {
          column = column.b
          ops    = "text_pattern_ops"
        }
      }
    }
    """
    with pytest.raises(DesiredSchemaError, match="PostgreSQL only"):
        parse_hcl(MY, hcl, "t.hcl")


@pytest.mark.parametrize(
    ("dialect", "ddl"),
    [
        (PG, "CREATE TABLE t (a int); COMMENT ON TABLE t IS ''; COMMENT ON COLUMN t.a IS '';"),
        (MY, "CREATE TABLE t (a int COMMENT '') COMMENT=''"),
    ],
)
def test_an_empty_comment_is_no_comment(dialect: Dialect, ddl: str) -> None:
    # Both servers store no comment for an empty one: read as a comment, it never converged
    # (the convergence harness found `COMMENT ON COLUMN ... IS ''` planned again and again).
    table = assemble(dialect, [parse_ddl(dialect, ddl, "s.sql")], Scope()).tables[0]
    assert table.comment is None
    assert table.columns[0].comment is None


def test_an_index_and_a_foreign_key_may_share_a_name() -> None:
    # What the plan from an empty schema writes for a MariaDB foreign key whose index the
    # server made (the index takes the key's name): read back, it was refused as the same
    # object defined twice. Found by the convergence harness.
    ddl = (
        "CREATE TABLE p (id int PRIMARY KEY); CREATE TABLE c (a int);"
        "ALTER TABLE c ADD INDEX fk1 (a);"
        "ALTER TABLE c ADD CONSTRAINT fk1 FOREIGN KEY (a) REFERENCES p (id);"
    )
    table = assemble(MY, [parse_ddl(MY, ddl, "s.sql")], Scope()).table("", "c")
    assert table is not None
    assert [i.name for i in table.indexes] == ["fk1"]
    assert [f.name for f in table.foreign_keys] == ["fk1"]
    twice = "ALTER TABLE c ADD INDEX fk1 (a, a);"
    with pytest.raises(DesiredSchemaError, match="fk1 on table c is defined differently"):
        assemble(MY, [parse_ddl(MY, ddl + twice, "s.sql")], Scope())


@pytest.mark.parametrize(
    "ddl",
    [
        "CREATE TABLE t (a varchar(5) DEFAULT '\U0001f600')",
        "CREATE TABLE t (a int COMMENT '\U0001f600')",
        "CREATE TABLE t (a int) COMMENT='\U0001f600'",
        "CREATE TABLE t (a enum('\U0001f600', 'x'))",
        "CREATE TABLE t (a text CHECK (a <> '\U0001f600'))",
        "CREATE TABLE t (a text, b text AS (concat(a, '\U0001f600')))",
    ],
)
def test_mysql_refuses_what_its_table_definitions_cannot_keep(ddl: str) -> None:
    # MariaDB keeps a table's definition in utf8mb3: such a default, comment or enum value
    # becomes `?`, a check or expression reads back as `????`, and the plan never
    # converged (found by the convergence harness). PostgreSQL keeps them.
    with pytest.raises(DesiredSchemaError, match="beyond U\\+FFFF") as refused:
        assemble(MY, [parse_ddl(MY, ddl, "s.sql")], Scope())
    assert "\U0001f600" not in str(refused.value)


def test_postgresql_keeps_characters_beyond_the_bmp() -> None:
    ddl = "CREATE TABLE t (a text DEFAULT '\U0001f600' CHECK (a <> '\U0001f600'));"
    table = assemble(PG, [parse_ddl(PG, ddl, "s.sql")], Scope()).tables[0]
    assert table.columns[0].default == "'\U0001f600'"


def test_enum_types_are_named_as_introspection_names_them() -> None:
    # `quote_ident` quotes a key word and a name with capitals: the desired `"select"` was
    # left unresolved and never equalled `public."select"` (found by the convergence
    # harness); `"Mood"` was spelt `public.Mood`.
    ddl = (
        "CREATE TYPE \"select\" AS ENUM ('a'); CREATE TYPE \"Mood\" AS ENUM ('b'); "
        "CREATE TYPE plain AS ENUM ('c'); "
        'CREATE TABLE t (a "select", b "Mood"[], c plain);'
    )
    table = assemble(PG, [parse_ddl(PG, ddl, "s.sql")], Scope()).tables[0]
    assert [c.type for c in table.columns] == ['public."select"', 'public."Mood"[]', "public.plain"]


def test_a_postgresql_default_before_primary_key_is_read_to_its_end() -> None:
    # Found by the convergence harness: sqlglot reads `PRIMARY KEY` as one token, which did
    # not end a default's source text, so `DEFAULT 5 PRIMARY KEY` was refused as more than
    # one expression.
    text = (
        "CREATE TABLE a (x int DEFAULT 5 PRIMARY KEY, y text DEFAULT 'PRIMARY KEY' UNIQUE);"
        "CREATE TABLE b (x date NOT NULL DEFAULT '2000-01-01'\n  PRIMARY   KEY);"
    )
    parts = parse_ddl(Dialect.POSTGRESQL, text, "t.sql")
    sources = [c.default_source for table in parts.tables for c in table.columns]
    assert sources == ["5", "'PRIMARY KEY'", "'2000-01-01'"]
