"""The plugin's exit codes and the two failures a person reads.

Exit codes: 0 done, 1 refused, failed or timed out (CommandError), 2 bad usage (UsageError).
The plugin defines no other code (Ctrl-C gives 130, as shells do).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class CommandError(Exception):
    """A failure the person reads: printed as `error: ...`, exit 1."""


class UsageError(Exception):
    """Bad flags or arguments: printed with the usage, exit 2."""
