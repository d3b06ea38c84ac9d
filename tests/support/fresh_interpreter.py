"""Running a probe in a fresh interpreter: what a module imports shows only in a process that
has imported nothing else yet."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def probe(code: str) -> Any:
    """Run `code` (dedented) in a new interpreter from the repository's root; the JSON value
    its last line of output prints."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(done.stdout.splitlines()[-1])
