"""Read a PostgreSQL database into the model: eleven set-based catalog queries, read-only.

Everything runs in one READ ONLY, REPEATABLE READ transaction so the queries see one snapshot;
the constraints and the indexes are prepared, then sent before the Python work on the read
before each (`ahead`).
Only relations the login can use (any table privilege, or membership of the owner role) in
schemas it may use are reported: "what the login can see". Objects that belong to an
extension are the extension's, and left out.

A sequence owned by a column whose default draws from it, named as `serial` names it
(`table_column_seq`), is that column's `serial`; any other sequence is a sequence of its own.
"""

from __future__ import annotations

import dataclasses
import operator
from collections import defaultdict
from typing import Any, NamedTuple

from ptah_operator.engine.schema import collector
from ptah_operator.engine.schema.ahead import meanwhile
from ptah_operator.engine.schema.functions import catalog_function, tokenize
from ptah_operator.engine.schema.model import (
    Check,
    Column,
    Dialect,
    Domain,
    EnumType,
    Extension,
    ForeignKey,
    Function,
    Grant,
    Index,
    PrimaryKey,
    Schema,
    Sequence,
    Table,
    Trigger,
    UniqueConstraint,
    View,
    canonical_collections,
    canonical_schema,
)
from ptah_operator.engine.schema.normalize import (
    READ_FAILURES,
    identity_options,
    index_key_options,
    index_key_options_tuple,
    is_serial_sequence,
    normalize_default,
    normalize_expression,
    normalize_index_key,
    normalize_type,
    read_failure,
    reading,
    table_privileges,
)
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.triggers import TriggerError, read_trigger
from ptah_operator.engine.schema.views import server_definition

_D = Dialect.POSTGRESQL

_SCHEMAS = """
SELECT n.nspname, pg_get_userbyid(n.nspowner), ds.description FROM pg_namespace n
LEFT JOIN pg_description ds ON ds.objoid = n.oid AND ds.classoid = 'pg_namespace'::regclass
WHERE n.nspname = ANY($1::text[]) AND has_schema_privilege(n.oid, 'USAGE')
"""

_EXTENSIONS = """
SELECT e.extname, n.nspname, ds.description FROM pg_extension e
JOIN pg_namespace n ON n.oid = e.extnamespace
LEFT JOIN pg_description ds ON ds.objoid = e.oid AND ds.classoid = 'pg_extension'::regclass
WHERE n.nspname = ANY($1::text[])
"""

# What a schema in scope holds that the engine does not model, one row per object: (kind,
# qualified name). Extensions' members are theirs, and left out.
_UNMANAGED = """
SELECT k, q FROM (
  SELECT CASE t.typtype WHEN 'r' THEN 'range type'
              WHEN 'b' THEN 'base type' ELSE 'composite type' END AS k,
         n.nspname || '.' || t.typname AS q, t.oid AS o, 'pg_type'::regclass AS c
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname = ANY($1::text[]) AND t.typcategory <> 'A'
    AND (t.typtype IN ('r', 'b')
         OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
  UNION ALL
  SELECT 'collation', n.nspname || '.' || co.collname, co.oid, 'pg_collation'::regclass
  FROM pg_collation co JOIN pg_namespace n ON n.oid = co.collnamespace
  WHERE n.nspname = ANY($1::text[])
  UNION ALL
  SELECT CASE p.prokind WHEN 'a' THEN 'aggregate' WHEN 'p' THEN 'procedure'
              WHEN 'w' THEN 'window function' ELSE 'function in language ' || l.lanname END,
         n.nspname || '.' || p.proname, p.oid, 'pg_proc'::regclass
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_language l ON l.oid = p.prolang
  WHERE n.nspname = ANY($1::text[]) AND (p.prokind <> 'f' OR l.lanname IN ('c', 'internal'))
  UNION ALL
  SELECT CASE c.relkind WHEN 'f' THEN 'foreign table' END, n.nspname || '.' || c.relname,
         c.oid, 'pg_class'::regclass
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = ANY($1::text[]) AND c.relkind = 'f'
  UNION ALL
  SELECT 'operator', n.nspname || '.' || o.oprname, o.oid, 'pg_operator'::regclass
  FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace
  WHERE n.nspname = ANY($1::text[])
  UNION ALL
  SELECT 'text search configuration', n.nspname || '.' || f.cfgname, f.oid,
         'pg_ts_config'::regclass
  FROM pg_ts_config f JOIN pg_namespace n ON n.oid = f.cfgnamespace
  WHERE n.nspname = ANY($1::text[])
  UNION ALL
  SELECT 'statistics object', n.nspname || '.' || x.stxname, x.oid, 'pg_statistic_ext'::regclass
  FROM pg_statistic_ext x JOIN pg_namespace n ON n.oid = x.stxnamespace
  WHERE n.nspname = ANY($1::text[])
  UNION ALL
  SELECT 'row-level security policy ' || p.polname || ' on table',
         n.nspname || '.' || c.relname, p.oid, 'pg_policy'::regclass
  FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE p.polrelid = ANY($2::oid[])
  UNION ALL
  SELECT 'rule ' || r.rulename || ' on table', n.nspname || '.' || c.relname, r.oid,
         'pg_rewrite'::regclass
  FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE r.ev_class = ANY($2::oid[]) AND r.rulename <> '_RETURN'
) found
WHERE NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = found.c AND e.objid = found.o
                  AND e.deptype IN ('e', 'i'))
"""

# Domains: the base type named as a column's is (an enum or domain schema-qualified), the
# default and checks as the catalog prints them, each check's name and whether it is valid.
_DOMAINS = """
SELECT n.nspname, t.typname,
       CASE WHEN bt.typtype IN ('e', 'd')
            THEN quote_ident(bn.nspname) || '.' || quote_ident(bt.typname)
            ELSE format_type(t.typbasetype, t.typtypmod) END,
       t.typnotnull, pg_get_expr(t.typdefaultbin, 0),
       CASE WHEN t.typcollation <> bt.typcollation THEN co.collname END,
       pg_get_userbyid(t.typowner), obj_description(t.oid, 'pg_type'),
       ARRAY(SELECT ARRAY[c.conname, pg_get_expr(c.conbin, 0), c.convalidated::text]
             FROM pg_constraint c WHERE c.contypid = t.oid AND c.contype = 'c'
             ORDER BY c.conname)
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
JOIN pg_type bt ON bt.oid = t.typbasetype
JOIN pg_namespace bn ON bn.oid = bt.typnamespace
LEFT JOIN pg_collation co ON co.oid = t.typcollation
WHERE t.typtype = 'd' AND n.nspname = ANY($1::text[])
  AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_type'::regclass
                  AND e.objid = t.oid AND e.deptype = 'e')
"""

# Which kinds of object the schemas in scope (and, for triggers, the tables read) hold at all,
# in the order of `_Present`'s fields. The read of a kind there is none of is left out: each
# read is a statement the server plans and, on a new session, catalogs it loads first, and
# most databases hold no domains, extensions or triggers. Each condition is looser than the
# read it stands for (the reads add privileges, extension membership, scope), so a kind is
# read whenever that read could find a row.
_PRESENT = """
SELECT
  EXISTS (SELECT FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
          WHERE t.typtype = 'e' AND n.nspname = ANY($1::text[])),
  EXISTS (SELECT FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
          WHERE t.typtype = 'd' AND n.nspname = ANY($1::text[])),
  EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind = 'S' AND n.nspname = ANY($1::text[])),
  EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('v', 'm') AND n.nspname = ANY($1::text[])),
  EXISTS (SELECT FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
          WHERE n.nspname = ANY($1::text[])),
  EXISTS (SELECT FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE p.prokind = 'f' AND n.nspname = ANY($1::text[])),
  EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = ANY($2::oid[]) AND NOT t.tgisinternal)
"""


class _Present(NamedTuple):
    """What `_PRESENT` found: whether each kind's read can find anything."""

    enums: bool
    domains: bool
    sequences: bool
    views: bool
    extensions: bool
    functions: bool
    triggers: bool


async def _rows_if(present: bool, conn: Any, query: str, *args: Any) -> list[Any]:
    """The rows of `query`, or none without asking when `present` says it can find none."""
    return list(await conn.fetch(query, *args)) if present else []


# What the bit masks of the queries above say the engine does not model.
_TABLE_FLAGS = (
    (1, "declarative partitioning (PARTITION BY)"),
    (2, "a partition (PARTITION OF)"),
    (4, "row-level security"),
    (8, "storage parameters (WITH (...))"),
    (16, "an unlogged table"),
    (32, "a tablespace"),
    (64, "a replica identity"),
    (128, "a typed table (OF type)"),
)
_COLUMN_FLAGS = (
    (1, "a statistics target"),
    (2, "a storage mode (SET STORAGE)"),
    (4, "a compression method"),
    (8, "column options (SET (...))"),
    (16, "column privileges"),
)
_CONSTRAINT_FLAGS = (
    (1, "an EXCLUDE constraint"),
    (2, "a NOT VALID constraint"),
    (4, "a NO INHERIT check"),
    (8, "a foreign key MATCH FULL"),
    (16, "index storage parameters or a tablespace"),
    (32, "a comment on its index (comment the constraint)"),
)
_INDEX_FLAGS = (
    (1, "storage parameters (WITH (...))"),
    (2, "a tablespace"),
    (4, "an invalid index (a failed CREATE INDEX CONCURRENTLY)"),
)

# The children of the tables read that have some (inheritance or partitions).
_INHERITS = """
SELECT i.inhparent, i.inhrelid, cn.nspname || '.' || c.relname, c.relispartition
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
WHERE i.inhparent = ANY($1::oid[])
"""


def _flags(mask: int, meanings: tuple[tuple[int, str], ...]) -> list[str]:
    return [what for bit, what in meanings if mask & bit]


# Identity columns' sequences: the options a column's identity holds, and the sequence's name.
_IDENTITIES = """
SELECT d.refobjid, d.refobjsubid, s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache,
       s.seqcycle, c.relname
FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid JOIN pg_class c ON c.oid = d.objid
WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
  AND d.deptype = 'i' AND d.refobjid = ANY($1::oid[])
"""

# Triggers, read (with `pg_get_triggerdef`) with search_path at pg_catalog; `tgenabled` 'O'
# is the default (fires unless replication role says otherwise).
_TRIGGERS = """
SELECT t.tgrelid, t.tgname, pg_get_triggerdef(t.oid), t.tgenabled::text, t.tgconstraint <> 0,
       (SELECT d.description FROM pg_description d WHERE d.objoid = t.oid
          AND d.classoid = 'pg_trigger'::regclass)
FROM pg_trigger t WHERE t.tgrelid = ANY($1::oid[]) AND NOT t.tgisinternal
"""

# Besides each table's name, comment and owner: what it is or holds that the engine does not
# model (partitioning, inheritance, row-level security, storage options, ...), reported
# as `unmanaged` rather than left out.
_TABLES = """
SELECT c.oid, n.nspname, c.relname, ds.description, pg_get_userbyid(c.relowner),
       (CASE WHEN c.relkind = 'p' THEN 1 ELSE 0 END)
       | (CASE WHEN c.relispartition THEN 2 ELSE 0 END)
       | (CASE WHEN c.relrowsecurity OR c.relforcerowsecurity THEN 4 ELSE 0 END)
       | (CASE WHEN c.reloptions IS NOT NULL THEN 8 ELSE 0 END)
       | (CASE WHEN c.relpersistence = 'u' THEN 16 ELSE 0 END)
       | (CASE WHEN c.reltablespace <> 0 THEN 32 ELSE 0 END)
       | (CASE WHEN c.relreplident <> 'd' THEN 64 ELSE 0 END)
       | (CASE WHEN c.reloftype <> 0 THEN 128 ELSE 0 END)
       | (CASE WHEN c.relhassubclass THEN 256 ELSE 0 END)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_description ds
       ON ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid = 0
WHERE c.relkind IN ('r', 'p')
  AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_class'::regclass
                  AND e.objid = c.oid AND e.deptype = 'e')
  AND n.nspname = ANY($1::text[])
  AND has_schema_privilege(n.oid, 'USAGE')
  AND (pg_has_role(c.relowner, 'USAGE')
       OR has_table_privilege(c.oid, 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER'))
"""

# An enum type, or an array of one, is named schema-qualified whatever the search_path, so
# that both sides of a comparison spell it the same way (an array's element is looked up only
# for a column whose element is in the set of enum types, which the server reads once: joined
# for every column, it costs half the query). Comments and owned sequences come from joins, never
# from a function or subquery per row: `col_description()` and a correlated `pg_depend`
# lookup per column cost more than everything else together on a thousand tables.
# A default is printed without its table (`pg_get_expr(adbin, 0)`): a default may not name a
# column, and naming the table makes the server open every table that has one (a third of
# the query on a thousand tables, each time a session first reads them); a generated
# column's expression names columns, and is printed with its table. The rows come unordered
# and are put in order here: sorted by the server, they are wide enough to spill to disk.
_COLUMNS = """
SELECT a.attrelid, a.attnum, a.attname,
       CASE WHEN t.typtype IN ('e', 'd')
            THEN quote_ident(tn.nspname) || '.' || quote_ident(t.typname)
            WHEN t.typelem <> 0
                 AND t.typelem IN (SELECT oid FROM pg_type WHERE typtype IN ('e', 'd'))
            THEN (SELECT quote_ident(en.nspname) || '.' || quote_ident(e.typname) || '[]'
                  FROM pg_type e JOIN pg_namespace en ON en.oid = e.typnamespace
                  WHERE e.oid = t.typelem)
            ELSE format_type(a.atttypid, a.atttypmod) END,
       a.attnotnull,
       CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, 0) END,
       a.attidentity::text,
       CASE WHEN a.attgenerated <> '' THEN pg_get_expr(d.adbin, d.adrelid) END,
       CASE WHEN a.attcollation <> t.typcollation THEN co.collname END,
       ds.description,
       owned.relname,
       d.adbin IS NOT NULL AND owned.seq IS NOT NULL
         AND pg_get_expr(d.adbin, 0) = format('nextval(%L::regclass)', owned.seq::regclass),
       (CASE WHEN COALESCE(a.attstattarget, -1) <> -1 THEN 1 ELSE 0 END)
       | (CASE WHEN a.attstorage <> t.typstorage THEN 2 ELSE 0 END)
       | (CASE WHEN a.attcompression::text <> '' THEN 4 ELSE 0 END)
       | (CASE WHEN a.attoptions IS NOT NULL THEN 8 ELSE 0 END)
       | (CASE WHEN a.attacl IS NOT NULL THEN 16 ELSE 0 END),
       a.attcollation
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_namespace tn ON tn.oid = t.typnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
LEFT JOIN pg_collation co ON co.oid = a.attcollation
LEFT JOIN pg_description ds
       ON ds.objoid = a.attrelid AND ds.classoid = 'pg_class'::regclass
      AND ds.objsubid = a.attnum
LEFT JOIN (SELECT DISTINCT ON (dep.refobjid, dep.refobjsubid)
                  dep.refobjid, dep.refobjsubid, s.oid AS seq, s.relname
           FROM pg_depend dep JOIN pg_class s ON s.oid = dep.objid AND s.relkind = 'S'
           WHERE dep.classid = 'pg_class'::regclass AND dep.refclassid = 'pg_class'::regclass
             AND dep.deptype = 'a'
           ORDER BY dep.refobjid, dep.refobjsubid, s.oid) owned
       ON owned.refobjid = a.attrelid AND owned.refobjsubid = a.attnum
WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
"""

# Key columns come back as attribute numbers, named from the column rows already read: an
# ARRAY subquery per constraint or index costs several times the rest of the query.
# `{nulls}` is `indnullsnotdistinct` on PostgreSQL 15 and later, false before.
_CONSTRAINTS = """
SELECT c.conrelid, c.conname, c.contype::text, c.conkey, fn.nspname, fc.relname,
       c.confrelid, c.confkey, c.confupdtype::text, c.confdeltype::text,
       CASE WHEN c.contype = 'c' THEN pg_get_expr(c.conbin, c.conrelid) END,
       c.condeferrable, c.condeferred, {nulls}, cd.description,
       (CASE WHEN c.contype = 'x' THEN 1 ELSE 0 END)
       | (CASE WHEN NOT c.convalidated THEN 2 ELSE 0 END)
       | (CASE WHEN c.contype = 'c' AND c.connoinherit THEN 4 ELSE 0 END)
       | (CASE WHEN c.contype = 'f' AND c.confmatchtype <> 's' THEN 8 ELSE 0 END)
       | (CASE WHEN ic.reloptions IS NOT NULL OR ic.reltablespace <> 0 THEN 16 ELSE 0 END)
       | (CASE WHEN id.description IS NOT NULL THEN 32 ELSE 0 END)
FROM pg_constraint c
LEFT JOIN pg_class fc ON fc.oid = c.confrelid
LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
LEFT JOIN pg_index i ON i.indexrelid = c.conindid AND c.contype IN ('p', 'u')
LEFT JOIN pg_class ic ON ic.oid = c.conindid AND c.contype IN ('p', 'u', 'x')
LEFT JOIN pg_description cd ON cd.objoid = c.oid AND cd.classoid = 'pg_constraint'::regclass
LEFT JOIN pg_description id ON id.objoid = c.conindid AND id.classoid = 'pg_class'::regclass
      AND id.objsubid = 0 AND c.contype IN ('p', 'u')
WHERE c.conrelid = ANY($1::oid[]) AND c.contype IN ('p', 'u', 'f', 'c', 'x')
  AND c.conparentid = 0
"""

# Indexes that back a primary key, unique or exclusion constraint are those constraints.
# `pg_get_indexdef` runs only for an index with an expression key (attribute number 0).
_INDEXES = """
SELECT i.indrelid, ic.relname, i.indisunique, i.indnkeyatts, i.indkey::int2[],
       CASE WHEN 0 = ANY (i.indkey::int2[])
            THEN ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true)
                       FROM generate_series(1, i.indnatts) k ORDER BY k) END,
       pg_get_expr(i.indpred, i.indrelid), am.amname, i.indclass::oid[], i.indoption::int2[],
       {nulls}, ds.description,
       (CASE WHEN ic.reloptions IS NOT NULL THEN 1 ELSE 0 END)
       | (CASE WHEN ic.reltablespace <> 0 THEN 2 ELSE 0 END)
       | (CASE WHEN NOT i.indisvalid THEN 4 ELSE 0 END),
       i.indcollation::oid[]
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_am am ON am.oid = ic.relam
LEFT JOIN pg_description ds
       ON ds.objoid = i.indexrelid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid = 0
WHERE i.indrelid = ANY($1::oid[])
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c
                  WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u', 'x'))
"""

# Operator classes an index key names only when it is not its type's default: a small
# catalog read whole rather than joined per key.
_OPCLASSES = "SELECT oid, opcname FROM pg_opclass WHERE NOT opcdefault"

# Column names of tables a foreign key references outside the tables read (another schema,
# or a table the scope leaves out).
_REFERENCED_COLUMNS = """
SELECT a.attrelid, a.attnum, a.attname FROM pg_attribute a
WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0
"""

_ENUMS = """
SELECT n.nspname, t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder),
       pg_get_userbyid(t.typowner), obj_description(t.oid, 'pg_type')
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
JOIN pg_enum e ON e.enumtypid = t.oid
WHERE n.nspname = ANY($1::text[])
GROUP BY n.nspname, t.typname, t.typowner, t.oid
"""

# Sequences of their own: not an identity column's (dependency `i`); a serial's are told
# apart in Python by their name (see `is_serial_sequence`).
_SEQUENCES = """
SELECT n.nspname, c.relname, format_type(s.seqtypid, NULL), s.seqstart, s.seqincrement,
       s.seqmin, s.seqmax, s.seqcache, s.seqcycle, oc.relname, oa.attname,
       od.adbin IS NOT NULL
         AND pg_get_expr(od.adbin, od.adrelid) = format('nextval(%L::regclass)', c.oid::regclass),
       pg_get_userbyid(c.relowner), obj_description(c.oid, 'pg_class')
FROM pg_sequence s
JOIN pg_class c ON c.oid = s.seqrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_depend dep
       ON dep.classid = 'pg_class'::regclass AND dep.objid = c.oid
      AND dep.refclassid = 'pg_class'::regclass AND dep.refobjsubid > 0
      AND dep.deptype IN ('a', 'i')
LEFT JOIN pg_class oc ON oc.oid = dep.refobjid
LEFT JOIN pg_attribute oa ON oa.attrelid = dep.refobjid AND oa.attnum = dep.refobjsubid
LEFT JOIN pg_attrdef od ON od.adrelid = dep.refobjid AND od.adnum = dep.refobjsubid
WHERE n.nspname = ANY($1::text[]) AND has_schema_privilege(n.oid, 'USAGE')
  AND dep.deptype IS DISTINCT FROM 'i'
  AND (pg_has_role(c.relowner, 'USAGE') OR has_sequence_privilege(c.oid, 'SELECT,UPDATE,USAGE'))
  AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_class'::regclass
                  AND e.objid = c.oid AND e.deptype = 'e')
"""

# Views and materialized views. What one reads comes from its rewrite rule's dependencies: the
# relations PostgreSQL will not let change under it.
_VIEWS = """
SELECT n.nspname, c.relname, pg_get_viewdef(c.oid, true),
       ARRAY(SELECT ARRAY[a.attname::text, format_type(a.atttypid, a.atttypmod)]
             FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0
             ORDER BY a.attnum),
       ARRAY(SELECT DISTINCT dn.nspname || '.' || d.relname
             FROM pg_rewrite r
             JOIN pg_depend dep ON dep.classid = 'pg_rewrite'::regclass AND dep.objid = r.oid
                               AND dep.refclassid = 'pg_class'::regclass
             JOIN pg_class d ON d.oid = dep.refobjid
             JOIN pg_namespace dn ON dn.oid = d.relnamespace
             WHERE r.ev_class = c.oid AND d.oid <> c.oid),
       pg_get_userbyid(c.relowner), c.relkind = 'm', c.reloptions IS NOT NULL, ds.description
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_description ds
       ON ds.objoid = c.oid AND ds.classoid = 'pg_class'::regclass AND ds.objsubid = 0
WHERE c.relkind IN ('v', 'm') AND n.nspname = ANY($1::text[]) AND has_schema_privilege(n.oid, 'USAGE')
  AND (pg_has_role(c.relowner, 'USAGE')
       OR has_table_privilege(c.oid, 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER'))
  AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_class'::regclass
                  AND e.objid = c.oid AND e.deptype = 'e')
"""

# Table privileges held by anyone but the owner (who holds them all without a grant).
_GRANTS = """
SELECT c.oid, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE r.rolname END,
       a.privilege_type, a.is_grantable
FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
LEFT JOIN pg_roles r ON r.oid = a.grantee
WHERE c.oid = ANY($1::oid[]) AND a.grantee <> c.relowner
"""

# Functions (not procedures, aggregates or window functions) the login may run or owns, less
# an extension's and those a type made for itself (a range type's constructors). Read with
# `search_path` at `pg_catalog`, so that every user-defined type prints schema-qualified. The
# body leaves the database only to be hashed (see `functions`).
_FUNCTIONS = """
SELECT n.nspname, p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
       l.lanname, CASE WHEN p.prosqlbody IS NULL THEN p.prosrc
                       ELSE pg_get_function_sqlbody(p.oid) END,
       p.provolatile::text, p.proisstrict, p.prosecdef, p.proleakproof, p.proparallel::text,
       p.procost, p.prorows, p.proconfig, pg_get_userbyid(p.proowner),
       (SELECT d.description FROM pg_description d WHERE d.objoid = p.oid
          AND d.classoid = 'pg_proc'::regclass)
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang
WHERE p.prokind = 'f' AND n.nspname = ANY($1::text[]) AND has_schema_privilege(n.oid, 'USAGE')
  AND (pg_has_role(p.proowner, 'USAGE') OR has_function_privilege(p.oid, 'EXECUTE'))
  AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_proc'::regclass
                  AND e.objid = p.oid AND e.deptype IN ('e', 'i'))
"""

# Column rows in the order of their tables and, within one, of their attribute numbers.
_BY_TABLE_AND_NUMBER = operator.itemgetter(0, 1)

_ACTIONS = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}
_IDENTITY = {"a": "always", "d": "by default"}


async def inspect_postgresql(conn: Any, scope: Scope, *, own_transaction: bool = True) -> Schema:
    """The model of what `conn` sees within `scope`.

    With `own_transaction` (the default) the reads run in their own read-only transaction;
    Apply passes False to read inside the transaction it is about to change. The collector
    is paused meanwhile (`collector`).
    """
    with collector.paused():
        if own_transaction:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                return await _inspect(conn, scope)
        return await _inspect(conn, scope)


async def _inspect(conn: Any, scope: Scope) -> Schema:
    schema_names = list(scope.schemas)
    nulls = "i.indnullsnotdistinct" if conn.get_server_version() >= (15,) else "false"
    schema_rows = await conn.fetch(_SCHEMAS, schema_names)
    schemas = [r[0] for r in schema_rows]
    schema_owners = [(r[0], r[1]) for r in schema_rows]
    schema_comments = [(r[0], r[2]) for r in schema_rows if r[2]]
    unmanaged: list[str] = []
    table_rows = [
        r for r in await conn.fetch(_TABLES, schema_names) if scope.admits_table(_D, r[1], r[2])
    ]
    oids = [r[0] for r in table_rows]
    table_names = {r[0]: r[2] for r in table_rows}
    qualified = {r[0]: f"{r[1]}.{r[2]}" for r in table_rows}
    for row in table_rows:
        if row[5]:
            unmanaged += [
                f"table {qualified[row[0]]}: {what}" for what in _flags(row[5], _TABLE_FLAGS)
            ]
    parents = [r[0] for r in table_rows if r[5] & 256]
    if parents:
        for parent, child, child_name, partition in await conn.fetch(_INHERITS, parents):
            if partition:
                continue  # the parent is partitioned, and the partition says so itself
            unmanaged.append(
                f"table {qualified[parent]}: table inheritance (a parent of {child_name})"
            )
            if child in qualified:
                unmanaged.append(
                    f"table {qualified[child]}: table inheritance (INHERITS {qualified[parent]})"
                )
    column_rows = sorted(await conn.fetch(_COLUMNS, oids), key=_BY_TABLE_AND_NUMBER)
    identities: dict[tuple[int, int], tuple[Any, ...]] = {}
    if any(r[6] in _IDENTITY for r in column_rows):
        identities = {(r[0], r[1]): tuple(r[2:]) for r in await conn.fetch(_IDENTITIES, oids)}
    # The server reads the constraints while Python reads the columns (`ahead`); prepared
    # first, so that what is sent ahead is the whole read.
    constraints_read = await conn.prepare(_CONSTRAINTS.format(nulls=nulls))
    constraint_rows, (columns, names, collations, found) = await meanwhile(
        constraints_read.fetch(oids),
        lambda: _columns(column_rows, identities, qualified, table_names),
    )
    unmanaged += found
    outside = sorted({r[6] for r in constraint_rows if r[2] == "f" and r[6] not in names})
    if outside:
        for relid, attnum, name in await conn.fetch(_REFERENCED_COLUMNS, outside):
            names[relid][attnum] = name
    opclasses: dict[int, str] = dict(await conn.fetch(_OPCLASSES))
    # And the indexes while Python reads the constraints.
    indexes_read = await conn.prepare(_INDEXES.format(nulls=nulls))
    index_rows, (pks, uniques, fks, checks, found) = await meanwhile(
        indexes_read.fetch(oids),
        lambda: _constraints(constraint_rows, names, qualified),
    )
    unmanaged += found
    indexes: dict[int, list[Index]] = defaultdict(list)
    current: tuple[int, str] = (0, "")
    try:
        for row in index_rows:
            relid, name, unique, nkey, indkey, definitions, where_text, method, classes, flags = (
                row[:10]
            )
            nulls_not_distinct, index_comment, index_flags, key_collations = row[10:14]
            current = (relid, name)
            where = f"table {qualified[relid]}, index {name}"
            if index_flags:
                unmanaged += [f"{where}: {what}" for what in _flags(index_flags, _INDEX_FLAGS)]
            if key_collations and any(
                attnum and collation and collation != collations[relid].get(attnum, collation)
                for attnum, collation in zip(indkey, key_collations or (), strict=False)
            ):
                unmanaged.append(f"{where}: a per-key collation")
            own = names[relid]
            keys = [
                own[n] if n else normalize_index_key(_D, definitions[position])
                for position, n in enumerate(indkey)
            ]
            # indoption bit 0 is DESC, bit 1 NULLS FIRST (pg_index.h). Most indexes have no
            # key with either, nor an operator class but its type's default: no options.
            key_options = (
                [
                    index_key_options(
                        _D,
                        desc=bool(flag & 1),
                        nulls_first=bool(flag & 2),
                        opclass=opclasses.get(opclass, ""),
                    )
                    for opclass, flag in zip(classes[:nkey], flags[:nkey], strict=True)
                ]
                if any(flags[:nkey]) or not opclasses.keys().isdisjoint(classes[:nkey])
                else []
            )
            indexes[relid].append(
                Index(
                    name=name,
                    columns=tuple(keys[:nkey]),
                    unique=unique,
                    where=normalize_expression(_D, where_text) if where_text else None,
                    include=tuple(keys[nkey:]),
                    method=None if method == "btree" else method,
                    key_options=index_key_options_tuple(key_options),
                    nulls_not_distinct=bool(nulls_not_distinct),
                    comment=index_comment,
                )
            )
    except READ_FAILURES as error:
        where = f"table {qualified[current[0]]}, index {current[1]}"
        raise read_failure(where, error) from error
    grants: dict[int, list[Grant]] = defaultdict(list)
    known = set(table_privileges(_D))
    for relid, grantee, privilege, grantable in await conn.fetch(_GRANTS, oids):
        # A privilege `ALL` does not name (MAINTAIN, PostgreSQL 17) is not compared.
        if privilege in known:
            grants[relid].append(Grant(grantee, privilege, grantable))
    # Asked after the tables' own reads, just before the reads it gates: Apply reads inside
    # its READ COMMITTED transaction, where a type made meanwhile shows in later reads only.
    present = _Present(*await conn.fetchrow(_PRESENT, schema_names, oids))
    enums = [
        EnumType(schema=r[0], name=r[1], values=tuple(r[2]), owner=r[3], comment=r[4])
        for r in await _rows_if(present.enums, conn, _ENUMS, schema_names)
    ]
    domains: list[Domain] = []
    for (
        schema,
        name,
        base,
        not_null,
        default,
        collation,
        owner,
        domain_comment,
        checks_read,
    ) in await _rows_if(present.domains, conn, _DOMAINS, schema_names):
        where = f"domain {schema}.{name}"
        with reading(where):
            base_type = normalize_type(_D, base)
            domain_checks = []
            for check_name, expression, valid in checks_read:
                if valid != "true":
                    unmanaged.append(f"{where}, constraint {check_name}: a NOT VALID constraint")
                domain_checks.append(
                    Check(expr=normalize_expression(_D, expression), name=check_name)
                )
            domains.append(
                Domain(
                    schema=schema,
                    name=name,
                    type=base_type,
                    nullable=not not_null,
                    default=normalize_default(_D, default, base_type) if default else None,
                    collation=collation,
                    checks=tuple(domain_checks),
                    owner=owner,
                    comment=domain_comment,
                )
            )
    sequences = [
        Sequence(
            schema=schema,
            name=name,
            type=kind,
            start=start,
            increment=increment,
            min_value=low,
            max_value=high,
            cache=cache,
            cycle=cycle,
            owner_table=owner_table,
            owner_column=owner_column,
            owner=owner,
            comment=sequence_comment,
        )
        for (
            schema,
            name,
            kind,
            start,
            increment,
            low,
            high,
            cache,
            cycle,
            owner_table,
            owner_column,
            drawn_from,
            owner,
            sequence_comment,
        ) in await _rows_if(present.sequences, conn, _SEQUENCES, schema_names)
        if scope.admits_table(_D, schema, name)
        and not (drawn_from and is_serial_sequence(owner_table, owner_column, name))
    ]
    views = []
    for (
        schema,
        name,
        definition,
        columns_read,
        reads,
        owner,
        materialized,
        view_options,
        view_comment,
    ) in await _rows_if(present.views, conn, _VIEWS, schema_names):
        if not scope.admits_table(_D, schema, name):
            continue
        if view_options:
            unmanaged.append(f"view {schema}.{name}: view options (WITH (...), CHECK OPTION)")
        views.append(
            View(
                schema=schema,
                name=name,
                definition=server_definition(definition),
                columns=tuple((str(c[0]), str(c[1])) for c in columns_read),
                depends_on=tuple(sorted(reads)),
                owner=owner,
                materialized=materialized,
                comment=view_comment,
            )
        )
    extensions = [
        Extension(name=r[0], schema=r[1], comment=r[2])
        for r in await _rows_if(present.extensions, conn, _EXTENSIONS, schema_names)
    ]
    unmanaged += [
        f"{kind} {name}"
        for kind, name in await conn.fetch(_UNMANAGED, schema_names, oids)
        if scope.admits_table(_D, *name.split(".", 1))
    ]
    functions, trigger_rows = await _functions(conn, scope, schema_names, oids, present)
    triggers: dict[int, list[Trigger]] = defaultdict(list)
    for relid, name, definition, enabled, constraint, trigger_comment in trigger_rows:
        where = f"table {qualified[relid]}, trigger {name}"
        if constraint:
            unmanaged.append(f"{where}: a constraint trigger")
            continue
        if enabled != "O":
            unmanaged.append(f"{where}: whether it fires (ENABLE/DISABLE TRIGGER)")
        with reading(where):
            try:
                trigger = read_trigger(definition, tokenize(definition))[2]
                triggers[relid].append(dataclasses.replace(trigger, comment=trigger_comment))
            except TriggerError as error:
                unmanaged.append(f"{where}: {error}")
    tables = []
    for oid, schema, name, comment, owner, _ in table_rows:
        # Made once, its parts in canonical order already (the server lists them otherwise).
        in_order = canonical_collections(
            tuple(uniques[oid]),
            tuple(indexes[oid]),
            tuple(fks[oid]),
            tuple(checks[oid]),
            tuple(grants[oid]),
            tuple(triggers[oid]),
        )
        tables.append(
            Table(
                schema=schema,
                name=name,
                columns=tuple(columns[oid]),
                primary_key=pks.get(oid),
                uniques=in_order[0],
                indexes=in_order[1],
                foreign_keys=in_order[2],
                checks=in_order[3],
                comment=comment,
                grants=in_order[4],
                owner=owner,
                triggers=in_order[5],
            )
        )
    return canonical_schema(
        _D,
        schemas,
        tables,
        enums,
        sequences,
        views,
        functions,
        extensions,
        schema_owners,
        schema_comments,
        unmanaged,
        domains,
    )


def _columns(
    column_rows: list[Any],
    identities: dict[tuple[int, int], tuple[Any, ...]],
    qualified: dict[int, str],
    table_names: dict[int, str],
) -> tuple[
    dict[int, list[Column]], dict[int, dict[int, str]], dict[int, dict[int, int]], list[str]
]:
    """Each table's columns from `_COLUMNS` rows (in table and column order); each table's
    column names and collations by number, which the constraints and indexes are read
    with; what the columns hold that is not modelled (`unmanaged`)."""
    columns: dict[int, list[Column]] = defaultdict(list)
    names: dict[int, dict[int, str]] = defaultdict(dict)
    collations: dict[int, dict[int, int]] = defaultdict(dict)
    unmanaged: list[str] = []
    current: tuple[int, str] = (0, "")
    try:
        for (
            relid,
            attnum,
            name,
            raw_type,
            not_null,
            default_text,
            identity_code,
            generated,
            collation,
            comment,
            sequence_name,
            draws_from_it,
            column_flags,
            collation_oid,
        ) in column_rows:
            current = (relid, name)
            names[relid][attnum] = name
            collations[relid][attnum] = collation_oid
            if column_flags:
                where = f"table {qualified[relid]}, column {name}"
                unmanaged += [f"{where}: {what}" for what in _flags(column_flags, _COLUMN_FLAGS)]
            type_text = normalize_type(_D, raw_type)
            identity = _IDENTITY.get(identity_code)
            options = None
            if identity is not None and (relid, attnum) in identities:
                start, step, low, high, cache, cycle, seq = identities[(relid, attnum)]
                options = identity_options(
                    type_text,
                    start=start,
                    increment=step,
                    min_value=low,
                    max_value=high,
                    cache=cache,
                    cycle=cycle,
                )
                if not is_serial_sequence(table_names[relid], name, seq):
                    where = f"table {qualified[relid]}, column {name}"
                    unmanaged.append(f"{where}: an identity sequence named {seq}")
            if (
                identity is None
                and draws_from_it
                and is_serial_sequence(table_names[relid], name, sequence_name)
            ):
                identity, default_text = "serial", None
            else:
                sequence_name = None
            columns[relid].append(
                Column(
                    name=name,
                    type=type_text,
                    nullable=not not_null,
                    default=normalize_default(_D, default_text, type_text)
                    if default_text
                    else None,
                    identity=identity,
                    generated=normalize_expression(_D, generated) if generated else None,
                    collation=collation,
                    comment=comment,
                    sequence=sequence_name,
                    identity_options=options,
                )
            )
    except READ_FAILURES as error:
        where = f"table {qualified[current[0]]}, column {current[1]}"
        raise read_failure(where, error) from error
    return columns, names, collations, unmanaged


def _constraints(
    constraint_rows: list[Any], names: dict[int, dict[int, str]], qualified: dict[int, str]
) -> tuple[
    dict[int, PrimaryKey],
    dict[int, list[UniqueConstraint]],
    dict[int, list[ForeignKey]],
    dict[int, list[Check]],
    list[str],
]:
    """Each table's primary key, unique constraints, foreign keys and checks from
    `_CONSTRAINTS` rows; what they hold that is not modelled (`unmanaged`)."""
    unmanaged: list[str] = []
    pks: dict[int, PrimaryKey] = {}
    uniques: dict[int, list[UniqueConstraint]] = defaultdict(list)
    fks: dict[int, list[ForeignKey]] = defaultdict(list)
    checks: dict[int, list[Check]] = defaultdict(list)
    current: tuple[int, str] = (0, "")
    try:
        for (
            relid,
            name,
            kind,
            conkey,
            ref_schema,
            ref_table,
            ref_relid,
            confkey,
            on_update,
            on_delete,
            check,
            deferrable,
            deferred,
            nulls_not_distinct,
            constraint_comment,
            constraint_unmanaged,
        ) in constraint_rows:
            current = (relid, name)
            if constraint_unmanaged:
                where = f"table {qualified[relid]}, constraint {name}"
                unmanaged += [
                    f"{where}: {what}" for what in _flags(constraint_unmanaged, _CONSTRAINT_FLAGS)
                ]
            if kind == "x":
                continue
            deferral = _deferral(deferrable, deferred)
            own = names[relid]
            # A check that names no column (`CHECK (1 > 0)`) has no conkey.
            cols = tuple(own[n] for n in conkey or ())
            if kind == "p":
                pks[relid] = PrimaryKey(
                    columns=cols, name=name, deferrable=deferral, comment=constraint_comment
                )
            elif kind == "u":
                uniques[relid].append(
                    UniqueConstraint(
                        columns=cols,
                        name=name,
                        deferrable=deferral,
                        nulls_not_distinct=bool(nulls_not_distinct),
                        comment=constraint_comment,
                    )
                )
            elif kind == "f":
                referenced = names[ref_relid]
                fks[relid].append(
                    ForeignKey(
                        columns=cols,
                        ref_schema=ref_schema,
                        ref_table=ref_table,
                        ref_columns=tuple(referenced[n] for n in confkey),
                        on_update=_ACTIONS[on_update],
                        on_delete=_ACTIONS[on_delete],
                        name=name,
                        deferrable=deferral,
                        comment=constraint_comment,
                    )
                )
            else:
                checks[relid].append(
                    Check(
                        expr=normalize_expression(_D, check),
                        name=name,
                        comment=constraint_comment,
                    )
                )
    except READ_FAILURES as error:
        where = f"table {qualified[current[0]]}, constraint {current[1]}"
        raise read_failure(where, error) from error
    return pks, uniques, fks, checks, unmanaged


def _deferral(deferrable: bool, deferred: bool) -> str | None:
    if not deferrable:
        return None
    return "DEFERRABLE INITIALLY DEFERRED" if deferred else "DEFERRABLE"


async def _functions(
    conn: Any, scope: Scope, schema_names: list[str], oids: list[int], present: _Present
) -> tuple[list[Function], list[Any]]:
    """Functions, and the triggers of the tables `oids`: both read with `search_path` at
    pg_catalog, so that user types, tables and functions print schema-qualified."""
    if not (present.functions or present.triggers):
        return [], []
    # SET LOCAL for one query, and back: Apply reads inside the transaction it then writes in.
    path = await conn.fetchval("SELECT current_setting('search_path')")
    await conn.execute("SELECT set_config('search_path', 'pg_catalog', true)")
    try:
        rows = await _rows_if(present.functions, conn, _FUNCTIONS, schema_names)
        trigger_rows = await _rows_if(present.triggers and bool(oids), conn, _TRIGGERS, oids)
    finally:
        await conn.execute("SELECT set_config('search_path', $1, true)", path)
    functions: list[Function] = []
    for r in rows:
        if not scope.admits_table(_D, r[0], r[1]):
            continue
        with reading(f"function {r[0]}.{r[1]}"):
            functions.append(
                catalog_function(
                    schema=r[0],
                    name=r[1],
                    arguments=r[2],
                    result=r[3],
                    language=r[4],
                    body=r[5] or "",
                    volatility=r[6],
                    strict=r[7],
                    security_definer=r[8],
                    leakproof=r[9],
                    parallel=r[10],
                    cost=r[11],
                    rows=r[12],
                    config=r[13],
                    owner=r[14],
                ).with_comment(r[15])
            )
    return functions, trigger_rows
