"""The desired reader held to an earlier revision of itself, on every input the suites give it.

A change made for speed in `ddl` must leave what it reads unchanged. This records each
`parse_ddl` call the engine's test suites make (the statements people thought of, the
refusals, the fuzzers' inputs), then reads each recorded input with the tree at a revision
and with this one, each in a process of its own, and compares the Parts (or the refusal).

    .venv/bin/python tests/bench/desired_corpus.py record [PYTEST PATHS...]
    .venv/bin/python tests/bench/desired_corpus.py compare REV

`record` runs pytest with this file as a plugin (default paths: the unit and integration
engine/schema suites, which need the test servers the fixtures start) and adds the
benchmark's 1,000-table files; the corpus goes to PTAH_DESIRED_CORPUS (default
`.desired-corpus.jsonl`, not committed: it holds whatever the suites hold). `compare` exits 1
when any input reads differently, printing the first few, and 0 otherwise.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("PTAH_DESIRED_CORPUS", REPO / ".desired-corpus.jsonl"))
SUITES = ["tests/unit/engine/schema", "tests/integration/engine/schema"]


def pytest_configure(config: Any) -> None:
    """As a pytest plugin (`-p desired_corpus`): record every parse_ddl call."""
    from ptah_operator.engine.schema import ddl, desired
    from ptah_operator.engine.schema.model import Dialect
    from ptah_operator.engine.schema.parts import Parts

    real = ddl.parse_ddl

    def recording(dialect: Dialect, text: str, source: str) -> Parts:
        with CORPUS.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"dialect": dialect.value, "text": text, "source": source}))
            out.write("\n")
        return real(dialect, text, source)

    # `desired` imported the function by name: both names are replaced.
    setattr(ddl, "parse_ddl", recording)  # noqa: B010
    setattr(desired, "parse_ddl", recording)  # noqa: B010


def record(paths: list[str]) -> int:
    CORPUS.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "desired_corpus"]
        + (paths or SUITES),
        cwd=REPO,
        env=env,
        check=False,
    )
    sys.path[:0] = [str(Path(__file__).parent), str(REPO / "hack")]
    bench_schema = importlib.import_module("bench_schema")

    with CORPUS.open("a", encoding="utf-8") as out:
        for dialect in ("postgresql", "mysql", "mariadb"):
            text = ";\n".join(bench_schema.generated_ddl(50))
            out.write(json.dumps({"dialect": dialect, "text": text, "source": "bench.sql"}))
            out.write("\n")
    lines = sorted(set(CORPUS.read_text(encoding="utf-8").splitlines()))
    CORPUS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"desired_corpus: {len(lines)} distinct inputs in {CORPUS}")
    return ran.returncode


def read_all(tree: str) -> None:
    """In a child process: one line per corpus input, the digest of what `tree` reads."""
    sys.path.insert(0, tree)
    from ptah_operator.engine.schema.ddl import parse_ddl
    from ptah_operator.engine.schema.model import Dialect
    from ptah_operator.engine.schema.parts import DesiredSchemaError

    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        try:
            read = repr(parse_ddl(Dialect(item["dialect"]), item["text"], item["source"]))
        except DesiredSchemaError as error:
            read = f"refused: {error}"
        except Exception as error:  # a crash is a reading too, and compared
            read = f"crashed: {type(error).__name__}"
        print(hashlib.sha256(read.encode()).hexdigest())


def compare(revision: str) -> int:
    if not CORPUS.exists():
        print(f"desired_corpus: no corpus at {CORPUS}: run `record` first")
        return 2
    with tempfile.TemporaryDirectory(prefix="ptah-corpus-") as work:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", revision, "ptah_operator"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", work], input=archive, check=True)
        readings = [
            subprocess.run(
                [sys.executable, __file__, "--read", tree],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.splitlines()
            for tree in (work, str(REPO))
        ]
    inputs = CORPUS.read_text(encoding="utf-8").splitlines()
    differ = [i for i, (old, new) in enumerate(zip(*readings, strict=True)) if old != new]
    print(f"desired_corpus: {len(inputs)} inputs, {len(differ)} read differently from {revision}")
    for i in differ[:5]:
        item = json.loads(inputs[i])
        print(f"  {item['dialect']}: {item['text'][:160]!r}")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["record"]:
        return record(argv[1:])
    if argv[:1] == ["compare"] and len(argv) == 2:
        return compare(argv[1])
    if argv[:1] == ["--read"] and len(argv) == 2:
        read_all(argv[1])
        return 0
    print(__doc__.split("\n\n")[2] if __doc__ else "", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
