"""A catalog-level picture of a database's schema, for baseline's comparison.

Each object becomes one entry: a key that names it ("column public.users.email") and a
canonical definition (type, nullability, default, index or constraint definition, ...). Two
databases have the same schema when their entries are equal. The revision table is left out,
and on MySQL/MariaDB the database's own name is replaced by a placeholder wherever a
definition mentions it, so a shadow database under another name compares equal.

Differences are reported by key only: a key names objects, never row data or statement text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.connection import Database
from ptah_operator.engine.migrations.revision_table import RevisionTable

_PG_USER_SCHEMA = (
    "n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"
    " AND n.nspname NOT LIKE 'pg_temp_%' AND n.nspname NOT LIKE 'pg_toast_temp_%'"
)
_PG_NOT_EXTENSION = (
    "NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.objid = {oid} AND dep.deptype = 'e')"
)


@dataclass(frozen=True)
class Catalog:
    entries: dict[str, str]


def differences(target: Catalog, shadow: Catalog, limit: int = 50) -> list[str]:
    """What sets the target apart from the schema the files produce, by object name."""
    out: list[str] = []
    for key in sorted(set(shadow.entries) - set(target.entries)):
        out.append(f"missing from the target: {key}")
    for key in sorted(set(target.entries) - set(shadow.entries)):
        out.append(f"extra in the target: {key}")
    for key in sorted(set(target.entries) & set(shadow.entries)):
        if target.entries[key] != shadow.entries[key]:
            out.append(f"differs: {key}")
    return out[:limit] if len(out) <= limit else [*out[:limit], f"... and {len(out) - limit} more"]


async def inspect(db: Database, exclude: RevisionTable) -> Catalog:
    if db.dialect is Dialect.POSTGRESQL:
        return await _inspect_postgres(db, exclude)
    return await _inspect_mysql(db, exclude)


async def _inspect_postgres(db: Database, exclude: RevisionTable) -> Catalog:
    schema = exclude.schema or "public"
    skip = (schema, exclude.name)
    entries: dict[str, str] = {}

    _, rows = await db.fetch(f"SELECT n.nspname FROM pg_namespace n WHERE {_PG_USER_SCHEMA}")
    for (name,) in rows:
        entries[f"schema {name}"] = ""

    _, rows = await db.fetch("SELECT extname FROM pg_extension")
    for (name,) in rows:
        entries[f"extension {name}"] = ""

    _, rows = await db.fetch(
        "SELECT n.nspname, c.relname, c.relkind::text FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        f" WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND {_PG_USER_SCHEMA}"
        f" AND {_PG_NOT_EXTENSION.format(oid='c.oid')}"
    )
    for nsp, rel, kind in rows:
        if (nsp, rel) != skip:
            entries[f"relation {nsp}.{rel}"] = kind

    _, rows = await db.fetch(
        "SELECT n.nspname, c.relname, a.attname,"
        " row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum),"
        " format_type(a.atttypid, a.atttypmod), a.attnotnull,"
        " pg_get_expr(d.adbin, d.adrelid), a.attidentity::text, a.attgenerated::text,"
        " co.collname"
        " FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
        " LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <>"
        " (SELECT t.typcollation FROM pg_type t WHERE t.oid = a.atttypid)"
        f" WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"
        f" AND {_PG_USER_SCHEMA} AND {_PG_NOT_EXTENSION.format(oid='c.oid')}"
    )
    for nsp, rel, col, position, typ, notnull, default, identity, generated, coll in rows:
        if (nsp, rel) != skip:
            entries[f"column {nsp}.{rel}.{col}"] = (
                f"#{position} {typ} notnull={notnull} default={default} identity={identity}"
                f" generated={generated} collation={coll}"
            )

    _, rows = await db.fetch(
        "SELECT n.nspname, t.relname, ic.relname, pg_get_indexdef(i.indexrelid)"
        " FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid"
        " JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = ic.relnamespace"
        f" WHERE {_PG_USER_SCHEMA} AND {_PG_NOT_EXTENSION.format(oid='t.oid')}"
    )
    for nsp, rel, index, definition in rows:
        if (nsp, rel) != skip:
            entries[f"index {nsp}.{index}"] = definition

    _, rows = await db.fetch(
        "SELECT n.nspname, c.relname, con.conname, con.contype::text,"
        " pg_get_constraintdef(con.oid), con.condeferrable, con.condeferred"
        " FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        f" WHERE {_PG_USER_SCHEMA} AND {_PG_NOT_EXTENSION.format(oid='c.oid')}"
    )
    for nsp, rel, name, kind, definition, deferrable, deferred in rows:
        if (nsp, rel) != skip:
            entries[f"constraint {nsp}.{rel}.{name}"] = (
                f"{kind} {definition} deferrable={deferrable} deferred={deferred}"
            )

    _, rows = await db.fetch(
        "SELECT n.nspname, c.relname, pg_get_viewdef(c.oid) FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        f" WHERE c.relkind IN ('v', 'm') AND {_PG_USER_SCHEMA}"
    )
    for nsp, rel, definition in rows:
        entries[f"view {nsp}.{rel}"] = " ".join(str(definition).split())

    _, rows = await db.fetch(
        "SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid),"
        " p.prokind::text, pg_get_function_result(p.oid), md5(coalesce(p.prosrc, ''))"
        " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        f" WHERE {_PG_USER_SCHEMA} AND {_PG_NOT_EXTENSION.format(oid='p.oid')}"
    )
    for nsp, name, args, kind, result, body in rows:
        entries[f"routine {nsp}.{name}({args})"] = f"{kind} {result} {body}"

    _, rows = await db.fetch(
        "SELECT n.nspname, t.typname, t.typtype::text,"
        " (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e"
        "  WHERE e.enumtypid = t.oid)"
        " FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
        f" WHERE t.typtype IN ('e', 'd', 'r', 'm') AND {_PG_USER_SCHEMA}"
        f" AND {_PG_NOT_EXTENSION.format(oid='t.oid')}"
    )
    for nsp, name, kind, labels in rows:
        entries[f"type {nsp}.{name}"] = f"{kind} {labels}"

    _, rows = await db.fetch(
        "SELECT n.nspname, c.relname, tg.tgname, pg_get_triggerdef(tg.oid)"
        " FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        f" WHERE NOT tg.tgisinternal AND {_PG_USER_SCHEMA}"
    )
    for nsp, rel, name, definition in rows:
        entries[f"trigger {nsp}.{rel}.{name}"] = definition
    return Catalog(entries)


async def _inspect_mysql(db: Database, exclude: RevisionTable) -> Catalog:
    _, rows = await db.fetch("SELECT DATABASE()")
    schema = exclude.schema or str(rows[0][0])
    own = str(rows[0][0])
    skip = exclude.name if schema == own else None
    entries: dict[str, str] = {}

    def neutral(text: object) -> str:
        # A definition that names its own database must compare equal under another name.
        return str(text).replace(f"`{own}`.", "`<db>`.").replace(f"{own}.", "<db>.")

    _, rows = await db.fetch(
        "SELECT TABLE_NAME, TABLE_TYPE, ENGINE FROM information_schema.TABLES"
        " WHERE TABLE_SCHEMA = DATABASE()"
    )
    for name, kind, engine in rows:
        if name != skip:
            entries[f"table {name}"] = f"{kind} {engine}"

    _, rows = await db.fetch(
        "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_TYPE, IS_NULLABLE,"
        " COLUMN_DEFAULT, EXTRA, GENERATION_EXPRESSION FROM information_schema.COLUMNS"
        " WHERE TABLE_SCHEMA = DATABASE()"
    )
    for table, column, position, typ, nullable, default, extra, generated in rows:
        if table != skip:
            entries[f"column {table}.{column}"] = (
                f"#{position} {typ} nullable={nullable} default={default} extra={extra}"
                f" generated={generated}"
            )

    _, rows = await db.fetch(
        "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, INDEX_TYPE,"
        " GROUP_CONCAT(CONCAT(COLUMN_NAME, ':', COALESCE(SUB_PART, ''), ':',"
        " COALESCE(COLLATION, '')) ORDER BY SEQ_IN_INDEX SEPARATOR ',')"
        " FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()"
        " GROUP BY TABLE_NAME, INDEX_NAME, NON_UNIQUE, INDEX_TYPE"
    )
    for table, index, non_unique, kind, columns in rows:
        if table != skip:
            entries[f"index {table}.{index}"] = f"unique={not int(non_unique)} {kind} {columns}"

    _, rows = await db.fetch(
        "SELECT tc.TABLE_NAME, tc.CONSTRAINT_NAME, tc.CONSTRAINT_TYPE,"
        " (SELECT GROUP_CONCAT(CONCAT(k.COLUMN_NAME, '>', COALESCE(k.REFERENCED_TABLE_NAME, ''),"
        "  '.', COALESCE(k.REFERENCED_COLUMN_NAME, '')) ORDER BY k.ORDINAL_POSITION SEPARATOR ',')"
        "  FROM information_schema.KEY_COLUMN_USAGE k"
        "  WHERE k.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA"
        "  AND k.CONSTRAINT_NAME = tc.CONSTRAINT_NAME AND k.TABLE_NAME = tc.TABLE_NAME),"
        " (SELECT CONCAT(r.UPDATE_RULE, '/', r.DELETE_RULE)"
        "  FROM information_schema.REFERENTIAL_CONSTRAINTS r"
        "  WHERE r.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA"
        "  AND r.CONSTRAINT_NAME = tc.CONSTRAINT_NAME AND r.TABLE_NAME = tc.TABLE_NAME)"
        " FROM information_schema.TABLE_CONSTRAINTS tc WHERE tc.CONSTRAINT_SCHEMA = DATABASE()"
    )
    for table, name, kind, columns, rules in rows:
        if table != skip:
            entries[f"constraint {table}.{name}"] = f"{kind} {columns} {rules}"

    _, rows = await db.fetch(
        "SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS"
        " WHERE CONSTRAINT_SCHEMA = DATABASE()"
    )
    for name, clause in rows:
        entries[f"check {name}"] = neutral(clause)

    _, rows = await db.fetch(
        "SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS"
        " WHERE TABLE_SCHEMA = DATABASE()"
    )
    for name, definition in rows:
        entries[f"view {name}"] = neutral(definition)

    _, rows = await db.fetch(
        "SELECT ROUTINE_TYPE, ROUTINE_NAME, DTD_IDENTIFIER, MD5(COALESCE(ROUTINE_DEFINITION, ''))"
        " FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()"
    )
    for kind, name, returns, body in rows:
        entries[f"routine {name}"] = f"{kind} {returns} {body}"

    _, rows = await db.fetch(
        "SELECT TRIGGER_NAME, EVENT_MANIPULATION, EVENT_OBJECT_TABLE, ACTION_TIMING,"
        " ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"
    )
    for name, event, table, timing, action in rows:
        entries[f"trigger {name}"] = f"{timing} {event} {table} {neutral(action)}"

    _, rows = await db.fetch(
        "SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()"
    )
    for (name,) in rows:
        entries[f"event {name}"] = ""
    return Catalog(entries)
