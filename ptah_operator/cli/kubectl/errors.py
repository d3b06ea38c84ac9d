"""The plugin's exit codes and the two failures a person reads.

`EXIT_CODES` is the one definition: `kubectl ptah --help` lists it and docs/kubectl-plugin.md
repeats it. The plugin exits with no other code.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "done (a wait: the phase was reached; an approval: created)"),
    (EXIT_FAILED, "refused, failed, not found or timed out; the error line says which"),
    (EXIT_USAGE, "bad usage: unknown verb, flag or argument"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)


def exit_codes_text() -> str:
    """The exit codes as --help lists them."""
    return "exit codes:\n" + "\n".join(f"  {code:<4}{meaning}" for code, meaning in EXIT_CODES)


class CommandError(Exception):
    """A failure the person reads: printed as `error: ...`, exit 1."""


class UsageError(Exception):
    """Bad flags or arguments: printed with the usage, exit 2."""
