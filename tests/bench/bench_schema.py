"""Benchmark of the schema engine: 1,000 tables (10 columns, 2 indexes, 1 foreign key each).

Run: `.venv/bin/python tests/bench/bench_schema.py` (starts its own PostgreSQL and MariaDB).
Prints, per dialect, the time to inspect, to parse and assemble the desired SQL file of the
same 1,000 tables (with 50 changes), to diff against it, and to render the plan file (both
fingerprints, the plan bytes and their digest); on PostgreSQL also SQLAlchemy's Inspector and
schemainspect (what migra uses) on the same database, with the ratios. Each number is the best of `RUNS` runs, the diff and the render each
on objects made anew for it (`rebuilt`). The peers are optional:
point PTAH_BENCH_PEERS at a directory holding sqlalchemy<2, psycopg2 and schemainspect
(`pip install --target DIR 'sqlalchemy<2' psycopg2-binary schemainspect`).
Targets: inspection under 1 s for 1,000 tables and faster than both peers; diff + render
under 200 ms; parsing the desired file under 300 ms and no slower than inspection (#16).

`--baseline REV` also measures the engine as it was at REV (a git revision; `make bench` gives
the one named in the Makefile), on the same servers and data, in alternating rounds so that
a busy machine slows both alike, and prints each figure beside the baseline's. Each engine is
measured in a new process of its own (`measure_in_child`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# The tree whose engine is measured: this one, or a baseline's (see `--baseline`).
TREE = Path(os.environ.get("PTAH_BENCH_TREE", REPO))
sys.path[:0] = [str(TREE), str(REPO / "hack")]

from localstack.mariadb import MariaDBServer  # noqa: E402
from localstack.postgres import PostgresServer  # noqa: E402

from ptah_operator.engine.schema.ddl import parse_ddl  # noqa: E402
from ptah_operator.engine.schema.desired import assemble  # noqa: E402
from ptah_operator.engine.schema.diff import plan_changes  # noqa: E402
from ptah_operator.engine.schema.model import Dialect  # noqa: E402
from ptah_operator.engine.schema.operations import inspect_url  # noqa: E402
from ptah_operator.engine.schema.plan import build_plan  # noqa: E402
from ptah_operator.engine.schema.scope import Scope  # noqa: E402

TABLES = 1000
# Best of this many runs: the machines these run on are shared, and noise only adds.
RUNS = 5


def generated_ddl(changes: int = 0) -> list[str]:
    """One CREATE TABLE and two CREATE INDEX per table; `changes` tables get one more column."""
    statements = []
    for i in range(TABLES):
        ref = f"t{i - 1:04d}" if i else None
        extra = f", added_{i} int" if i < changes else ""
        fk = f", CONSTRAINT t{i:04d}_fk FOREIGN KEY (ref_id) REFERENCES {ref} (id)" if ref else ""
        statements.append(
            f"CREATE TABLE t{i:04d} (id int PRIMARY KEY, ref_id int, name varchar(100) NOT NULL, "
            "email varchar(200), created timestamp, amount decimal(12,2) DEFAULT 0, "
            "note text, flag int DEFAULT 1, code varchar(20), score int"
            f"{extra}{fk})"
        )
        statements.append(f"CREATE INDEX t{i:04d}_name ON t{i:04d} (name, email)")
        statements.append(f"CREATE INDEX t{i:04d}_code ON t{i:04d} (code)")
    return statements


def owed() -> None:
    """The collection of the youngest objects, counted in every timing: the engine pauses
    the collector over a burst (`collector.paused`), and the first collection after it walks
    every object the burst made; timed without it, the pause would look free."""
    gc.collect(0)


async def best_of(runs: int, work: Callable[[], Awaitable[Any]]) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        await work()
        owed()
        best = min(best, time.perf_counter() - start)
    return best


async def load_postgresql(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(";\n".join(generated_ddl()))
    finally:
        await conn.close()


async def load_mariadb(url: str, port: int, database: str) -> None:
    import aiomysql

    conn = await aiomysql.connect(
        host="127.0.0.1", port=port, user="root", db=database, autocommit=True
    )
    try:
        async with conn.cursor() as cur:
            for statement in generated_ddl():
                await cur.execute(statement)
    finally:
        conn.close()


def peers(url: str) -> dict[str, float]:
    """The peers' inspection times, best of `RUNS` like the engine's (SQLAlchemy's Inspector,
    ten times slower than the rest, best of two)."""
    path = os.environ.get("PTAH_BENCH_PEERS")
    if not path:
        return {}
    sys.path.insert(0, path)
    sqlalchemy: Any = importlib.import_module("sqlalchemy")
    schemainspect: Any = importlib.import_module("schemainspect")
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg2://"))

    def inspector() -> None:
        # A new Inspector each run: it caches what it read.
        inspector = sqlalchemy.inspect(engine)
        for name in inspector.get_table_names():
            inspector.get_columns(name)
            inspector.get_pk_constraint(name)
            inspector.get_indexes(name)
            inspector.get_foreign_keys(name)
            inspector.get_unique_constraints(name)

    results = {"sqlalchemy Inspector": best_of_sync(2, inspector)}
    with engine.connect() as conn:
        results["schemainspect (migra)"] = best_of_sync(
            RUNS, lambda: schemainspect.get_inspector(conn)
        )
    return results


def best_of_sync(runs: int, work: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        owed()
        best = min(best, time.perf_counter() - start)
    return best


def rebuilt(value: Any) -> Any:
    """A deep copy of a model value made through its classes' constructors, as inspection and
    parsing make one: each timed run gets objects with nothing cached on them by an earlier
    run (a table's column index, a schema's fingerprint), so a cache can only help a
    measurement as much as it helps one real plan. (Not `copy.deepcopy` or pickle: objects
    made without their constructor read their attributes several times slower.)"""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return type(value)(**{f.name: rebuilt(getattr(value, f.name)) for f in fields if f.init})
    if type(value) is tuple:
        return tuple(rebuilt(item) for item in value)
    if type(value) is list:
        return [rebuilt(item) for item in value]
    if type(value) is dict:
        return {key: rebuilt(item) for key, item in value.items()}
    return value


def best_of_fresh(runs: int, inputs: Callable[[], Any], work: Callable[[Any], Any]) -> float:
    """Best time of `work` over `runs` runs, each on new `inputs()` made outside the timing."""
    best = float("inf")
    for _ in range(runs):
        given = inputs()
        start = time.perf_counter()
        work(given)
        owed()
        best = min(best, time.perf_counter() - start)
    return best


async def measure(dialect: Dialect, url: str) -> dict[str, float]:
    scope = Scope()
    observed = await inspect_url(url, scope)
    assert len(observed.tables) == TABLES, len(observed.tables)
    inspect_seconds = await best_of(RUNS, lambda: inspect_url(url, scope))
    text = ";\n".join(generated_ddl(50))
    desired = assemble(dialect, [parse_ddl(dialect, text, "b.sql")], scope)
    parse_seconds = best_of_sync(
        RUNS, lambda: assemble(dialect, [parse_ddl(dialect, text, "b.sql")], scope)
    )
    statements = plan_changes(observed, desired)
    assert len(statements) == 50, len(statements)

    def pair() -> tuple[Any, Any]:
        return rebuilt(observed), rebuilt(desired)

    diff_seconds = best_of_fresh(RUNS, pair, lambda given: plan_changes(*given))
    render_seconds = best_of_fresh(
        RUNS, pair, lambda given: build_plan(given[0], given[1], scope, statements)
    )
    return {
        "inspect": inspect_seconds,
        "parse": parse_seconds,
        "diff": diff_seconds,
        "render": render_seconds,
    }


def workdir() -> Path:
    # Not 0700: PostgreSQL runs as another user.
    path = Path(tempfile.mkdtemp(prefix="ptah-bench-"))
    path.chmod(0o755)
    return path


def baseline_tree(revision: str, into: Path) -> Path:
    """The package as it was at `revision`, unpacked under `into`."""
    tree = into / "baseline"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "ptah_operator"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def measure_in_child(tree: Path, dialect: Dialect, url: str) -> dict[str, float]:
    """`measure` in a new process that imports the engine of `tree`. Both trees are measured
    so: a process that has loaded the databases and holds their statements runs the same
    code slower (its collector walks a larger heap, and its allocator is fragmented), which
    made the tree measured in place look up to a third slower than the baseline."""
    done = subprocess.run(
        [sys.executable, __file__, "--measure", dialect.value, url],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PTAH_BENCH_TREE": str(tree)},
    )
    numbers: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return numbers


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def report(dialect: Dialect, numbers: dict[str, float], base: dict[str, float] | None) -> None:
    diff_render = numbers["diff"] + numbers["render"]
    figures = {**numbers, "diff + render": diff_render}
    if base is None:
        print(
            f"{dialect.value}: inspect {ms(numbers['inspect'])}, diff {ms(numbers['diff'])}, "
            f"render {ms(numbers['render'])} (diff + render {ms(diff_render)}, target 200 ms),"
            f" parse + assemble the desired file {ms(numbers['parse'])} (target under 300 ms"
            " and no slower than inspect)"
        )
        return
    base = {**base, "diff + render": base["diff"] + base["render"]}
    print(f"{dialect.value} (this tree, and the baseline; ratio over 1.00: slower now):")
    for name, seconds in figures.items():
        print(
            f"  {name}: {ms(seconds)}, baseline {ms(base[name])}, ratio {seconds / base[name]:.2f}"
        )
    print(
        f"  targets: inspect under 1 s; diff + render under 200 ms ({ms(diff_render)}); parse +"
        " assemble the desired file under 300 ms and no slower than inspect"
    )


async def loaded(pg: PostgresServer, maria: MariaDBServer) -> dict[Dialect, str]:
    """The URLs of the 1,000-table database, loaded into each server (PostgreSQL first)."""
    pg_url = pg.url_for("postgres")
    await load_postgresql(pg_url)
    port = int(maria.admin_url.rsplit(":", 1)[1].split("/")[0])
    import aiomysql

    admin = await aiomysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    async with admin.cursor() as cur:
        await cur.execute("CREATE DATABASE bench")
    admin.close()
    maria_url = maria.url_for("bench")
    await load_mariadb(maria_url, port, "bench")
    return {Dialect.POSTGRESQL: pg_url, Dialect.MARIADB: maria_url}


async def main(baseline: str | None, rounds: int) -> None:
    work = workdir()
    tree = baseline_tree(baseline, work) if baseline else None
    if baseline:
        print(f"baseline: {baseline}, best of {rounds} alternating rounds of {RUNS} runs each")
    with PostgresServer(work) as pg, MariaDBServer(work) as maria:
        urls = await loaded(pg, maria)
        for dialect, url in urls.items():
            numbers = measure_in_child(TREE, dialect, url)
            base = None
            if tree is not None:
                base = measure_in_child(tree, dialect, url)
                for _ in range(rounds - 1):
                    numbers = _best(numbers, measure_in_child(TREE, dialect, url))
                    base = _best(base, measure_in_child(tree, dialect, url))
            report(dialect, numbers, base)
            if dialect is Dialect.POSTGRESQL:
                for name, seconds in peers(url).items():
                    print(
                        f"  {name}: {ms(seconds)} "
                        f"(the engine's inspect is {seconds / numbers['inspect']:.1f}x faster)"
                    )


def _best(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {name: min(a[name], b[name]) for name in a}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also measure the engine at REV")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (--baseline)")
    parser.add_argument("--measure", nargs=2, metavar=("DIALECT", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(asyncio.run(measure(Dialect(args.measure[0]), args.measure[1]))))
    else:
        asyncio.run(main(args.baseline, args.rounds))
