"""`kubectl_complete-ptah`: shell completion of `kubectl ptah`, as kubectl asks plugins for it.

For `kubectl ptah ARGS... WORD<TAB>` in bash or zsh (kubectl's own completion script loaded),
kubectl runs the executable `kubectl_complete-ptah` found on PATH with ARGS and the word being
completed (empty when none), and reads back one completion a line (`value<TAB>description`)
ending with the line `:N`, N a Cobra ShellCompDirective. This completes the verbs, the kinds
of `KIND/NAME`, the names of the resources from the API server (in the namespace `-n` gives,
else the context's), flags, and the values of `-n`, `--context`, `-o` and `--for`.

It never fails loudly: no server, no kubeconfig or no rights give no names, and no files.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ptah_operator.api.constants import MigrationPhase, SchemaPhase

NO_FILES = 4
NO_SPACE = 2

VERBS: tuple[tuple[str, str], ...] = (
    ("migration", "show a PtahMigration's status"),
    ("schema", "show a PtahSchema's status"),
    ("plan", "show the plan a migration or schema published"),
    ("approve", "approve the plan a migration or schema waits on"),
    ("wait", "wait for a migration or schema to reach a phase"),
    ("set-source", "point a migration or schema at another OCI artifact"),
    ("refresh", "ask for a read of the database now"),
)
COMMON_FLAGS = ("--kubeconfig", "--context", "-n", "--namespace")
VERB_FLAGS: dict[str, tuple[str, ...]] = {
    "migration": ("-o", "--output"),
    "schema": ("-o", "--output"),
    "plan": ("--applied", "--no-sql", "-o", "--output"),
    "approve": ("--plan", "--fingerprint", "--wait", "--timeout"),
    "wait": ("--for", "--timeout", "-o", "--output"),
    "set-source": ("--verification-policy",),
    "refresh": ("--wait", "--timeout"),
}
VALUED = frozenset(
    {
        "--kubeconfig",
        "--context",
        "-n",
        "--namespace",
        "-o",
        "--output",
        "--for",
        "--timeout",
        "--plan",
        "--fingerprint",
        "--verification-policy",
    }
)
KINDS = {"migration": "ptahmigrations", "schema": "ptahschemas"}
PHASES = sorted({p.value for p in MigrationPhase} | {p.value for p in SchemaPhase})


def _flags(words: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The positional words and the flags' values (`--flag value` and `--flag=value`)."""
    positional: list[str] = []
    values: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("-"):
            name, sep, value = word.partition("=")
            if sep:
                values[name] = value
            elif name in VALUED and i + 1 < len(words):
                values[name] = words[i + 1]
                i += 1
            else:
                values[name] = ""
        else:
            positional.append(word)
        i += 1
    return positional, values


def _names(plural: str, values: dict[str, str], cluster_wide: bool = False) -> list[str]:
    """The names of `plural` from the API server; none when it cannot be asked."""
    try:
        from ptah_operator.cli.kubectl import kubeconfig
        from ptah_operator.cli.kubectl.rest import Client

        credentials = kubeconfig.load(values.get("--kubeconfig"), values.get("--context"))
        rest = Client(credentials)
        try:
            if cluster_wide:
                page = rest.get(f"/api/v1/{plural}")
            else:
                namespace = values.get("-n") or values.get("--namespace") or credentials.namespace
                page = rest.get(f"/apis/operator.ptah.run/v1alpha1/namespaces/{namespace}/{plural}")
        finally:
            rest.close()
    except Exception:
        return []
    return sorted(str((i.get("metadata") or {}).get("name")) for i in page.get("items") or [])


def _contexts(values: dict[str, str]) -> list[str]:
    try:
        from ptah_operator.cli.kubectl import kubeconfig

        files = kubeconfig.kubeconfig_files(values.get("--kubeconfig"))
        return sorted(kubeconfig.merge(files, explicit=False).contexts)
    except Exception:
        return []


def completions(args: Sequence[str]) -> tuple[list[str], int]:
    """The completions of the last of `args` (the word being completed), and the directive."""
    words = list(args)
    if words and words[0] == "__complete":
        words = words[1:]
    current = words[-1] if words else ""
    before = words[:-1]
    positional, values = _flags(before)
    verb = positional[0] if positional else None
    previous = before[-1] if before else ""
    if previous in VALUED and not (len(before) >= 2 and before[-2] in VALUED):
        return _value(previous, current, values), NO_FILES
    if current.startswith("-"):
        flags = (*VERB_FLAGS.get(verb or "", ()), *COMMON_FLAGS)
        return [f for f in flags if f.startswith(current)], NO_FILES
    if verb is None:
        return [f"{v}\t{h}" for v, h in VERBS if v.startswith(current)], NO_FILES
    if len(positional) > 1 or verb not in VERB_FLAGS:
        return [], NO_FILES
    if verb in KINDS:
        names = _names(KINDS[verb], values)
        return [n for n in names if n.startswith(current)], NO_FILES
    kind, sep, prefix = current.partition("/")
    if not sep:
        return [f"{k}/" for k in KINDS if k.startswith(current)], NO_FILES | NO_SPACE
    if kind not in KINDS:
        return [], NO_FILES
    names = _names(KINDS[kind], values)
    return [f"{kind}/{n}" for n in names if n.startswith(prefix)], NO_FILES


def _value(flag: str, current: str, values: dict[str, str]) -> list[str]:
    if flag in ("-n", "--namespace"):
        found = _names("namespaces", values, cluster_wide=True)
    elif flag == "--context":
        found = _contexts(values)
    elif flag in ("-o", "--output"):
        found = ["json", "yaml"]
    elif flag == "--for":
        found = PHASES
    else:
        found = []
    return [v for v in found if v.startswith(current)]


def main() -> None:
    found, directive = completions(sys.argv[1:])
    sys.stdout.write("".join(f"{line}\n" for line in found) + f":{directive}\n")


if __name__ == "__main__":
    main()
