"""A throwaway OCI registry: Debian's `docker-registry` (distribution 2.8), on 127.0.0.1.

`docker-registry serve CONFIG` with a filesystem root in the stack's work directory, plain
HTTP (clients must list `127.0.0.1:PORT` as an insecure registry), no blob descriptor cache (a
test may alter a stored blob on disk and must see the registry serve what is there now). With
`auth=(user, password)` the registry asks for HTTP basic credentials (an htpasswd file with a
bcrypt hash). With `token_auth=` (a `TokenIssuer`'s `registry_auth()` block) it asks for
Bearer tokens from that issuer instead. Removed when it stops.
"""

from __future__ import annotations

import json
import secrets
import shutil
import urllib.request
import warnings
from pathlib import Path

from localstack.process import OneProcessServer, Process, StackError, free_port, port_open

BINARY = "docker-registry"


def _bcrypt(password: str) -> str:
    """A bcrypt hash for htpasswd (the only scheme distribution accepts)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt  # Python 3.11's libcrypt binding; bcrypt is in Debian's libxcrypt

        hashed = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 4))
    if not hashed or not hashed.startswith("$2"):
        raise StackError("this libcrypt cannot make bcrypt hashes for the registry's htpasswd")
    return hashed


class OciRegistry(OneProcessServer):
    """`with OciRegistry(workdir) as reg:`; `reg.host` is `127.0.0.1:PORT`, `reg.ref(repo,
    tag)` an `oci://` reference, `reg.root` the storage directory."""

    def __init__(
        self,
        workdir: Path,
        port: int | None = None,
        auth: tuple[str, str] | None = None,
        name: str = "registry",
        token_auth: dict[str, object] | None = None,
    ) -> None:
        self.workdir = workdir / f"{name}-{secrets.token_hex(3)}"
        self.port = port or free_port()
        self.auth = auth
        self.token_auth = token_auth
        self.root = self.workdir / "storage"
        self.config_path = self.workdir / "config.yml"
        self._proc: Process | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def ref(self, repository: str, tag: str | None = None, digest: str | None = None) -> str:
        text = f"oci://{self.host}/{repository}"
        if tag:
            text += f":{tag}"
        if digest:
            text += f"@{digest}"
        return text

    def blob_path(self, digest: str) -> Path:
        """Where the registry keeps a blob (a manifest is a blob too): tests tamper with it."""
        hex_digest = digest.removeprefix("sha256:")
        return self.root / "docker/registry/v2/blobs/sha256" / hex_digest[:2] / hex_digest / "data"

    def _config(self) -> dict[str, object]:
        config: dict[str, object] = {
            "version": 0.1,
            "log": {"level": "warn", "accesslog": {"disabled": True}},
            "storage": {
                "filesystem": {"rootdirectory": str(self.root)},
                "delete": {"enabled": True},
                "maintenance": {"uploadpurging": {"enabled": False}},
            },
            "http": {"addr": self.host, "secret": secrets.token_hex(16)},
        }
        if self.auth is not None:
            htpasswd = self.workdir / "htpasswd"
            htpasswd.write_text(f"{self.auth[0]}:{_bcrypt(self.auth[1])}\n")
            config["auth"] = {"htpasswd": {"realm": "ptah-test", "path": str(htpasswd)}}
        elif self.token_auth is not None:
            config["auth"] = self.token_auth
        return config

    def start(self) -> OciRegistry:
        if shutil.which(BINARY) is None:
            raise StackError(
                f"{BINARY} not found (install Debian's docker-registry: hack/install-deps.sh)"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        # JSON is YAML: no YAML writer needed.
        self.config_path.write_text(json.dumps(self._config(), indent=2))
        self._proc = Process(
            "docker-registry",
            [BINARY, "serve", str(self.config_path)],
            self.workdir / "registry.log",
        )
        self._proc.start()
        self._proc.wait_until(self._ready, 30, "serving /v2/")
        return self

    def _ready(self) -> bool:
        if not port_open(self.port):
            return False
        try:
            with urllib.request.urlopen(f"http://{self.host}/v2/", timeout=2) as answer:
                return int(answer.status) == 200
        except urllib.error.HTTPError as exc:
            return exc.code == 401 and (self.auth is not None or self.token_auth is not None)
