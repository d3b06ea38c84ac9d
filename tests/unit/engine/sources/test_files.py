"""The name and content rules every source's files obey."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptah_operator.api import content
from ptah_operator.engine.sources.errors import SourceRefusedError, SourceUnreachableError
from ptah_operator.engine.sources.files import (
    check_name,
    check_total,
    is_lfs_pointer,
    read_credentials,
    valid_file_name,
)

NAMES = [
    "0001_init.up.sql",
    "schema.hcl",
    ".gitkeep",
    "a",
    "A-B_c.d",
    "x" * 253,
    "x" * 254,
    "",
    ".",
    "..",
    "ptah-manifest.json",
    "dir/file.sql",
    "with space.sql",
    "ümlaut.sql",
    "semi;colon",
    "..data",
    "tab\tname",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_engine_names_files_as_the_api_does(name: str) -> None:
    assert valid_file_name(name) == content.valid_file_name(name)


def test_a_bad_name_is_refused_without_repeating_control_characters() -> None:
    with pytest.raises(SourceRefusedError) as refused:
        check_name("bad\nname", "file")
    assert "\n" not in str(refused.value)
    assert refused.value.reason == "SourceRefused"


def test_lfs_pointers_are_recognised() -> None:
    pointer = (
        b"version https://git-lfs.github.com/spec/v1\n"
        b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        b"size 12345\n"
    )
    assert is_lfs_pointer(pointer)
    assert not is_lfs_pointer(b"CREATE TABLE t (id int);\n")
    assert not is_lfs_pointer(pointer + b"-- padding\n" * 200)  # pointers are under 1024 bytes


def test_a_total_over_the_limit_names_the_rule() -> None:
    check_total(10, 10, "the limit")
    check_total(10, None, "the limit")
    with pytest.raises(SourceRefusedError, match="over the source policy's maxBytes of 9"):
        check_total(10, 9, "the source policy's maxBytes")


def test_credentials_come_from_a_directory(tmp_path: Path) -> None:
    assert read_credentials(None) is None
    (tmp_path / "username").write_text("alice\n")
    (tmp_path / "password").write_text("s3cret\n")
    credentials = read_credentials(tmp_path)
    assert credentials is not None
    assert (credentials.username, credentials.password) == ("alice", "s3cret")
    assert "s3cret" not in repr(credentials)
    (tmp_path / "password").unlink()
    with pytest.raises(SourceUnreachableError, match="username and password"):
        read_credentials(tmp_path)
