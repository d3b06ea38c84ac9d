"""How a runner command ends: its termination message (its exit code is
api/contracts/codes.py's `ExitCode`).

The termination message is one short line: never SQL, a row, a URL or a token. The kubelet
reads it from the file `PTAH_TERMINATION_LOG` names (default /dev/termination-log) into the
container's status, where the manager and a person find it. Every command writes it through
this module, so main.py and the command modules need not import each other.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

DEFAULT_TERMINATION_LOG = "/dev/termination-log"


def write_termination_message(message: str) -> None:
    """Write the container's termination message. The default path is written only where the
    kubelet made it, so a runner started by hand never litters /dev."""
    configured = os.environ.get("PTAH_TERMINATION_LOG")
    path = Path(configured or DEFAULT_TERMINATION_LOG)
    if configured is None and not path.exists():
        return
    with contextlib.suppress(OSError):
        path.write_text(message[:4000] + "\n")
