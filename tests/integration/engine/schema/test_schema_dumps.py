"""A dump as the desired schema, on real servers (issue #10, item 7).

`pg_dump --schema-only` and `mariadb-dump --no-data` of a database built from our own schemas
(which exercise what dumps write: session settings, ownership, comments, extensions, serial
columns as a sequence plus `SET DEFAULT nextval(...)`, identity columns as `ALTER TABLE ...
ADD GENERATED`, `ALTER TABLE ONLY ... ADD CONSTRAINT`, materialized views `WITH NO DATA`,
triggers; MySQL executable comments, `DROP TABLE IF EXISTS`, placeholder views, table
options) read back as the desired schema: against its own database it plans nothing, and
from an empty database it applies to the same catalog, after which a second plan is empty.
"""

from __future__ import annotations

from pathlib import Path

from ptah_operator.engine.schema.scope import Scope

from .dump_roundtrip import assert_properties, dump, load
from .schema_roundtrip import execute

PG_SCHEMA = """
CREATE EXTENSION IF NOT EXISTS citext;
CREATE SCHEMA app;
COMMENT ON SCHEMA app IS 'the application';
CREATE TYPE app.mood AS ENUM ('sad', 'happy');
CREATE FUNCTION app.touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.made := now(); RETURN NEW; END
$$;
CREATE TABLE app.person (
  id serial PRIMARY KEY,
  name citext NOT NULL,
  m app.mood DEFAULT 'sad',
  made timestamptz NOT NULL DEFAULT now(),
  local_made timestamp DEFAULT (now() AT TIME ZONE 'utc'),
  CONSTRAINT name_long CHECK (length(name::text) > 1)
);
CREATE TRIGGER person_touch BEFORE UPDATE ON app.person FOR EACH ROW EXECUTE FUNCTION app.touch();
CREATE TABLE app.pet (
  id bigint GENERATED ALWAYS AS IDENTITY (START WITH 100 INCREMENT BY 10) PRIMARY KEY,
  owner_id int REFERENCES app.person (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  tag varchar(20) UNIQUE,
  born date DEFAULT DATE '2020-01-01',
  due interval DEFAULT INTERVAL '24 hours'
);
CREATE INDEX pet_owner ON app.pet (owner_id);
CREATE UNIQUE INDEX pet_tag_born ON app.pet (tag, born) NULLS NOT DISTINCT;
COMMENT ON TABLE app.pet IS 'pets';
COMMENT ON COLUMN app.pet.tag IS 'the tag';
CREATE SEQUENCE app.ticket START 100;
CREATE VIEW app.named AS SELECT id, name FROM app.person;
CREATE MATERIALIZED VIEW app.counts AS
  SELECT owner_id, count(*) AS n FROM app.pet GROUP BY owner_id;
CREATE TRIGGER pet_search BEFORE INSERT OR UPDATE OF tag ON app.pet
  FOR EACH ROW WHEN (NEW.tag IS NOT NULL) EXECUTE FUNCTION app.touch();
"""

MARIA_SCHEMA = """
CREATE TABLE person (
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name varchar(50) NOT NULL,
  m enum('sad','happy') DEFAULT 'sad',
  made timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  price decimal(8,2) DEFAULT 0,
  CONSTRAINT name_long CHECK (char_length(name) > 1),
  KEY person_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='people';
CREATE TABLE pet (
  id bigint NOT NULL AUTO_INCREMENT,
  owner_id int,
  tag varchar(20) CHARACTER SET latin1,
  PRIMARY KEY (id),
  UNIQUE KEY pet_tag (tag),
  CONSTRAINT pet_owner FOREIGN KEY (owner_id) REFERENCES person (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE VIEW named AS SELECT id, name FROM person;
CREATE VIEW tagged AS SELECT p.id, n.name FROM pet p JOIN named n ON n.id = p.owner_id;
CREATE VIEW labels AS SELECT CONCAT(name, _utf8' ', 'x') AS label FROM person;
"""


async def test_a_postgresql_dump_is_a_desired_schema(
    pg_url: str, pg_twin: str, tmp_path: Path
) -> None:
    await execute(pg_url, "CREATE EXTENSION IF NOT EXISTS citext")
    # The twin is built from our schema; its dump is the desired schema.
    load(pg_twin, PG_SCHEMA)
    text = dump(pg_twin)
    for written in ("\\restrict", "SET default_table_access_method", "ADD GENERATED", "NO DATA"):
        assert written in text
    await execute(pg_url, "DROP EXTENSION citext")
    await execute(pg_twin, "DROP SCHEMA app CASCADE", "DROP EXTENSION citext")
    await assert_properties(pg_url, pg_twin, tmp_path, text, scope=Scope(schemas=("public", "app")))


async def test_a_mariadb_dump_is_a_desired_schema(
    maria_url: str, maria_twin: str, tmp_path: Path
) -> None:
    load(maria_twin, MARIA_SCHEMA)
    text = dump(maria_twin)
    assert "/*!50001 CREATE ALGORITHM=UNDEFINED" in text
    assert "DROP TABLE IF EXISTS" in text
    await execute(
        maria_twin, "DROP VIEW labels, tagged", "DROP VIEW named", "DROP TABLE pet, person"
    )
    await assert_properties(maria_url, maria_twin, tmp_path, text)
