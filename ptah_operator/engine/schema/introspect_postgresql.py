"""Read a PostgreSQL database into the model: six set-based catalog queries, read-only.

Everything runs in one READ ONLY, REPEATABLE READ transaction so the queries see one snapshot.
Only relations the login can use (any table privilege, or membership of the owner role) in
schemas it may use are reported: "what the login can see".
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ptah_operator.engine.schema.model import (
    Check,
    Column,
    Dialect,
    EnumType,
    ForeignKey,
    Index,
    PrimaryKey,
    Schema,
    Table,
    UniqueConstraint,
    canonical_schema,
)
from ptah_operator.engine.schema.normalize import (
    normalize_default,
    normalize_expression,
    normalize_index_key,
    normalize_type,
)
from ptah_operator.engine.schema.scope import Scope

_D = Dialect.POSTGRESQL

_SCHEMAS = """
SELECT n.nspname FROM pg_namespace n
WHERE n.nspname = ANY($1::text[]) AND has_schema_privilege(n.oid, 'USAGE')
"""

_TABLES = """
SELECT c.oid, n.nspname, c.relname, obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname = ANY($1::text[])
  AND has_schema_privilege(n.oid, 'USAGE')
  AND (pg_has_role(c.relowner, 'USAGE')
       OR has_table_privilege(c.oid, 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER'))
"""

# A user-defined type is named schema-qualified whatever the search_path, so that both sides
# of a comparison spell it the same way.
_COLUMNS = """
SELECT a.attrelid, a.attname,
       CASE WHEN t.typtype = 'e'
            THEN quote_ident(tn.nspname) || '.' || quote_ident(t.typname)
            ELSE format_type(a.atttypid, a.atttypmod) END,
       a.attnotnull,
       CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END,
       a.attidentity::text,
       CASE WHEN a.attgenerated <> '' THEN pg_get_expr(d.adbin, d.adrelid) END,
       CASE WHEN a.attcollation <> t.typcollation THEN co.collname END,
       col_description(a.attrelid, a.attnum),
       EXISTS (SELECT 1 FROM pg_depend dep JOIN pg_class s ON s.oid = dep.objid
               WHERE dep.refobjid = a.attrelid AND dep.refobjsubid = a.attnum
                 AND dep.classid = 'pg_class'::regclass AND s.relkind = 'S'
                 AND dep.deptype = 'a') AS owns_sequence
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_namespace tn ON tn.oid = t.typnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
LEFT JOIN pg_collation co ON co.oid = a.attcollation
WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum
"""

_CONSTRAINTS = """
SELECT c.conrelid, c.conname, c.contype::text,
       ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o),
       fn.nspname, fc.relname,
       ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o),
       c.confupdtype::text, c.confdeltype::text,
       CASE WHEN c.contype = 'c' THEN pg_get_expr(c.conbin, c.conrelid) END
FROM pg_constraint c
LEFT JOIN pg_class fc ON fc.oid = c.confrelid
LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
WHERE c.conrelid = ANY($1::oid[]) AND c.contype IN ('p', 'u', 'f', 'c')
"""

_INDEXES = """
SELECT i.indrelid, ic.relname, i.indisunique, i.indnkeyatts,
       ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true)
             FROM generate_series(1, i.indnatts) k ORDER BY k),
       pg_get_expr(i.indpred, i.indrelid), am.amname
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_am am ON am.oid = ic.relam
WHERE i.indrelid = ANY($1::oid[])
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c
                  WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u', 'x'))
"""

_ENUMS = """
SELECT n.nspname, t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder)
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
JOIN pg_enum e ON e.enumtypid = t.oid
WHERE n.nspname = ANY($1::text[])
GROUP BY n.nspname, t.typname
"""

_ACTIONS = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}
_IDENTITY = {"a": "always", "d": "by default"}


async def inspect_postgresql(conn: Any, scope: Scope, *, own_transaction: bool = True) -> Schema:
    """The model of what `conn` sees within `scope`.

    With `own_transaction` (the default) the reads run in their own read-only transaction;
    Apply passes False to read inside the transaction it is about to change.
    """
    if own_transaction:
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            return await _inspect(conn, scope)
    return await _inspect(conn, scope)


async def _inspect(conn: Any, scope: Scope) -> Schema:
    schema_names = list(scope.schemas)
    schemas = [r[0] for r in await conn.fetch(_SCHEMAS, schema_names)]
    table_rows = [
        r for r in await conn.fetch(_TABLES, schema_names) if scope.admits_table(_D, r[1], r[2])
    ]
    oids = [r[0] for r in table_rows]
    columns: dict[int, list[Column]] = defaultdict(list)
    for r in await conn.fetch(_COLUMNS, oids):
        type_text = normalize_type(_D, r[2])
        default_text = r[4]
        identity = _IDENTITY.get(r[5] or "")
        if identity is None and r[9] and default_text and default_text.startswith("nextval("):
            identity, default_text = "serial", None
        columns[r[0]].append(
            Column(
                name=r[1],
                type=type_text,
                nullable=not r[3],
                default=normalize_default(_D, default_text, type_text),
                identity=identity,
                generated=normalize_expression(_D, r[6]) if r[6] else None,
                collation=r[7],
                comment=r[8],
            )
        )
    pks: dict[int, PrimaryKey] = {}
    uniques: dict[int, list[UniqueConstraint]] = defaultdict(list)
    fks: dict[int, list[ForeignKey]] = defaultdict(list)
    checks: dict[int, list[Check]] = defaultdict(list)
    for r in await conn.fetch(_CONSTRAINTS, oids):
        oid, name, kind, cols = r[0], r[1], r[2], tuple(r[3])
        if kind == "p":
            pks[oid] = PrimaryKey(columns=cols, name=name)
        elif kind == "u":
            uniques[oid].append(UniqueConstraint(columns=cols, name=name))
        elif kind == "f":
            fks[oid].append(
                ForeignKey(
                    columns=cols,
                    ref_schema=r[4],
                    ref_table=r[5],
                    ref_columns=tuple(r[6]),
                    on_update=_ACTIONS[r[7]],
                    on_delete=_ACTIONS[r[8]],
                    name=name,
                )
            )
        else:
            checks[oid].append(Check(expr=normalize_expression(_D, r[9]), name=name))
    indexes: dict[int, list[Index]] = defaultdict(list)
    for r in await conn.fetch(_INDEXES, oids):
        keys = list(r[4])
        nkey = r[3]
        indexes[r[0]].append(
            Index(
                name=r[1],
                columns=tuple(normalize_index_key(_D, k) for k in keys[:nkey]),
                unique=r[2],
                where=normalize_expression(_D, r[5]) if r[5] else None,
                include=tuple(normalize_index_key(_D, k) for k in keys[nkey:]),
                method=None if r[6] == "btree" else r[6],
            )
        )
    tables = [
        Table(
            schema=r[1],
            name=r[2],
            columns=tuple(columns[r[0]]),
            primary_key=pks.get(r[0]),
            uniques=tuple(uniques[r[0]]),
            indexes=tuple(indexes[r[0]]),
            foreign_keys=tuple(fks[r[0]]),
            checks=tuple(checks[r[0]]),
            comment=r[3],
        )
        for r in table_rows
    ]
    enums = [
        EnumType(schema=r[0], name=r[1], values=tuple(r[2]))
        for r in await conn.fetch(_ENUMS, schema_names)
    ]
    return canonical_schema(_D, schemas, tables, enums)
