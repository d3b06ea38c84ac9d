"""Starting, waiting for and stopping the local servers' processes."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self


class StackError(RuntimeError):
    """A local server could not be started or reached."""


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask the kernel to send SIGTERM to this child when the process that started it dies, so
    a test run or demo that is killed does not leave servers behind."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


class Process:
    """One long-running server process whose output goes to a log file."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            try:
                self._popen = subprocess.Popen(
                    self.argv,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=self._env,
                    cwd=self._cwd,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
            except OSError as exc:
                raise StackError(f"{self.name}: cannot run {self.argv[0]}: {exc}") from exc

    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll `ready` until it is true; fail with the log tail if the process dies or time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise StackError(
                    f"{self.name} exited before {what} (code {self._popen and self._popen.returncode});"
                    f" log {self.log_path}:\n{log_tail(self.log_path)}"
                )
            with contextlib.suppress(Exception):
                if ready():
                    return
            time.sleep(0.1)
        raise StackError(
            f"{self.name}: {what} did not happen within {timeout:.0f}s;"
            f" log {self.log_path}:\n{log_tail(self.log_path)}"
        )

    def stop(self, grace: float = 10.0) -> None:
        if self._popen is None or self._popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._popen.pid, signal.SIGTERM)
        try:
            self._popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._popen.pid, signal.SIGKILL)
            self._popen.wait(timeout=grace)


def run(argv: Sequence[str], what: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a short command; on failure raise StackError with its output."""
    result = subprocess.run(list(argv), capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        raise StackError(
            f"{what} failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}"
        )
    return result  # type: ignore[no-any-return]


class OneProcessServer:
    """A server the stack runs as one `Process` in a throwaway directory of its own.

    A subclass sets `workdir` and `_proc` and writes `start` (returning itself);
    `with Server(...) as server:` starts it, and stopping it ends the process and removes the
    directory, also when the body raised."""

    workdir: Path
    _proc: Process | None

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.stop()
            self._proc = None
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
