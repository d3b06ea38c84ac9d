"""What `make mutate` found: the kill rate and every surviving mutant (issue #11).

    python hack/mutation_report.py ['ptah_operator.reconcile.approvals.*' ...]

Reads the results mutmut left in mutants/ (one `.meta` JSON file beside each mutated module),
narrowed to the mutant names given (globs, as `mutmut run` takes them). A survivor listed in
docs/contributing.md's "Equivalent mutants" section (a line "- `NAME`: why") is counted apart:
the rate that matters is that of the mutants that are not equivalent. Mutants mutmut has not
run yet are counted as not checked. `mutmut show NAME` prints a survivor's change.
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
KILLED = {1, 3, 36, 37, -24, 24, 152, 255}  # a test failed, timed out, or the type check refused
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


def main(argv: list[str]) -> int:
    if not MUTANTS.is_dir():
        print("no mutants/ yet: run `make mutate` first")
        return 1
    found = results(argv)
    equivalent = equivalent_mutants(CONTRIBUTING.read_text()) if CONTRIBUTING.exists() else {}
    counts: Counter[str] = Counter()
    survivors: list[str] = []
    for name, code in sorted(found.items()):
        if code in KILLED:
            counts["killed"] += 1
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
    for name in survivors:
        print(f"  survived: {name}")
    if survivors:
        print(
            "`.venv/bin/mutmut show NAME` prints a survivor's change; kill it with a test, or list"
        )
        print("it under docs/contributing.md's 'Equivalent mutants' with a one-line reason.")
    stale = sorted(n for n in equivalent if n in found and found[n] not in SURVIVED)
    for name in stale:
        print(
            f"  listed as equivalent but {'killed' if found[name] in KILLED else 'not run'}: {name}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
