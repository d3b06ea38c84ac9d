"""The schema engine's benchmark in counts rather than seconds, this tree beside a baseline.

On a machine shared with other work, wall-clock figures move with the load; these do not:
- diff, render, diff + render: instructions executed per run (valgrind's cachegrind, no cache
  simulation, `PYTHONHASHSEED=0`), on `bench_schema`'s 1,000-table pair (50 changes), each run
  on objects built anew through their constructors (`bench_schema.rebuilt`). A run's count is
  (a process doing `--reps` runs) minus (the same process doing none): the interpreter's start,
  the imports and the building of the inputs cancel out.
- inspect: round trips (the driver's query calls, including the connection's own) and catalog
  rows fetched, per inspect of the 1,000 tables.

Both trees inspect the same servers' databases, read the same desired DDL and are measured in
one run. Run: `.venv/bin/python tests/bench/bench_schema_counts.py [--baseline REV] [--reps N]`
(needs `valgrind`; starts its own PostgreSQL and MariaDB). The baseline is unpacked from git as
`bench_schema --baseline` does.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import pickle
import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# The measured tree first (this one, or a baseline's), as `bench_schema` does.
sys.path[:0] = [os.environ.get("PTAH_BENCH_TREE", str(REPO)), str(REPO), str(REPO / "hack")]

from localstack.mariadb import MariaDBServer  # noqa: E402
from localstack.postgres import PostgresServer  # noqa: E402

from ptah_operator.engine.schema.ddl import parse_ddl  # noqa: E402
from ptah_operator.engine.schema.desired import assemble  # noqa: E402
from ptah_operator.engine.schema.diff import plan_changes  # noqa: E402
from ptah_operator.engine.schema.model import Dialect  # noqa: E402
from ptah_operator.engine.schema.operations import inspect_url  # noqa: E402
from ptah_operator.engine.schema.plan import build_plan  # noqa: E402
from ptah_operator.engine.schema.scope import Scope  # noqa: E402
from tests.bench import bench_schema  # noqa: E402
from tests.bench.bench_schema import (  # noqa: E402
    baseline_tree,
    generated_ddl,
    rebuilt,
    workdir,
)

DEFAULT_BASELINE = "3501aaf"
WORKS = ("diff", "render")


class Counter:
    """Round trips and rows of every query the drivers send, counted at their classes."""

    def __init__(self) -> None:
        self.queries = 0
        self.rows = 0

    def install(self) -> None:
        import aiomysql
        import asyncpg

        pg = asyncpg.connection.Connection
        for name in ("fetch", "fetchrow", "fetchval", "execute", "executemany"):
            setattr(pg, name, self._wrapped(getattr(pg, name)))
        cursor = aiomysql.Cursor
        cursor.execute = self._wrapped(cursor.execute)
        for name in ("fetchall", "fetchmany", "fetchone"):
            setattr(cursor, name, self._rows_of(getattr(cursor, name)))

    def _wrapped(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.queries += 1
            result = await method(*args, **kwargs)
            if isinstance(result, list):
                self.rows += len(result)
            elif method.__name__ in {"fetchrow", "fetchval"} and result is not None:
                self.rows += 1
            return result

        return counted

    def _rows_of(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            result = await method(*args, **kwargs)
            if method.__name__ == "fetchone":
                self.rows += result is not None
            else:
                self.rows += len(result)
            return result

        return counted


async def dump(dialect: Dialect, url: str) -> tuple[bytes, dict[str, int]]:
    """Inspect (counting), read the desired schema, and pickle the pair for `count`."""
    scope = Scope()
    counter = Counter()
    counter.install()
    observed = await inspect_url(url, scope)
    assert len(observed.tables) == bench_schema.TABLES, len(observed.tables)
    desired = assemble(dialect, [parse_ddl(dialect, ";\n".join(generated_ddl(50)), "b.sql")], scope)
    assert len(plan_changes(observed, desired)) == 50
    return pickle.dumps((observed, desired)), {"queries": counter.queries, "rows": counter.rows}


def count(pair: Path, work: str, reps: int) -> None:
    """The body valgrind measures: `reps` runs of `work` (or none), each on a rebuilt pair."""
    raw = pair.read_bytes()
    scope = Scope()
    observed, desired = rebuilt(pickle.loads(raw))
    statements = plan_changes(observed, desired)
    build_plan(observed, desired, scope, statements)
    for _ in range(reps):
        observed, desired = rebuilt(pickle.loads(raw))
        if work == "diff":
            plan_changes(observed, desired)
        elif work == "render":
            build_plan(observed, desired, scope, statements)


def instructions(tree: Path, pair: Path, work: str, reps: int) -> int:
    done = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--count",
            str(pair),
            work,
            str(reps),
        ],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PTAH_BENCH_TREE": str(tree), "PYTHONHASHSEED": "0"},
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found.group(1).replace(",", ""))


def dumped(tree: Path, dialect: Dialect, url: str, into: Path) -> tuple[Path, dict[str, float]]:
    """`dump` in a child process that imports `tree`'s engine: the pickled pair, the counts."""
    pair = into / f"{tree.name}-{dialect.value}.pickle"
    done = subprocess.run(
        [sys.executable, __file__, "--dump", dialect.value, url, str(pair)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PTAH_BENCH_TREE": str(tree)},
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return pair, figures


def measure(
    pairs: dict[tuple[str, Dialect], tuple[Path, Path, dict[str, float]]], reps: int, jobs: int
) -> None:
    """Each pair's instructions, `jobs` valgrind processes at a time (each takes minutes on
    a loaded machine; the counts do not depend on how many run at once)."""
    runs = [(at, work) for at in pairs for work in ("none", *WORKS)]
    with ThreadPoolExecutor(jobs) as pool:
        counts = dict(
            zip(
                runs,
                pool.map(lambda run: instructions(*pairs[run[0]][:2], run[1], reps), runs),
                strict=True,
            )
        )
    for at, (_, _, figures) in pairs.items():
        for work in WORKS:
            figures[work] = (counts[(at, work)] - counts[(at, "none")]) / reps
        figures["diff + render"] = figures["diff"] + figures["render"]


def report(dialect: Dialect, head: dict[str, float], base: dict[str, float]) -> None:
    print(f"{dialect.value} (this tree, the baseline; ratio over 1.00: more now):")
    for name in (*WORKS, "diff + render"):
        print(
            f"  {name}: {head[name] / 1e6:.0f} M instructions, baseline "
            f"{base[name] / 1e6:.0f} M, ratio {head[name] / base[name]:.2f}"
        )
    for name in ("queries", "rows"):
        print(f"  inspect, {name}: {head[name]:.0f}, baseline {base[name]:.0f}")


async def main(baseline: str, reps: int, jobs: int) -> None:
    work = workdir()
    base_tree = baseline_tree(baseline, work)
    print(f"baseline: {baseline}; instructions per run, of {reps} runs; inputs in {work}")
    with PostgresServer(work) as pg, MariaDBServer(work) as maria:
        urls = await bench_schema.loaded(pg, maria)
        pairs: dict[tuple[str, Dialect], tuple[Path, Path, dict[str, float]]] = {}
        for dialect, url in urls.items():
            for side, tree in (("head", bench_schema.REPO), ("base", base_tree)):
                pairs[(side, dialect)] = (tree, *dumped(tree, dialect, url, work))
    measure(pairs, reps, jobs)
    for dialect in (Dialect.POSTGRESQL, Dialect.MARIADB):
        report(dialect, pairs[("head", dialect)][2], pairs[("base", dialect)][2])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", default=DEFAULT_BASELINE)
    parser.add_argument("--reps", type=int, default=1, help="runs measured per process")
    parser.add_argument("--jobs", type=int, default=3, help="valgrind processes at a time")
    parser.add_argument("--dump", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--count", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        dialect, url, out = args.dump
        pickled, counts = asyncio.run(dump(Dialect(dialect), url))
        Path(out).write_bytes(pickled)
        print(json.dumps(counts))
    elif args.count:
        count(Path(args.count[0]), args.count[1], int(args.count[2]))
    else:
        asyncio.run(main(args.baseline, args.reps, args.jobs))
