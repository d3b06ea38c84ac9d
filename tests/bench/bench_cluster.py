"""Benchmark: PtahMigrations (or PtahSchemas) created at once on the local stack, taken to InSync.

For N resources (default 100), each with its own database, two migration files (or a desired
schema of the same two tables, with `--kind schema`) and `apply: Always`, this measures the time from creation to InSync (per resource: p50, p95, max;
and the wall time until the last one), and the API requests the operator made per resource
(its `ptah_api_requests_total`, watches included). The baseline, in the same run, is a single
resource on the same stack: requests per resource should not grow with N, and a resource
among N should not wait much longer than one alone, beyond what two cores can run at once.

With `--batch B`, the N resources are created B at a time, each batch taken to InSync before
the next (a 2-core machine cannot take 1,000 at once); latencies still run from each resource's
creation. After each count the manager's RSS at steady state (VmRSS of `ptah-operator`, the
lowest of three readings 5 s apart) is printed beside them. `--resources 100,1000` measures
each count in turn, in its own namespace, on one stack.

Run: `.venv/bin/python tests/bench/bench_cluster.py [--resources 100[,1000]] [--batch 100]
[--kind migration|schema]`

The stack is the real node (containerd and a kubelet run every Job's Pod); the manager runs as
a host process beside it, so its metrics and RSS are read from the host.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hack"))

from localstack.stack import LocalStack

FILES = {
    "0000000001_create_customers.up.sql": "CREATE TABLE customers (id bigint PRIMARY KEY, email text);\n",
    "0000000002_create_orders.up.sql": (
        "CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint REFERENCES customers (id));\n"
    ),
}


def operator_requests(stack: LocalStack) -> float:
    url = f"http://127.0.0.1:{stack.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("ptah_api_requests_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


SCHEMA = "".join(FILES[name] for name in sorted(FILES))


def documents(namespace: str, index: int, url: str, kind: str) -> list[dict[str, Any]]:
    name = f"m{index:04d}"
    if kind == "schema":
        return [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{name}-files", "namespace": namespace},
                "data": {"schema.sql": SCHEMA},
            },
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"{name}-db", "namespace": namespace},
                "stringData": {"url": url},
            },
            {
                "apiVersion": "operator.ptah.run/v1alpha1",
                "kind": "PtahSchema",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {
                    "target": {
                        "engine": "PostgreSQL",
                        "coordinationKey": f"bench/{namespace}/{name}",
                        "urlFrom": {"name": f"{name}-db", "key": "url"},
                    },
                    "configMap": {"name": f"{name}-files"},
                    "scope": {"schemas": ["public"]},
                    "policy": {"apply": "Always"},
                },
            },
        ]
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{name}-files", "namespace": namespace},
            "data": FILES,
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{name}-db", "namespace": namespace},
            "stringData": {"url": url},
        },
        {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahMigration",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "target": {
                    "engine": "PostgreSQL",
                    "coordinationKey": f"bench/{namespace}/{name}",
                    "urlFrom": {"name": f"{name}-db", "key": "url"},
                },
                "configMap": {"name": f"{name}-files"},
                "policy": {"apply": "Always"},
            },
        },
    ]


def parse(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def manager_rss_mib(stack: LocalStack) -> float:
    """The manager's RSS at steady state: the lowest of three readings 5 s apart."""
    assert stack.operator is not None
    pid = stack.operator.pid
    assert pid is not None
    readings = []
    for _ in range(3):
        time.sleep(5)
        status = Path(f"/proc/{pid}/status").read_text()
        readings.append(
            next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        )
    return round(min(readings) / 1024, 1)


def run_batch(
    stack: LocalStack,
    namespace: str,
    count: int,
    timeout: float,
    kind: str = "migration",
    batch: int | None = None,
) -> dict[str, Any]:
    assert stack.postgres is not None
    stack.cp.kubectl("create", "namespace", namespace)
    urls = []
    for index in range(count):
        database = f"{namespace.replace('-', '_')}_{index}"
        urls.append(stack.pod_url(stack.postgres.url_for(database)))
        subprocess.run(
            ["psql", stack.postgres.admin_url, "-qc", f"CREATE DATABASE {database}"],
            check=True,
            capture_output=True,
        )
    step = batch or count
    before = operator_requests(stack)
    started = time.monotonic()
    deadline = started + timeout
    items: list[dict[str, Any]] = []
    for first in range(0, count, step):
        chunk = range(first, min(count, first + step))
        manifest = "\n---\n".join(
            json.dumps(d) for i in chunk for d in documents(namespace, i, urls[i], kind)
        )
        stack.cp.kubectl("apply", "-f", "-", input=manifest, timeout=600)
        items = wait_in_sync(stack, namespace, chunk.stop, kind, deadline)
    wall = time.monotonic() - started
    time.sleep(2)  # let the last status writes' follow-up passes settle before counting
    requests = operator_requests(stack) - before
    latencies = []
    for item in items:
        created = parse(item["metadata"]["creationTimestamp"])
        verified = [
            parse(e["time"])
            for e in item["status"]["journal"]["entries"]
            if e["type"] == "Verified"
        ]
        latencies.append((max(verified) - created).total_seconds())
    latencies.sort()
    return {
        "resources": count,
        "wall_seconds": round(wall, 1),
        "p50_seconds": statistics.median(latencies),
        "p95_seconds": latencies[max(0, int(len(latencies) * 0.95) - 1)],
        "max_seconds": latencies[-1],
        "requests_per_resource": round(requests / count, 1),
        "rss_mib": manager_rss_mib(stack),
    }


def wait_in_sync(
    stack: LocalStack, namespace: str, count: int, kind: str, deadline: float
) -> list[dict[str, Any]]:
    """The namespace's resources once all `count` are InSync."""
    items: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        out = stack.cp.kubectl("get", f"ptah{kind}s", "-n", namespace, "-o", "json", timeout=300)
        items = json.loads(out.stdout)["items"]
        phases = [(i.get("status") or {}).get("phase") for i in items]
        if len(items) == count and all(p == "InSync" for p in phases):
            return items
        if any(p in ("Blocked", "Failed") for p in phases):
            bad = [
                i["metadata"]["name"]
                for i in items
                if (i.get("status") or {}).get("phase") in ("Blocked", "Failed")
            ]
            raise SystemExit(f"bench: {bad[:5]} ended Blocked/Failed")
        time.sleep(1)
    raise SystemExit(f"bench: not all {count} InSync in time")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", default="100", help="a count, or counts: 100,1000")
    parser.add_argument("--batch", type=int, default=None, help="create this many at a time")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--kind", choices=["migration", "schema"], default="migration")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="ptah-bench-"))
    with LocalStack(workdir, operator_from="process", operator_args=("--workers=8",)) as stack:
        print("stack up; Pods on the real node, the manager a host process", flush=True)
        print(f"kind: {args.kind}", flush=True)
        baseline = run_batch(stack, "bench-one", 1, args.timeout, args.kind)
        print("baseline (1 resource):", json.dumps(baseline), flush=True)
        batches = []
        for count in (int(c) for c in args.resources.split(",")):
            batch = run_batch(
                stack, f"bench-many-{count}", count, args.timeout, args.kind, args.batch
            )
            print(f"batch ({count} resources):", json.dumps(batch), flush=True)
            batches.append(batch)
    print(
        f"\none alone: p50 {baseline['p50_seconds']:.1f}s, {baseline['requests_per_resource']:.1f}"
        f" API requests, manager RSS {baseline['rss_mib']:.1f} MiB"
    )
    for batch in batches:
        growth = batch["requests_per_resource"] / max(baseline["requests_per_resource"], 0.1)
        print(
            f"{batch['resources']:5d} resources: create-to-InSync p50 {batch['p50_seconds']:.1f}s,"
            f" p95 {batch['p95_seconds']:.1f}s, max {batch['max_seconds']:.1f}s, all in"
            f" {batch['wall_seconds']:.0f}s; API requests per resource"
            f" {batch['requests_per_resource']:.1f} (ratio {growth:.2f}); manager RSS at steady"
            f" state {batch['rss_mib']:.1f} MiB (cumulative: earlier counts' resources remain)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
