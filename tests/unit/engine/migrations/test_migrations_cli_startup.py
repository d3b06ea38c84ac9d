"""`ptah migrations status` starts on what it runs (issue #16): the CLI module loads neither the
code of the other commands nor the statement splitter, and PyMySQL loads `cryptography` only
when a password exchange needs RSA, which then works as it would have. Each probe runs in a
fresh interpreter: what a module imports shows only there."""

from __future__ import annotations

from ptah_operator.engine.migrations import cli
from ptah_operator.engine.migrations.apply import TransactionMode
from ptah_operator.engine.migrations.maintenance import RepairMark
from ptah_operator.engine.migrations.tool_import import Tool
from tests.support.fresh_interpreter import probe


def test_the_cli_loads_only_what_status_runs() -> None:
    found = probe(
        """
        import json, sys
        import ptah_operator.engine.migrations.cli
        print(json.dumps(sorted(m for m in sys.modules if m.startswith(("ptah_operator", "cryptography", "sqlglot")))))
        """
    )
    assert isinstance(found, list)
    for module in (
        "ptah_operator.engine.migrations.apply",
        "ptah_operator.engine.migrations.baseline",
        "ptah_operator.engine.migrations.maintenance",
        "ptah_operator.engine.migrations.tool_import",
        "ptah_operator.engine.migrations.catalog",
        "ptah_operator.engine.splitter",
    ):
        assert module not in found
    assert not [m for m in found if m.startswith(("cryptography", "sqlglot"))]
    assert "ptah_operator.engine.migrations.status" in found


def test_the_parsers_choices_are_the_enums_values() -> None:
    assert tuple(m.value for m in TransactionMode) == cli.TRANSACTION_MODES
    assert tuple(m.value for m in RepairMark) == cli.REPAIR_MARKS
    assert tuple(t.value for t in Tool) == cli.IMPORT_TOOLS


def test_pymysql_loads_without_cryptography_and_encrypts_with_it_when_asked() -> None:
    found = probe(
        """
        import json, sys
        from ptah_operator.engine import mysql_driver
        pymysql = mysql_driver.load()
        import aiomysql
        loaded_before = [m for m in sys.modules if m.split(".")[0] == "cryptography"]
        from pymysql import _auth
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        salt = b"0123456789abcdefghij"
        sealed = _auth.sha2_rsa_encrypt(b"secret", salt, public)
        oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
        opened = key.decrypt(sealed, oaep)
        print(json.dumps({
            "before": loaded_before,
            "opened": opened.hex(),
            "expected": _auth._xor_password(b"secret" + b"\\0", salt).hex(),
            "have": _auth._have_cryptography,
        }))
        """
    )
    assert found["before"] == []
    assert found["have"] is True
    assert found["opened"] == found["expected"]


def test_pymysql_is_left_alone_once_cryptography_is_loaded() -> None:
    found = probe(
        """
        import json, sys
        import cryptography.hazmat.primitives.serialization
        from ptah_operator.engine import mysql_driver
        mysql_driver.load()
        from pymysql import _auth
        real = sys.modules["cryptography.hazmat.primitives.serialization"]
        print(json.dumps({"real": _auth.serialization is real}))
        """
    )
    assert found == {"real": True}


def test_a_cryptography_that_cannot_load_fails_as_pymysql_says() -> None:
    found = probe(
        """
        import json, sys
        from ptah_operator.engine import mysql_driver
        mysql_driver.load()
        from pymysql import _auth
        sys.modules["cryptography.hazmat.primitives.serialization"] = None
        try:
            _auth.sha2_rsa_encrypt(b"secret", b"0123456789abcdefghij", b"")
        except RuntimeError as exc:
            print(json.dumps({"error": str(exc)}))
        """
    )
    assert "'cryptography' package is required" in str(found["error"])
