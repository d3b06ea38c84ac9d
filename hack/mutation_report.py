"""What `make mutate` found: the kill rate and every surviving mutant (issue #11).

    python hack/mutation_report.py ['ptah_operator.reconcile.approvals.*' ...]

Reads the results mutmut left in mutants/ (one `.meta` JSON file beside each mutated module),
narrowed to the mutant names given (globs, as `mutmut run` takes them). A survivor listed in
docs/contributing.md's "Equivalent mutants" section (a line "- `NAME`: why") is counted apart:
the rate that matters is that of the mutants that are not equivalent. Mutants mutmut has not
run yet are counted as not checked; one that ran out of time is shown apart and left out of
the kill rate (on a loaded machine a timeout is not a kill). `mutmut show NAME` prints a survivor's change.
"""

from __future__ import annotations

import fnmatch
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
CONTRIBUTING = ROOT / "docs" / "contributing.md"

# mutmut's exit codes (mutmut/stats.py): what each says of a mutant.
KILLED = {1, 3, 37}  # a test failed, or the type check refused
# Out of time (mutmut's own limit, or the CPU limit's signal). On a loaded machine that says
# nothing of the tests, so these are shown apart, left out of the kill rate, to run again.
TIMED_OUT = {36, -24, 24, 152, 255}
SURVIVED = {0}
NO_TESTS = {5, 33}
NOT_CHECKED = {None}


def equivalent_mutants(text: str) -> dict[str, str]:
    """The mutants docs/contributing.md lists as equivalent, each with its reason."""
    section = text.split("## Equivalent mutants", 1)
    if len(section) < 2:
        return {}
    body = section[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^- `([^`]+)`: (.+)$", body, flags=re.MULTILINE))


def results(patterns: list[str]) -> dict[str, int | None]:
    """Exit code by mutant name, for the mutants the patterns name (all when none)."""
    found: dict[str, int | None] = {}
    for meta in sorted(MUTANTS.rglob("*.py.meta")):
        codes = json.loads(meta.read_text()).get("exit_code_by_key", {})
        for name, code in codes.items():
            if not patterns or any(fnmatch.fnmatch(name, p) for p in patterns):
                found[name] = code
    return found


def _verdict(code: int | None) -> str:
    if code in KILLED:
        return "killed"
    if code in TIMED_OUT:
        return "timed out"
    return "not run"


def main(argv: list[str]) -> int:
    if not MUTANTS.is_dir():
        print("no mutants/ yet: run `make mutate` first")
        return 1
    found = results(argv)
    equivalent = equivalent_mutants(CONTRIBUTING.read_text()) if CONTRIBUTING.exists() else {}
    counts: Counter[str] = Counter()
    survivors: list[str] = []
    timed_out: list[str] = []
    for name, code in sorted(found.items()):
        if code in KILLED:
            counts["killed"] += 1
        elif code in TIMED_OUT:
            counts["timed out"] += 1
            timed_out.append(name)
        elif code in NOT_CHECKED:
            counts["not checked"] += 1
        elif code in SURVIVED and name in equivalent:
            counts["equivalent"] += 1
        elif code in NO_TESTS:
            counts["no test reaches it"] += 1
            survivors.append(name)
        else:
            counts["survived"] += 1
            survivors.append(name)
    checked = counts["killed"] + counts["survived"] + counts["no test reaches it"]
    print(f"mutants: {len(found)}  " + "  ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    if checked:
        rate = 100.0 * counts["killed"] / checked
        print(
            f"kill rate of the non-equivalent mutants: {rate:.1f} % ({counts['killed']}/{checked})"
        )
    for name in timed_out:
        print(f"  timed out: {name}")
    if timed_out:
        print("a timed-out mutant is not a kill: run it again on a quieter machine.")
    for name in survivors:
        print(f"  survived: {name}")
    if survivors:
        print(
            "`.venv/bin/mutmut show NAME` prints a survivor's change; kill it with a test, or list"
        )
        print("it under docs/contributing.md's 'Equivalent mutants' with a one-line reason.")
    stale = sorted(n for n in equivalent if n in found and found[n] not in SURVIVED)
    for name in stale:
        print(f"  listed as equivalent but {_verdict(found[name])}: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
