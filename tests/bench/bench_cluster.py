"""Benchmark: PtahMigrations (or PtahSchemas) created at once on the local stack, taken to InSync.

For N resources (default 100), each with its own database, two migration files (or a desired
schema of the same two tables, with `--kind schema`) and `apply: Always`, this measures the time from creation to InSync (per resource: p50, p95, max;
and the wall time until the last one), and the API requests the operator made per resource
(its `ptah_api_requests_total`, watches included). The baseline, in the same run, is a single
resource on the same stack: requests per resource should not grow with N, and a resource
among N should not wait much longer than one alone, beyond what two cores can run at once.

Run: `.venv/bin/python tests/bench/bench_cluster.py [--resources 100] [--executor process|podman]
[--kind migration|schema]`
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


def run_batch(
    stack: LocalStack, namespace: str, count: int, timeout: float, kind: str = "migration"
) -> dict[str, Any]:
    assert stack.postgres is not None
    stack.cp.kubectl("create", "namespace", namespace)
    urls = []
    for index in range(count):
        database = f"{namespace.replace('-', '_')}_{index}"
        urls.append(stack.postgres.url_for(database))
        subprocess.run(
            ["psql", stack.postgres.admin_url, "-qc", f"CREATE DATABASE {database}"],
            check=True,
            capture_output=True,
        )
    manifest = "\n---\n".join(
        json.dumps(d) for i, url in enumerate(urls) for d in documents(namespace, i, url, kind)
    )
    before = operator_requests(stack)
    started = time.monotonic()
    stack.cp.kubectl("apply", "-f", "-", input=manifest, timeout=600)
    deadline = started + timeout
    items: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        out = stack.cp.kubectl("get", f"ptah{kind}s", "-n", namespace, "-o", "json")
        items = json.loads(out.stdout)["items"]
        phases = [(i.get("status") or {}).get("phase") for i in items]
        if len(items) == count and all(p == "InSync" for p in phases):
            break
        if any(p in ("Blocked", "Failed") for p in phases):
            bad = [
                i["metadata"]["name"]
                for i in items
                if (i.get("status") or {}).get("phase") in ("Blocked", "Failed")
            ]
            raise SystemExit(f"bench: {bad[:5]} ended Blocked/Failed")
        time.sleep(1)
    else:
        raise SystemExit(f"bench: not all {count} InSync within {timeout:.0f}s")
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
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=100)
    parser.add_argument("--executor", choices=["process", "podman"], default="process")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--kind", choices=["migration", "schema"], default="migration")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="ptah-bench-"))
    with LocalStack(workdir, executor_mode=args.executor, operator_args=("--workers=8",)) as stack:
        print(f"stack up; executor={args.executor}", flush=True)
        print(f"kind: {args.kind}", flush=True)
        baseline = run_batch(stack, "bench-one", 1, args.timeout, args.kind)
        print("baseline (1 resource):", json.dumps(baseline), flush=True)
        batch = run_batch(stack, "bench-many", args.resources, args.timeout, args.kind)
        print(f"batch ({args.resources} resources):", json.dumps(batch), flush=True)
    growth = batch["requests_per_resource"] / max(baseline["requests_per_resource"], 0.1)
    print(
        f"\ncreate-to-InSync: p50 {batch['p50_seconds']:.1f}s, p95 {batch['p95_seconds']:.1f}s,"
        f" max {batch['max_seconds']:.1f}s, all {args.resources} in {batch['wall_seconds']:.0f}s"
        f" (one alone: {baseline['p50_seconds']:.1f}s)"
    )
    print(
        f"API requests per resource: {batch['requests_per_resource']:.1f}"
        f" (one alone: {baseline['requests_per_resource']:.1f}; ratio {growth:.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
