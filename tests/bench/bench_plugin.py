"""Benchmark: `kubectl ptah`'s read verbs beside `kubectl get` on the same API server, same run.

On a real control plane (etcd, kube-apiserver) with the CRDs, one PtahMigration awaiting
approval on its plan and one PtahSchema awaiting approval on a plan of two chunks, each read
verb runs N times as people type it (`kubectl ptah ...`, kubectl finding the plugin on PATH),
and so does its peer: `kubectl get KIND NAME -o yaml` (for `wait`, `kubectl wait
--for=jsonpath`). Printed: the medians, side by side, and the ratio. Targets (issue 16): each
read verb under 0.3 s and within 5x of its peer. Exit 1 when any is outside.

The interpreter's own start (`python -c pass`) is printed first, as the run's floor.

Run: `.venv/bin/python tests/bench/bench_plugin.py [--runs 15] [--baseline TREE]`
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "hack"), str(REPO)]

from kubernetes_asyncio import client, config  # noqa: E402
from localstack.controlplane import ControlPlane  # noqa: E402

from tests.support import schema_objects  # noqa: E402
from tests.support.migration_objects import awaiting_approval, plan_spec  # noqa: E402
from tests.support.webhook_stack import (  # noqa: E402
    create_migration,
    create_namespace,
    create_plan,
    ref,
    write_status,
)

TARGET_SECONDS = 0.3
TARGET_RATIO = 5.0


async def populate(kube: ControlPlane) -> str:
    configuration = client.Configuration()
    await config.load_kube_config(str(kube.kubeconfig), client_configuration=configuration)
    async with client.ApiClient(configuration) as api:
        namespace = await create_namespace(api, "bench-plugin")
        m = await create_migration(api, namespace, "orders")
        p = await create_plan(api, namespace, plan_spec(ref(m)))
        await write_status(api, namespace, "orders", awaiting_approval(p))
        s = await schema_objects.create_schema(api, namespace, "catalog")
        spec = schema_objects.schema_plan_spec(ref(s), chunks=2)
        plan = await schema_objects.create_schema_plan(api, namespace, spec, "catalog-plan")
        await schema_objects.create_chunks(api, namespace, plan, schema_objects.plan_pieces(spec))
        await schema_objects.write_schema_status(
            api, namespace, "catalog", schema_objects.awaiting_approval(plan)
        )
    return namespace


def timed(argv: list[str], env: dict[str, str], runs: int) -> float:
    """The median wall time of `argv` over `runs` runs (one warm-up run first)."""
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, check=False)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
        if i:
            times.append(elapsed)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--baseline",
        help="a tree of an earlier ptah_operator (git archive REV): its times printed beside",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ptah-bench-plugin-"))
    scripts = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
    }
    failed = False
    try:
        with ControlPlane(work) as kube:
            kube.kubectl("apply", "-f", str(REPO / "crds"))
            kube.kubectl(
                "wait", "--for=condition=established", "--timeout=60s", "-f", str(REPO / "crds")
            )
            namespace = asyncio.run(populate(kube))
            kubectl = str(kube.bindir / "kubectl")
            common = ["-n", namespace, f"--kubeconfig={kube.kubeconfig}"]
            cases = [
                (
                    "migration orders",
                    ["migration", "orders"],
                    ["get", "ptahmigration", "orders", "-o", "yaml"],
                ),
                (
                    "schema catalog",
                    ["schema", "catalog"],
                    ["get", "ptahschema", "catalog", "-o", "yaml"],
                ),
                (
                    "plan migration/orders",
                    ["plan", "migration/orders"],
                    ["get", "ptahmigration", "orders", "-o", "yaml"],
                ),
                (
                    "plan schema/catalog",
                    ["plan", "schema/catalog"],
                    ["get", "ptahschemaplan", "catalog-plan", "-o", "yaml"],
                ),
                (
                    "wait migration/orders",
                    ["wait", "migration/orders", "--for=AwaitingApproval", "--timeout=10s"],
                    [
                        "wait",
                        "ptahmigration/orders",
                        "--for=jsonpath={.status.phase}=AwaitingApproval",
                        "--timeout=10s",
                    ],
                ),
            ]
            print(
                f"kubectl ptah read verbs, medians of {args.runs} runs (targets: < {TARGET_SECONDS} s, <= x{TARGET_RATIO:.0f} kubectl)"
            )
            # What no Python program starts under on this machine now: it says how loaded the
            # run was (a few hundredths of a second when idle); the targets do not subtract it.
            floor = timed([sys.executable, "-c", "pass"], env, args.runs)
            print(f"  (floor: python -c pass {floor:.3f} s)")
            for label, ours, peer in cases:
                mine = timed([kubectl, "ptah", *ours, *common], env, args.runs)
                theirs = timed([kubectl, *peer, *common], env, args.runs)
                ratio = mine / theirs
                before = ""
                if args.baseline:
                    old_env = {**env, "PYTHONPATH": args.baseline}
                    old = timed([kubectl, "ptah", *ours, *common], old_env, args.runs)
                    before = f"   (baseline {old:.3f} s)"
                outside = mine > TARGET_SECONDS or ratio > TARGET_RATIO
                failed |= outside
                print(
                    f"  kubectl ptah {label:<24} {mine:.3f} s   kubectl {peer[0]} {theirs:.3f} s"
                    f"   x{ratio:.1f}{before}{'   OUTSIDE' if outside else ''}"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("within targets" if not failed else "OUTSIDE TARGETS")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
