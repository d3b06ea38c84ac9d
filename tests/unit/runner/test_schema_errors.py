"""What a schema operation says when the engine stops: its own messages where they are made to
be shown, the error class only where a driver's text could quote SQL, a row or an address."""

from __future__ import annotations

from pathlib import Path

import pymysql

from ptah_operator.engine.schema.diff import PlanError
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.runner.schema import engine_error


class _PostgresLikeError(Exception):
    sqlstate = "42P01"


def test_a_desired_schema_error_names_the_file_without_its_directory() -> None:
    error = engine_error(
        DesiredSchemaError("/ptah/files/schema.sql: statement 3 is not valid postgresql DDL"),
        Path("/ptah/files"),
    )
    assert (error.reason, error.message) == (
        "DesiredSchemaRefused",
        "schema.sql: statement 3 is not valid postgresql DDL",
    )
    # The file is a position the manager may show (issue #18); the words stay the runner's.
    assert error.as_json()["file"] == "schema.sql"
    not_a_file = engine_error(DesiredSchemaError("table orders: two primary keys"))
    assert "file" not in not_a_file.as_json()
    spaced = engine_error(DesiredSchemaError("my schema.sql: two primary keys"))
    assert "file" not in spaced.as_json()
    assert engine_error(PlanError("cannot plan x")).reason == "PlanRefused"


def test_a_drivers_error_is_its_class_never_its_text() -> None:
    error = engine_error(_PostgresLikeError('relation "secret_table" does not exist'))
    assert (error.reason, error.message) == (
        "IntrospectionFailed",
        "the database answered SQLSTATE 42P01",
    )
    lost = engine_error(pymysql.err.OperationalError(2003, "Can't connect to 'db.internal'"))
    assert (lost.reason, lost.message) == (
        "ConnectionFailed",
        "the database could not be reached (MySQL error 2003)",
    )
    refused = engine_error(pymysql.err.ProgrammingError(1146, "Table 'x.secret' doesn't exist"))
    assert refused.message == "the database answered MySQL error 1146"
    down = engine_error(ConnectionRefusedError(111, "Connect call failed ('10.0.0.1', 5432)"))
    assert (down.reason, down.message) == (
        "ConnectionFailed",
        "the database could not be reached (ConnectionRefusedError)",
    )
    odd = engine_error(KeyError("secret"))
    assert (odd.reason, odd.message) == (
        "RunnerError",
        "the engine stopped unexpectedly (KeyError)",
    )
