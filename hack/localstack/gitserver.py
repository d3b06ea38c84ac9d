"""A throwaway Git server: the real `git http-backend` (CGI) behind a small HTTP server.

`python -m localstack.gitserver --root DIR --port PORT` serves every bare repository under DIR
at `http://127.0.0.1:PORT/<name>.git` (smart HTTP, protocol v0/v1/v2 as git decides). A
repository whose directory holds a file `ptah-http-auth` (`user:password`) asks for HTTP basic
credentials; the others are open. Only fetching is served (pushes go through the filesystem).

`GitServer` starts that process (dying with its parent) and makes repositories; `GitRepo` is
one bare repository on it plus a working clone to author history in: write files, commit, tag,
push, force-push, and set the bare repository's git config (e.g.
`uploadpack.allowReachableSHA1InWant`). Everything runs the real `git`.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from localstack.process import OneProcessServer, Process, StackError, free_port, port_open, run

HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"
AUTH_FILE = "ptah-http-auth"
AUTHOR = {
    "GIT_AUTHOR_NAME": "Ptah Test",
    "GIT_AUTHOR_EMAIL": "test@ptah.invalid",
    "GIT_COMMITTER_NAME": "Ptah Test",
    "GIT_COMMITTER_EMAIL": "test@ptah.invalid",
}


# --------------------------------------------------------------------------------------------
# The server process


class _Handler(BaseHTTPRequestHandler):
    root: Path
    server_version = "ptah-git/1"

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # One line per request, "METHOD /repo.git/path STATUS": tests read it to see what a
        # client asked for (GitServer.requests). No query string, no header.
        sys.stderr.write(f"{self.command} {self.path.split('?')[0]} {code}\n")
        sys.stderr.flush()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _repository(self, path: str) -> Path | None:
        name = path.lstrip("/").split("/", 1)[0]
        if not name.endswith(".git") or name.startswith("."):
            return None
        return self.root / name

    def _authorized(self, repository: Path) -> bool:
        expected_file = repository / AUTH_FILE
        if not expected_file.exists():
            return True
        expected = expected_file.read_text().strip()
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            given = base64.b64decode(header[6:], validate=True).decode()
        except ValueError:
            return False
        return hmac.compare_digest(given, expected)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        path, _, query = self.path.partition("?")
        repository = self._repository(path)
        if repository is None or not repository.is_dir():
            self.send_error(404)
            return
        if not self._authorized(repository):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="ptah-git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self._body()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(self.root),
        }
        for header, variable in (
            ("Git-Protocol", "HTTP_GIT_PROTOCOL"),
            ("Content-Encoding", "HTTP_CONTENT_ENCODING"),
        ):
            value = self.headers.get(header)
            if value:
                env[variable] = value
        result = subprocess.run(
            [HTTP_BACKEND], input=body, capture_output=True, env=env, check=False
        )
        if result.stderr:
            sys.stderr.write(result.stderr.decode(errors="replace"))
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = result.stdout.partition(b"\n\n")
        status = 200
        headers: list[tuple[str, str]] = []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers.append((key.strip(), value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def serve(root: Path, port: int) -> None:
    handler = type("Handler", (_Handler,), {"root": root})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    server.serve_forever()


# --------------------------------------------------------------------------------------------
# Repositories


def _git(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> str:
    full_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd or Path.cwd()),
        "GIT_CONFIG_NOSYSTEM": "1",
        **AUTHOR,
        **(env or {}),
    }
    result = run(["git", *args], f"git {args[0]}", cwd=cwd, env=full_env)
    return result.stdout.strip()


class GitRepo:
    """A bare repository on the server and a working clone that pushes to it by path."""

    def __init__(self, server: GitServer, name: str) -> None:
        self.server = server
        self.name = name
        self.bare = server.root / f"{name}.git"
        self.work = server.workdir / "work" / name
        self.url = server.url_for(name)

    def create(self, auth: tuple[str, str] | None) -> GitRepo:
        _git("init", "--quiet", "--bare", "--initial-branch=main", str(self.bare))
        if auth is not None:
            (self.bare / AUTH_FILE).write_text(f"{auth[0]}:{auth[1]}\n")
        self.work.mkdir(parents=True)
        _git("init", "--quiet", "--initial-branch=main", cwd=self.work)
        _git("remote", "add", "origin", str(self.bare), cwd=self.work)
        return self

    def git(self, *args: str) -> str:
        """Run git in the working clone."""
        return _git(*args, cwd=self.work)

    def set_config(self, key: str, value: str) -> None:
        """Set a key of the bare repository's config (what the server reads)."""
        _git("config", "--file", str(self.bare / "config"), key, value)

    def write(self, files: Mapping[str, bytes | None]) -> None:
        """Write (bytes) or delete (None) files of the working tree, paths relative to it."""
        for relative, data in files.items():
            path = self.work / relative
            if data is None:
                if path.is_symlink() or path.is_file():
                    path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink():
                path.unlink()
            path.write_bytes(data)

    def symlink(self, relative: str, target: str) -> None:
        path = self.work / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)

    def gitlink(self, relative: str, commit: str) -> None:
        """Stage a submodule entry (mode 160000) at `relative` pointing at `commit`."""
        (self.work / relative).mkdir(parents=True, exist_ok=True)
        self.git("update-index", "--add", "--cacheinfo", f"160000,{commit},{relative}")

    def commit(self, files: Mapping[str, bytes | None] | None = None, message: str = "c") -> str:
        """Write `files`, stage everything and commit; the new commit's id."""
        self.write(files or {})
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.rev_parse("HEAD")

    def commits(self, count: int, prefix: str = "step") -> list[str]:
        """`count` more commits, each changing one file; their ids, oldest first."""
        return [
            self.commit({f"{prefix}.txt": f"{prefix} {i}\n".encode()}, f"{prefix} {i}")
            for i in range(count)
        ]

    def rev_parse(self, rev: str) -> str:
        return self.git("rev-parse", rev)

    def tag(self, name: str, rev: str = "HEAD", annotated: bool = False) -> str:
        """Tag `rev`; the tag ref's own value (a tag object's id for an annotated tag)."""
        if annotated:
            self.git("tag", "-a", "-m", name, name, rev)
        else:
            self.git("tag", name, rev)
        return self.rev_parse(f"refs/tags/{name}")

    def push(self, branch: str = "main", *, force: bool = False, tags: bool = True) -> None:
        args = ["push", "--quiet"]
        if force:
            args.append("--force")
        self.git(*args, "origin", f"{branch}:{branch}")
        if tags:
            self.git("push", "--quiet", "--force", "origin", "refs/tags/*:refs/tags/*")

    def checkout(self, branch: str, start: str | None = None) -> None:
        if start is None:
            self.git("checkout", "--quiet", branch)
        else:
            self.git("checkout", "--quiet", "-B", branch, start)

    def reset_hard(self, rev: str) -> None:
        self.git("reset", "--quiet", "--hard", rev)

    def delete_remote_ref(self, ref: str) -> None:
        self.git("push", "--quiet", "origin", f":{ref}")


class GitServer(OneProcessServer):
    """`with GitServer(workdir) as git:`; `git.create_repo("name")` -> GitRepo."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.workdir = workdir / f"git-{secrets.token_hex(3)}"
        self.root = self.workdir / "repos"
        self.port = port or free_port()
        self._proc: Process | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url_for(self, name: str) -> str:
        return f"{self.base_url}/{name}.git"

    def create_repo(
        self,
        name: str | None = None,
        *,
        auth: tuple[str, str] | None = None,
        config: Mapping[str, str] | None = None,
    ) -> GitRepo:
        repo = GitRepo(self, name or f"r-{secrets.token_hex(4)}").create(auth)
        for key, value in (config or {}).items():
            repo.set_config(key, value)
        return repo

    @property
    def log_path(self) -> Path:
        return self.workdir / "git-http.log"

    def requests(self, name: str) -> list[str]:
        """The requests served for repository `name` so far, "METHOD /name.git/... STATUS"."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return []
        prefix = f"/{name}.git/"
        return [
            line for line in lines if line.split(" ")[1:2] and line.split(" ")[1].startswith(prefix)
        ]

    def start(self) -> GitServer:
        if not Path(HTTP_BACKEND).exists() or shutil.which("git") is None:
            raise StackError(f"git and {HTTP_BACKEND} are needed (Debian's git package)")
        self.root.mkdir(parents=True, exist_ok=True)
        hack = Path(__file__).resolve().parents[1]
        self._proc = Process(
            "git-http",
            [
                sys.executable,
                "-m",
                "localstack.gitserver",
                f"--root={self.root}",
                f"--port={self.port}",
            ],
            self.log_path,
            env={**os.environ, "PYTHONPATH": str(hack)},
        )
        self._proc.start()
        self._proc.wait_until(lambda: port_open(self.port), 30, "listening")
        return self


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--port", required=True, type=int)
    args = parser.parse_args(argv)
    serve(args.root, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
