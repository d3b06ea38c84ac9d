"""The issue's probes of the schema engine's claims, walked through `ptah schema` as a person
would, on real MariaDB (the smuggled statement and the dry run of a unique index over
duplicates are walked in test_schema_smuggling and test_schema_dry_run on both engines)."""

from __future__ import annotations

from pathlib import Path

from .schema_roundtrip import execute, ptah_schema, rows, write_desired


async def test_longtext_to_text_is_destructive_and_refused_without_permission(
    maria_url: str, tmp_path: Path
) -> None:
    await execute(maria_url, "CREATE TABLE notes (id int PRIMARY KEY, body longtext)")
    await execute(maria_url, "INSERT INTO notes VALUES (1, REPEAT('x', 70000))")
    desired = write_desired(tmp_path, "CREATE TABLE notes (id int PRIMARY KEY, body text);")
    out = tmp_path / "plan.json"
    code, answer = ptah_schema(
        "plan", "--url", maria_url, "--desired", str(desired), "--out", str(out)
    )
    assert code == 3, answer
    assert answer["summary"]["highestSeverity"] == "destructive"
    assert answer["refusals"] == [{"reason": "DestructiveChangeNotAllowed", "statements": 1}]
    assert not out.exists()
    code, answer = ptah_schema("diff", "--url", maria_url, "--desired", str(desired))
    assert code == 0
    assert [c["severity"] for c in answer["changes"]] == ["destructive"]
    assert await rows(maria_url, "SELECT LENGTH(body) FROM notes") == [(70000,)]


async def test_on_update_is_kept_through_a_comment_change(maria_url: str, tmp_path: Path) -> None:
    table = (
        "CREATE TABLE events (id int PRIMARY KEY, updated_at timestamp NOT NULL"
        " DEFAULT current_timestamp() ON UPDATE current_timestamp() COMMENT '{}');"
    )
    await execute(maria_url, table.format("when").rstrip(";"))
    desired = write_desired(tmp_path, table.format("last change"))
    out = tmp_path / "plan.json"
    code, answer = ptah_schema(
        "plan", "--url", maria_url, "--desired", str(desired), "--out", str(out)
    )
    assert code == 0, answer
    assert answer["summary"] == {
        "total": 1,
        "highestSeverity": "safe",
        "categories": {"columns_changed": 1},
    }
    code, answer = ptah_schema("apply", "--url", maria_url, "--plan", str(out))
    assert (code, answer["outcome"]) == (0, "applied"), answer
    [(_, created)] = await rows(maria_url, "SHOW CREATE TABLE events")
    assert "ON UPDATE current_timestamp()" in created
    assert "COMMENT 'last change'" in created
    again = tmp_path / "again.json"
    code, answer = ptah_schema(
        "plan", "--url", maria_url, "--desired", str(desired), "--out", str(again)
    )
    assert (code, answer["noChange"]) == (0, True), answer
