"""The `ptah` command line: the engine without Kubernetes.

`ptah migrations ...` drives versioned migrations (ptah_operator.engine.migrations.cli),
`ptah schema ...` the declarative schema engine (ptah_operator.engine.schema.cli) and
`ptah artifact ...` OCI artifacts (ptah_operator.engine.sources.cli). Each group owns its
arguments; this module only dispatches, so they never import each other.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

GROUPS = {
    "migrations": "ptah_operator.engine.migrations.cli",
    "schema": "ptah_operator.engine.schema.cli",
    "artifact": "ptah_operator.engine.sources.cli",
}

USAGE = """usage: ptah <group> <command> [options]

groups:
  migrations   versioned SQL migrations: status, up, set, repair, baseline, hash, import
  schema       declarative schema: inspect, diff, plan, apply, drift
  artifact     OCI artifacts of Ptah's layout: push, resolve, inspect, pull

Run 'ptah <group> --help' for the commands of a group.
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "help"}:
        sys.stdout.write(USAGE)
        return 0
    group, rest = args[0], args[1:]
    module_name = GROUPS.get(group)
    if module_name is None:
        sys.stderr.write(f"ptah: unknown group {group!r}\n{USAGE}")
        return 2
    module = importlib.import_module(module_name)
    code: int = module.main(rest)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
