"""Privilege changes on a real PostgreSQL: owners of tables, views, sequences, enum types and
functions, and security-definer functions. Each converges; each is classified `privilege`."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.severity import Severity

from .schema_roundtrip import apply_bytes, converge, execute, fingerprint, plan_for, write_desired

ROLES = tuple(
    f"DO $$BEGIN CREATE ROLE {role}; EXCEPTION WHEN duplicate_object THEN NULL; END$$"
    for role in ("ptah_owner", "ptah_other")
)

OWNERS_BEFORE = """
CREATE TYPE mood AS ENUM ('a', 'b');
CREATE TABLE t (id serial PRIMARY KEY, m mood, n int);
CREATE SEQUENCE loose;
CREATE VIEW v AS SELECT id, n FROM t;
ALTER TABLE t OWNER TO ptah_owner;
ALTER TYPE mood OWNER TO ptah_owner;
ALTER SEQUENCE loose OWNER TO ptah_owner;
ALTER VIEW v OWNER TO ptah_owner;
GRANT SELECT ON t TO ptah_other;
"""

# t and the enum change hands; v is made again (a column it reads is retyped) and keeps its
# named owner; a new sequence is owned by a column of t, so it first takes t's owner.
OWNERS_AFTER = """
CREATE TYPE mood AS ENUM ('a', 'b');
CREATE TABLE t (id serial PRIMARY KEY, m mood, n bigint, k bigint);
CREATE SEQUENCE loose;
CREATE SEQUENCE k_seq OWNED BY t.k;
CREATE VIEW v AS SELECT id, n FROM t;
ALTER TABLE t OWNER TO ptah_other;
ALTER TYPE mood OWNER TO ptah_other;
ALTER SEQUENCE loose OWNER TO ptah_owner;
ALTER VIEW v OWNER TO ptah_owner;
GRANT SELECT ON t TO ptah_owner, ptah_other;
"""

OWNERS_SQL = """
SELECT c.relname, pg_get_userbyid(c.relowner) FROM pg_class c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v', 'S')
UNION ALL
SELECT t.typname, pg_get_userbyid(t.typowner) FROM pg_type t
WHERE t.typnamespace = 'public'::regnamespace AND t.typtype = 'e'
ORDER BY 1
"""


async def _owners(url: str) -> dict[str, str]:
    conn = await asyncpg.connect(url)
    try:
        return dict(await conn.fetch(OWNERS_SQL))
    finally:
        await conn.close()


@pytest.mark.req("SCH-58")
async def test_postgresql_owners_converge_and_are_privilege_changes(
    pg_url: str, tmp_path: Path
) -> None:
    await execute(pg_url, *ROLES)
    first = await converge(pg_url, tmp_path, OWNERS_BEFORE)
    owner_statements = [s for s in first.statements if s.category == "owners_changed"]
    assert len(owner_statements) == 4
    assert all(s.severity is Severity.PRIVILEGE for s in owner_statements)
    assert await _owners(pg_url) == {
        "loose": "ptah_owner",
        "mood": "ptah_owner",
        "t": "ptah_owner",
        "t_id_seq": "ptah_owner",
        "v": "ptah_owner",
    }
    second = await converge(pg_url, tmp_path, OWNERS_AFTER)
    owners = [s.sql for s in second.statements if s.category == "owners_changed"]
    assert owners == [
        'ALTER TYPE "public"."mood" OWNER TO "ptah_other"',
        'ALTER TABLE "public"."t" OWNER TO "ptah_other"',
        'ALTER SEQUENCE "public"."k_seq" OWNER TO "ptah_other"',
        'ALTER VIEW "public"."v" OWNER TO "ptah_owner"',
    ]
    assert await _owners(pg_url) == {
        "k_seq": "ptah_other",
        "loose": "ptah_owner",
        "mood": "ptah_other",
        "t": "ptah_other",
        "t_id_seq": "ptah_other",
        "v": "ptah_owner",
    }
    # The new owner's grant is implied by ownership: nothing is left to plan.
    again = await plan_for(pg_url, write_desired(tmp_path, OWNERS_AFTER))
    assert again.statements == []


async def test_postgresql_an_owner_the_desired_schema_does_not_name_is_left_alone(
    pg_url: str, tmp_path: Path
) -> None:
    await execute(pg_url, *ROLES)
    await converge(pg_url, tmp_path, OWNERS_BEFORE)
    unnamed = "\n".join(line for line in OWNERS_BEFORE.splitlines() if "OWNER" not in line)
    assert (await plan_for(pg_url, write_desired(tmp_path, unnamed))).statements == []


OWNERS_HCL = """
schema "public" {}
enum "mood" {
  schema = schema.public
  values = ["a", "b"]
  owner  = "ptah_owner"
}
table "t" {
  schema = schema.public
  owner  = "ptah_owner"
  column "id" { type = serial }
  column "m" { type = enum.mood }
  column "n" { type = int }
  primary_key { columns = [column.id] }
  grant {
    to         = "ptah_other"
    privileges = [SELECT]
  }
}
sequence "loose" {
  schema = schema.public
  owner  = "ptah_owner"
}
view "v" {
  schema = schema.public
  owner  = "ptah_owner"
  as     = "SELECT id, n FROM t"
}
"""


async def test_postgresql_owners_from_hcl_match_the_same_schema_in_sql(
    pg_url: str, tmp_path: Path
) -> None:
    await execute(pg_url, *ROLES)
    await converge(pg_url, tmp_path, OWNERS_HCL, suffix=".hcl")
    assert (await plan_for(pg_url, write_desired(tmp_path, OWNERS_BEFORE))).statements == []


FUNCTIONS_BEFORE = """
CREATE TYPE mood AS ENUM ('a', 'b');
CREATE TABLE users (id int PRIMARY KEY, name text, code text DEFAULT next_code('u'));
CREATE FUNCTION next_code(prefix text) RETURNS text LANGUAGE sql VOLATILE
  AS $$ SELECT prefix || nextval('codes')::text $$;
CREATE SEQUENCE codes;
CREATE FUNCTION user_name(uid int, fallback text DEFAULT 'nobody', m mood DEFAULT 'a')
  RETURNS text LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER SET search_path = public, pg_temp
  AS $body$
BEGIN
  RETURN coalesce((SELECT name FROM users WHERE id = uid), fallback); -- it's fine
END;
$body$;
CREATE FUNCTION all_users() RETURNS SETOF users LANGUAGE sql STABLE PARALLEL SAFE ROWS 50
  AS 'SELECT * FROM users WHERE name <> ''''';
CREATE FUNCTION pairs(VARIADIC ks text[]) RETURNS TABLE (k text, n double precision)
  LANGUAGE sql IMMUTABLE COST 10 AS $$ SELECT k, 1.5 FROM unnest(ks) k $$;
CREATE FUNCTION gone(a int, OUT b int, OUT c text) LANGUAGE sql AS $$ SELECT a, 'x' $$;
ALTER FUNCTION user_name(int, text, mood) OWNER TO ptah_owner;
GRANT SELECT ON users TO ptah_owner, ptah_other;
"""

FUNCTIONS_AFTER = """
CREATE TYPE mood AS ENUM ('a', 'b');
CREATE TABLE users (id int PRIMARY KEY, name text, code text DEFAULT next_code('u'));
CREATE FUNCTION next_code(prefix text) RETURNS text LANGUAGE sql VOLATILE
  AS $$ SELECT upper(prefix) || nextval('codes')::text $$;
CREATE SEQUENCE codes;
CREATE FUNCTION user_name(uid int, fallback text DEFAULT 'nobody', m mood DEFAULT 'a')
  RETURNS text LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER SET search_path = public, pg_temp
  AS $body$
BEGIN
  RETURN coalesce((SELECT name FROM users WHERE id = uid), fallback);
END;
$body$;
CREATE FUNCTION all_users() RETURNS SETOF users LANGUAGE sql STABLE PARALLEL SAFE ROWS 50
  AS 'SELECT * FROM users WHERE name <> ''''';
CREATE FUNCTION pairs(VARIADIC ks text[]) RETURNS TABLE (key text, n double precision)
  LANGUAGE sql IMMUTABLE COST 10 AS $$ SELECT k, 1.5 FROM unnest(ks) k $$;
ALTER FUNCTION user_name(int, text, mood) OWNER TO ptah_other;
GRANT SELECT ON users TO ptah_owner, ptah_other;
"""


@pytest.mark.req("SCH-58")
async def test_postgresql_functions_converge(pg_url: str, tmp_path: Path) -> None:
    await execute(pg_url, *ROLES)
    first = await converge(pg_url, tmp_path, FUNCTIONS_BEFORE)
    added = {
        s.reason.split(";")[0]: s.severity for s in first.statements if "function" in s.category
    }
    assert added["create function public.user_name(integer, text, public.mood)"] is (
        Severity.PRIVILEGE
    )
    assert added["create function public.next_code(text)"] is Severity.SAFE
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute("INSERT INTO users (id, name) VALUES (1, 'ann')")
        assert await conn.fetchval("SELECT user_name(1)") == "ann"
        assert await conn.fetchval("SELECT code FROM users") == "u1"
    finally:
        await conn.close()
    second = await converge(pg_url, tmp_path, FUNCTIONS_AFTER)
    changes = [(s.category, s.severity, s.sql.split("(")[0]) for s in second.statements]
    assert changes == [
        ("functions_changed", Severity.WARNING, 'CREATE OR REPLACE FUNCTION "public"."next_code"'),
        ("functions_changed", Severity.WARNING, 'DROP FUNCTION "public"."pairs"'),
        ("functions_changed", Severity.WARNING, 'CREATE FUNCTION "public"."pairs"'),
        (
            "functions_changed",
            Severity.PRIVILEGE,
            'CREATE OR REPLACE FUNCTION "public"."user_name"',
        ),
        ("owners_changed", Severity.PRIVILEGE, 'ALTER FUNCTION "public"."user_name"'),
        ("functions_removed", Severity.DESTRUCTIVE, 'DROP FUNCTION "public"."gone"'),
    ]
    again = await plan_for(pg_url, write_desired(tmp_path, FUNCTIONS_AFTER))
    assert again.statements == []


async def test_postgresql_a_security_definer_function_needs_approval_and_a_drop_permission(
    pg_url: str, tmp_path: Path
) -> None:
    await converge(pg_url, tmp_path, "CREATE TABLE t (id int PRIMARY KEY);")
    definer = (
        "CREATE TABLE t (id int PRIMARY KEY); CREATE FUNCTION f() RETURNS int LANGUAGE sql "
        "SECURITY DEFINER AS $$ SELECT count(*)::int FROM t $$;"
    )
    planned = await plan_for(pg_url, write_desired(tmp_path, definer))
    document_summary = [(s.category, s.severity) for s in planned.statements]
    assert document_summary == [("functions_added", Severity.PRIVILEGE)]
    assert b'"highestSeverity": "privilege"' in planned.plan_bytes
    await converge(pg_url, tmp_path, definer)
    # Dropping it is destructive: refused without permission, and nothing changes.
    before = await fingerprint(pg_url)
    drop = await plan_for(pg_url, write_desired(tmp_path, "CREATE TABLE t (id int PRIMARY KEY);"))
    result = await apply_bytes(pg_url, drop.plan_bytes, policy=Policy())
    assert (result.outcome, result.reason) == ("refused", "PolicyRefused")
    assert await fingerprint(pg_url) == before


async def test_postgresql_function_plans_are_identical_across_runs(
    pg_url: str, tmp_path: Path
) -> None:
    await execute(pg_url, *ROLES)
    await converge(pg_url, tmp_path, FUNCTIONS_BEFORE)
    desired = write_desired(tmp_path, FUNCTIONS_AFTER)
    first, second = await plan_for(pg_url, desired), await plan_for(pg_url, desired)
    assert first.plan_bytes == second.plan_bytes
    # The plan carries the body for the function it replaces; the drift report, no SQL.
    assert b"upper(prefix)" in first.plan_bytes
