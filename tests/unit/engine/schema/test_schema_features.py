"""Issue #10: features beyond tables and columns, and what the engine refuses by name."""

from __future__ import annotations

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.model import Dialect, Schema
from ptah_operator.engine.schema.normalize import NormalizationError, normalize_default, reading
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.scope import Scope

PG, MY = Dialect.POSTGRESQL, Dialect.MARIADB


@pytest.mark.parametrize(
    ("text", "column_type", "expected"),
    [
        ("1.5", "decimal(35,30)", "1.500000000000000000000000000000"),
        ("'1.5'", "decimal(35,30)", "1.500000000000000000000000000000"),
        ("-1", "decimal(65,30)", "-1.000000000000000000000000000000"),
        ("9" * 65, "decimal(65,0)", "9" * 65),
        ("0", "decimal(10,2)", "0.00"),
    ],
)
def test_wide_mysql_decimal_defaults_take_the_column_scale(
    text: str, column_type: str, expected: str
) -> None:
    assert normalize_default(MY, text, column_type) == expected


def test_a_reading_failure_names_the_object_and_not_the_data() -> None:
    expected = r"^table public\.t, check c: unreadable"
    with pytest.raises(NormalizationError, match=expected), reading("table public.t, check c"):
        raise NormalizationError("unreadable SQL expression")
    with pytest.raises(NormalizationError) as caught, reading("table public.t, column a"):
        list(None)  # type: ignore[call-overload]
    assert str(caught.value) == "table public.t, column a: the engine cannot read it (TypeError)"


def schema(ddl: str, dialect: Dialect = PG) -> Schema:
    return assemble(dialect, [parse_ddl(dialect, ddl, "s.sql")], Scope(schemas=("public", "app")))


# What dumps write around the schema.


def test_psql_restrict_lines_and_session_settings_are_read_and_change_nothing() -> None:
    text = (
        "\\restrict abc123\n"
        "SET statement_timeout = 0;\nSET client_encoding = 'UTF8';\n"
        "SET standard_conforming_strings = on;\n"
        "SELECT pg_catalog.set_config('search_path', '', false);\n"
        "SET default_tablespace = '';\nSET default_table_access_method = heap;\n"
        "CREATE TABLE public.t (a integer);\n\\unrestrict abc123\n"
    )
    assert schema(text) == schema("CREATE TABLE t (a int);")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("\\connect other\nCREATE TABLE t (a int);", r"meta-command \\connect"),
        # On a later line, after blanks: the scan runs only where a line could start one.
        ("CREATE TABLE t (a int);\n \t\\connect other\n", r"meta-command \\connect"),
        ("SET search_path = app, public;", "search_path"),
        ("SELECT pg_catalog.set_config('search_path', 'app', false);", "search_path"),
        ("SET standard_conforming_strings = off;", "standard_conforming_strings"),
        ("SET default_tablespace = fast;", "default_tablespace"),
        ("SET role = admin;", "OWNER TO"),
        ("CREATE TABLE t (a int); DROP TABLE t;", "without IF EXISTS"),
        ("CREATE TABLE t (a int); DROP INDEX IF EXISTS i;", "INDEX dropped after"),
    ],
)
def test_what_a_dump_may_say_that_changes_the_schema_is_refused_by_name(
    text: str, message: str
) -> None:
    with pytest.raises(DesiredSchemaError, match=message):
        schema(text)


def test_drop_if_exists_takes_back_what_the_file_declared_before() -> None:
    dropped = schema("CREATE TABLE t (a int); COMMENT ON TABLE t IS 'x'; DROP TABLE IF EXISTS t;")
    assert dropped.tables == ()
    remade = schema("DROP TABLE IF EXISTS t; CREATE TABLE t (a int); DROP TABLE IF EXISTS u;")
    assert [t.name for t in remade.tables] == ["t"]


MARIADB_DUMP = """/*M!999999\\- enable the sandbox mode */
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8mb4 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
DROP TABLE IF EXISTS `v`;
/*!50001 DROP VIEW IF EXISTS `v`*/;
SET @saved_cs_client     = @@character_set_client;
SET character_set_client = utf8mb4;
/*!50001 CREATE VIEW `v` AS SELECT
 1 AS `a` */;
SET character_set_client = @saved_cs_client;
DROP TABLE IF EXISTS `t`;
CREATE TABLE `t` (
  `a` int(11) NOT NULL AUTO_INCREMENT,
  PRIMARY KEY (`a`)
) ENGINE=InnoDB AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
LOCK TABLES `t` WRITE;
/*!40000 ALTER TABLE `t` DISABLE KEYS */;
/*!40000 ALTER TABLE `t` ENABLE KEYS */;
UNLOCK TABLES;
/*!50001 DROP VIEW IF EXISTS `v`*/;
/*!50001 CREATE ALGORITHM=UNDEFINED */
/*!50013 DEFINER=`root`@`localhost` SQL SECURITY DEFINER */
/*!50001 VIEW `v` AS select `t`.`a` AS `a` from `t` */;
"""


def test_a_mariadb_dump_reads_its_executable_comments_and_takes_its_last_view() -> None:
    read = schema(MARIADB_DUMP, MY)
    assert [t.name for t in read.tables] == ["t"]
    assert (read.tables[0].engine, read.tables[0].collation) == ("InnoDB", "utf8mb4_general_ci")
    # The view in executable comments is read, not dropped as a comment; the placeholder
    # the dump makes first is taken back by its DROP VIEW IF EXISTS.
    assert [v.depends_on for v in read.views] == [("t",)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("/*!40101 SET SQL_MODE='ANSI_QUOTES' */;", "ANSI_QUOTES"),
        ("SET NAMES latin1;", "UTF-8"),
        ("CREATE ALGORITHM=MERGE VIEW v AS SELECT 1 AS a;", "ALGORITHM=MERGE"),
        ("CREATE SQL SECURITY INVOKER VIEW v AS SELECT 1 AS a;", "INVOKER"),
        (
            "CREATE TABLE t (a int);\nDELIMITER ;;\nCREATE DEFINER=`root`@`%` TRIGGER tr "
            "BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END;;\nDELIMITER ;\n",
            "triggers on MySQL/MariaDB",
        ),
        ("CREATE TABLE t (a int) PARTITION BY HASH (a) PARTITIONS 2;", "partition"),
        ("CREATE TABLE t (a int) ROW_FORMAT=COMPRESSED;", "ROW_FORMAT"),
        (
            "CREATE TABLE t (a int) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=utf8mb4_bin;",
            "not of character set",
        ),
        ("CREATE DATABASE d;", "databases"),
        ("CREATE TABLE t (a int, KEY i (a) COMMENT 'x');", "index comment"),
        ("CREATE TABLE t (a int, KEY i (a) INVISIBLE);", "invisible"),
    ],
)
def test_what_mariadb_cannot_plan_is_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(DesiredSchemaError, match=message):
        schema(text, MY)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("CREATE DOMAIN year AS integer; ALTER DOMAIN year SET DEFAULT 1;", "ALTER DOMAIN"),
        ("CREATE DOMAIN d AS int CHECK (VALUE > 0) NOT VALID;", "NOT VALID"),
        ("CREATE TABLE t (a int); CREATE POLICY p ON t USING (a > 0);", "policies"),
        ("CREATE TABLE t (a int); ALTER TABLE t ENABLE ROW LEVEL SECURITY;", "row-level security"),
        ('CREATE COLLATION c (locale = "C");', "collations"),
        ("CREATE TABLE p (a int) PARTITION BY RANGE (a);", r"partitioning \(PARTITION BY\)"),
        (
            "CREATE TABLE p (a int); CREATE TABLE c PARTITION OF p FOR VALUES FROM (1) TO (2);",
            "PARTITION OF",
        ),
        (
            "CREATE TABLE p (a int); CREATE TABLE c (a int); "
            "ALTER TABLE ONLY p ATTACH PARTITION c FOR VALUES FROM (1) TO (2);",
            "ATTACH PARTITION",
        ),
        ("CREATE TABLE p (a int); CREATE TABLE c (b int) INHERITS (p);", "inheritance"),
        ("CREATE TABLE t (a int, EXCLUDE USING gist (a WITH =));", "EXCLUDE"),
        ("CREATE AGGREGATE a (int) (SFUNC = int4pl, STYPE = int);", "aggregates"),
        ("CREATE TYPE pair AS (a int, b int);", "only enum types"),
        ("CREATE TABLE t (a int) WITH (fillfactor = 70);", "table option"),
        ("CREATE TABLE t (a int); CREATE INDEX i ON t (a) WITH (fillfactor = 70);", "storage"),
        ("CREATE TABLE t (a int); ALTER TABLE t ALTER COLUMN a SET STATISTICS 100;", "statistics"),
        ("CREATE TABLE t (a int); COMMENT ON INDEX i IS 'x';", "unknown index public.i"),
        ("COMMENT ON COLLATION c IS 'x';", "COMMENT ON COLLATION"),
        (
            "CREATE TABLE t (a int, CONSTRAINT f FOREIGN KEY (a) REFERENCES t (a) MATCH FULL);",
            "MATCH FULL",
        ),
        ("CREATE TABLE t (a int); ALTER TABLE t ADD CHECK (a > 0) NOT VALID;", "NOT VALID"),
        ("REVOKE USAGE ON SCHEMA public FROM PUBLIC;", "privileges on schemas"),
        ('CREATE TABLE t (a text); CREATE INDEX i ON t (a COLLATE "C");', "per-key collations"),
        (
            "CREATE TABLE t (a int); CREATE CONSTRAINT TRIGGER c AFTER INSERT ON t "
            "DEFERRABLE FOR EACH ROW EXECUTE FUNCTION f();",
            "constraint triggers",
        ),
        ("CREATE EXTENSION hstore CASCADE;", "CASCADE"),
        (
            "CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY (SEQUENCE NAME other));",
            "named other than",
        ),
    ],
)
def test_what_postgresql_cannot_plan_is_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(DesiredSchemaError, match=message):
        schema(text)


def test_a_pg_dump_serial_reads_as_serial_and_its_identity_as_identity() -> None:
    dumped = (
        "CREATE TABLE public.t (id integer NOT NULL, n bigint NOT NULL);\n"
        "CREATE SEQUENCE public.t_id_seq AS integer START WITH 1 INCREMENT BY 1 NO MINVALUE "
        "NO MAXVALUE CACHE 1;\n"
        "ALTER SEQUENCE public.t_id_seq OWNED BY public.t.id;\n"
        "ALTER TABLE public.t_id_seq OWNER TO app;\nALTER TABLE public.t OWNER TO app;\n"
        "ALTER TABLE ONLY public.t ALTER COLUMN id SET DEFAULT "
        "nextval('public.t_id_seq'::regclass);\n"
        "ALTER TABLE public.t ALTER COLUMN n ADD GENERATED BY DEFAULT AS IDENTITY (\n"
        "    SEQUENCE NAME public.t_n_seq START WITH 5 INCREMENT BY 1 NO MINVALUE NO MAXVALUE "
        "CACHE 1\n);\n"
        "ALTER TABLE ONLY public.t ADD CONSTRAINT t_pkey PRIMARY KEY (id);\n"
    )
    written = (
        "CREATE TABLE t (id serial, n bigint GENERATED BY DEFAULT AS IDENTITY (START 5), "
        "CONSTRAINT t_pkey PRIMARY KEY (id)); ALTER TABLE t OWNER TO app;"
    )
    assert schema(dumped) == schema(written)
    column = schema(written).tables[0].columns[1]
    assert column.identity_options == (5, 1, 1, 9223372036854775807, 1, False)


def test_a_pg_dump_clean_preamble_drops_nothing_but_a_drop_after_a_create_is_refused() -> None:
    clean = (
        "ALTER TABLE IF EXISTS ONLY public.t DROP CONSTRAINT IF EXISTS t_pkey;\n"
        "ALTER TABLE IF EXISTS public.t ALTER COLUMN id DROP DEFAULT;\n"
        "DROP INDEX IF EXISTS public.t_n;\nDROP TRIGGER IF EXISTS tr ON public.t;\n"
        "DROP FUNCTION IF EXISTS public.f();\nDROP SCHEMA IF EXISTS app;\n"
        "DROP TABLE IF EXISTS public.t;\n"
        "CREATE TABLE public.t (id integer NOT NULL, n integer);\n"
    )
    assert schema(clean) == schema("CREATE TABLE t (id int NOT NULL, n int);")
    with pytest.raises(DesiredSchemaError, match="INDEX dropped after"):
        schema("CREATE TABLE t (n int); CREATE INDEX t_n ON t (n); DROP INDEX IF EXISTS t_n;")
