"""Whether a restructuring of reconcile/ changed any Decision: `make replay BASE=<rev>`.

The reconcile unit suite drives both families' pure reconcile functions through a few
thousand passes. This runs the suite twice, once on a checkout of BASE and once on the working
tree, records a digest of every pass's World and of the Decision it gave, in order, and
compares the two records. A restructuring that claims no behaviour change must show none here;
the tests of the working tree are used for both runs, so a test added by the change counts in
both.

Each run is a separate process with PYTHONHASHSEED fixed (a World's frozensets print in hash
order). Exit 0 when every pass gave the same Decision, 1 naming the first that did not, 2 when
the runs cannot be compared (a test failed, or the two runs made different passes).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FAMILIES = (
    ("ptah_operator.reconcile.migration", "lifecycle", "reconcile_migration"),
    ("ptah_operator.reconcile.schema", "lifecycle", "reconcile_schema"),
)


# --- the pytest plugin (loaded in each run with -p decision_replay) ---------------------------


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:20]


def pytest_configure(config: Any) -> None:
    out = open(os.environ["PTAH_REPLAY_OUT"], "w")  # noqa: SIM115 - open for the whole run
    for package, module, name in FAMILIES:
        defining = importlib.import_module(f"{package}.{module}")
        original: Callable[[Any], Any] = getattr(defining, name)

        def recording(world: Any, _f: Callable[[Any], Any] = original, _n: str = name) -> Any:
            decision = _f(world)
            out.write(f"{_n} {_digest(world)} {_digest(decision)}\n")
            out.flush()
            return decision

        setattr(defining, name, recording)
        setattr(importlib.import_module(package), name, recording)


# --- the comparison -----------------------------------------------------------------------------


def _run(code: Path, out: Path, tests: list[str]) -> int:
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "PTAH_REPLAY_OUT": str(out),
        "PYTHONPATH": str(Path(__file__).parent),
    }
    command = [sys.executable, "-m", "pytest", "-q", "-p", "decision_replay"]
    command += ["-p", "no:cacheprovider", *tests]
    # `-m` puts the working directory first on sys.path: the code is the checkout run in.
    return subprocess.run(command, cwd=code, env=env, check=False).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="the revision to compare with")
    parser.add_argument("tests", nargs="*", default=["tests/unit/reconcile"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptah-replay-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(base), args.base],
            cwd=REPO,
            check=True,
        )
        try:
            # The working tree's tests in both runs.
            shutil.rmtree(base / "tests")
            shutil.copytree(REPO / "tests", base / "tests")
            before, after = Path(tmp) / "base.txt", Path(tmp) / "tree.txt"
            if _run(base, before, args.tests) or _run(REPO, after, args.tests):
                print("replay: a test failed; the runs are not compared")
                return 2
            first, second = before.read_text().splitlines(), after.read_text().splitlines()
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=REPO)
    if [line.split()[:2] for line in first] != [line.split()[:2] for line in second]:
        print(f"replay: the runs made different passes ({len(first)} and {len(second)})")
        return 2
    for index, (a, b) in enumerate(zip(first, second, strict=True)):
        if a != b:
            print(f"replay: pass {index + 1} of {len(first)} ({a.split()[0]}) decided otherwise")
            return 1
    print(f"replay: {len(first)} passes, every Decision the same as at {args.base}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
