"""Benchmark: the manager's memory at 0, 100, 300 ... resources, and over a create/delete loop.

On the local stack (its real node runs the Jobs; the manager a host process, so its RSS is
read from /proc; no Prometheus), PtahMigrations (or PtahSchemas, `--kind
schema`) are created in batches up to each step of `--steps`, each taken to InSync; at steady
state the script prints the manager's RSS (VmRSS of the `ptah-operator` process) and, per
informer the manager runs, the objects it holds and their bytes (a size walk of the objects
as the informer holds them: the API server's list, parsed as the informer parses it, through
the informer's transform when it has one). `--loop-rounds` then creates and deletes
`--loop-size` resources per round and prints RSS after each round: flat is the goal.

The machine is shared: the script runs its own work at `nice 10`; figures are indicative.

Run: `nice -n 10 .venv/bin/python tests/bench/bench_memory.py [--kind migration|schema]
[--steps 0,100,300] [--batch 50] [--loop-rounds 0] [--loop-size 20]`
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hack"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from localstack.stack import OPERATOR_NAMESPACE, LocalStack

from tests.bench.bench_cluster import documents

GROUP = "operator.ptah.run/v1alpha1"

# The informers the manager runs (world.py's SharedCaches, family.py's owned/naming informers,
# the observers): a name and the API path its list reads.
INFORMERS: tuple[tuple[str, str], ...] = (
    ("ptahmigrations", f"/apis/{GROUP}/ptahmigrations"),
    ("ptahschemas", f"/apis/{GROUP}/ptahschemas"),
    ("ptahmigrationplans", f"/apis/{GROUP}/ptahmigrationplans"),
    ("ptahschemaplans", f"/apis/{GROUP}/ptahschemaplans"),
    ("ptahmigrationapprovals", f"/apis/{GROUP}/ptahmigrationapprovals"),
    ("ptahschemaapprovals", f"/apis/{GROUP}/ptahschemaapprovals"),
    ("ptahmigrationrunacknowledgments", f"/apis/{GROUP}/ptahmigrationrunacknowledgments"),
    ("ptahschemaplanchunks", f"/apis/{GROUP}/ptahschemaplanchunks"),
    ("ptahrealms", f"/apis/{GROUP}/ptahrealms"),
    ("configmaps", "/api/v1/configmaps"),
    ("jobs", "/apis/batch/v1/jobs"),
    ("pods", "/api/v1/pods"),
    ("leases", f"/apis/coordination.k8s.io/v1/namespaces/{OPERATOR_NAMESPACE}/leases"),
)


def deep_size(obj: Any, seen: set[int] | None = None) -> int:
    """Bytes of `obj` and everything it holds (each object counted once)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, list | tuple):
        size += sum(deep_size(v, seen) for v in obj)
    return size


Transform = Callable[[dict[str, Any]], dict[str, Any]]


def transforms() -> tuple[dict[str, Transform], Transform | None]:
    """The manager's cache transforms by informer name and the default one, when this tree has
    them (the runtime's `drop_server_fields` for every kind the table does not name)."""
    try:
        from ptah_operator.controller.cache import TRANSFORMS_BY_PLURAL
        from ptah_operator.runtime.informer import drop_server_fields
    except ImportError:
        return {}, None
    return dict(TRANSFORMS_BY_PLURAL), drop_server_fields


def informer_sizes(stack: LocalStack) -> dict[str, tuple[int, int]]:
    """(objects, bytes) per informer, as the manager holds them."""
    by_name, default = transforms()
    out: dict[str, tuple[int, int]] = {}
    for name, path in INFORMERS:
        raw = stack.cp.kubectl("get", "--raw", path, timeout=300).stdout
        items = json.loads(raw).get("items") or []
        transform = by_name.get(name, default)
        held = [transform(item) if transform else item for item in items]
        seen: set[int] = set()
        out[name] = (len(held), sum(deep_size(item, seen) for item in held))
    return out


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def create(stack: LocalStack, namespace: str, indexes: Iterable[int], kind: str) -> None:
    assert stack.postgres is not None
    docs = []
    for index in indexes:
        database = f"{namespace.replace('-', '_')}_{index}"
        subprocess.run(
            ["psql", stack.postgres.admin_url, "-qc", f"CREATE DATABASE {database}"],
            check=True,
            capture_output=True,
        )
        docs += documents(namespace, index, stack.pod_url(stack.postgres.url_for(database)), kind)
    if docs:
        manifest = "\n---\n".join(json.dumps(d) for d in docs)
        stack.cp.kubectl("apply", "-f", "-", input=manifest, timeout=600)


def wait_in_sync(stack: LocalStack, namespace: str, count: int, kind: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = stack.cp.kubectl("get", f"ptah{kind}s", "-n", namespace, "-o", "json", timeout=300)
        items = json.loads(out.stdout)["items"]
        phases = [(i.get("status") or {}).get("phase") for i in items]
        if len(items) == count and all(p == "InSync" for p in phases):
            return
        bad = [p for p in phases if p in ("Blocked", "Failed")]
        if bad:
            raise SystemExit(f"bench: {len(bad)} resources ended Blocked/Failed")
        time.sleep(2)
    raise SystemExit(f"bench: not all {count} InSync within {timeout:.0f}s")


def delete(stack: LocalStack, namespace: str, indexes: Iterable[int], kind: str) -> None:
    names = [f"m{i:04d}" for i in indexes]
    if not names:
        return
    stack.cp.kubectl("delete", f"ptah{kind}s", "-n", namespace, *names, "--wait=true", timeout=600)
    files = [f"{n}-files" for n in names]
    stack.cp.kubectl("delete", "configmaps", "-n", namespace, *files, timeout=600, check=False)
    secrets = [f"{n}-db" for n in names]
    stack.cp.kubectl("delete", "secrets", "-n", namespace, *secrets, timeout=600, check=False)
    assert stack.postgres is not None
    for index in indexes:
        database = f"{namespace.replace('-', '_')}_{index}"
        subprocess.run(
            ["psql", stack.postgres.admin_url, "-qc", f"DROP DATABASE IF EXISTS {database}"],
            check=False,
            capture_output=True,
        )


def steady(stack: LocalStack, settle: float) -> int:
    """RSS (KiB) once the manager is quiet: the lowest of a few readings `settle` seconds apart."""
    assert stack.operator is not None
    assert stack.operator.pid is not None
    readings = []
    for _ in range(3):
        time.sleep(settle)
        readings.append(rss_kib(stack.operator.pid))
    return min(readings)


def report(step: int, rss: int, sizes: dict[str, tuple[int, int]]) -> dict[str, Any]:
    total_objects = sum(n for n, _ in sizes.values())
    total_bytes = sum(b for _, b in sizes.values())
    print(f"\n== {step} resources: manager RSS {rss / 1024:.1f} MiB", flush=True)
    print(f"   {'informer':34} {'objects':>8} {'KiB':>10}")
    for name, (objects, size) in sizes.items():
        if objects:
            print(f"   {name:34} {objects:8d} {size / 1024:10.1f}")
    print(f"   {'(all informers)':34} {total_objects:8d} {total_bytes / 1024:10.1f}", flush=True)
    return {
        "resources": step,
        "rss_mib": round(rss / 1024, 1),
        "informer_mib": round(total_bytes / 2**20, 1),
        "informers": {k: {"objects": n, "kib": round(b / 1024, 1)} for k, (n, b) in sizes.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["migration", "schema"], default="migration")
    parser.add_argument("--steps", default="0,100,300")
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--loop-rounds", type=int, default=0)
    parser.add_argument("--loop-size", type=int, default=20)
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    os.nice(10)
    steps = [int(s) for s in args.steps.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="ptah-bench-mem-"))
    namespace = "bench-mem"
    figures: dict[str, Any] = {"kind": args.kind, "steps": [], "loop": []}
    with LocalStack(
        workdir, operator_from="process", prometheus=False, operator_args=("--workers=8",)
    ) as stack:
        print(f"stack up; kind {args.kind}; figures are indicative (shared machine)", flush=True)
        stack.cp.kubectl("create", "namespace", namespace)
        made = 0
        for step in steps:
            while made < step:
                upto = min(step, made + args.batch)
                create(stack, namespace, range(made, upto), args.kind)
                wait_in_sync(stack, namespace, upto, args.kind, args.timeout)
                made = upto
                print(f"   {made} InSync", flush=True)
            rss = steady(stack, args.settle)
            figures["steps"].append(report(step, rss, informer_sizes(stack)))
        if args.loop_rounds:
            print(f"\n== create/delete loop: {args.loop_size} per round", flush=True)
            first = made
            for round_ in range(args.loop_rounds):
                indexes = range(first, first + args.loop_size)
                create(stack, namespace, indexes, args.kind)
                wait_in_sync(stack, namespace, made + args.loop_size, args.kind, args.timeout)
                delete(stack, namespace, indexes, args.kind)
                first += args.loop_size
                rss = steady(stack, args.settle)
                figures["loop"].append(round(rss / 1024, 1))
                print(f"   round {round_ + 1}: RSS {rss / 1024:.1f} MiB", flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
