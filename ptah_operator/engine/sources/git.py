"""Git sources over HTTP(S) and SSH: resolve a ref to a commit and read the selected files, or
fetch a recorded commit again. dulwich speaks the smart protocol; nothing is checked out.

Transport: `http://` and `https://` repositories (smart HTTP, protocol v0/v1; a "dumb" server
is refused), with HTTP basic credentials from a directory holding `username` and `password`; a
URL with userinfo is refused; HTTPS trusts the system's CAs. `ssh://` and scp-like
`user@host:path` repositories through OpenSSH's `ssh`, with the key and the pinned host keys of
the Secret (git_ssh: a host key the Secret does not pin is never accepted).

Selection (SRC-GIT-14): `path` names a directory of the commit's tree (None, "" or "." for the
root). The files are the regular files directly in it, by name; subdirectories are ignored, so
one directory is one flat set of files, as a ConfigMap source is. Refused, naming the rule:
the path missing or not a directory; a submodule (gitlink) at or on the path, or in the
directory; a symbolic link in the directory; a Git LFS pointer file (its content is not in the
repository); a name that is not a flat file name (`files.valid_file_name`); a file over 4 MiB;
a total over the caller's limit (the source policy's maxBytes).

Resolve (SRC-GIT-02, -10, -11, -13): read the advertisement, resolve the ref (git_refs), then
fetch that one commit with depth 1 and read the files.

Fetch again (SRC-GIT-08, -09), in this order:
1. through the ref, while the ref still names the commit (depth 1);
2. by the commit's id, where the advertisement allows it (a branch or lightweight tag points at
   it, or the server advertises allow-reachable-sha1-in-want / allow-any-sha1-in-want);
3. along the ref's history, fetching depth 50, 100, 200, … up to 1,600 commits, or until 256 MiB
   have been fetched (the fetch budget), stopping early once the whole history is in.
A commit none of these reach is refused as unreachable (a force-push, a deleted ref).
Each try is a fresh shallow fetch into memory (the pack, then its objects: a fetch near the
256 MiB budget needs memory of that order): nothing is written to disk.
"""

from __future__ import annotations

import io
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import requests
from dulwich.client import (
    GitClient,
    HTTPProxyUnauthorized,
    HTTPUnauthorized,
    SSHGitClient,
    Urllib3HttpGitClient,
)
from dulwich.errors import GitProtocolError, HangupException, NotGitRepository
from dulwich.object_store import MemoryObjectStore, ObjectStoreGraphWalker
from dulwich.objects import S_ISGITLINK, Blob, Commit, ObjectID, Tag, Tree
from dulwich.pack import PackData, PackInflater
from dulwich.refs import Ref

from ptah_operator.engine.sources.errors import (
    CommitUnreachableError,
    RefNotFoundError,
    SourceRefusedError,
    SourceUnreachableError,
)
from ptah_operator.engine.sources.files import (
    MAX_FILE_BYTES,
    Credentials,
    check_name,
    check_total,
    is_lfs_pointer,
)
from ptah_operator.engine.sources.git_refs import (
    Advertisement,
    FetchBudget,
    RefTarget,
    advertisement_of_lines,
    is_commit_id,
    normalize_path,
    parse_advertisement,
    resolve_ref,
)
from ptah_operator.engine.sources.git_ssh import (
    KNOWN_HOSTS_MISSING,
    PinnedSshVendor,
    SshCredentials,
    is_ssh,
    parse_ssh_repository,
)
from ptah_operator.engine.sources.unreachable import reaching

DEFAULT_TIMEOUT = 60.0
ADVERTISEMENT_TYPE = "application/x-git-upload-pack-advertisement"
MAX_ADVERTISEMENT_BYTES = 32 * 1024 * 1024
MAX_SINGLE_FETCH_BYTES = 256 * 1024 * 1024
"""One depth-1 fetch (a commit's whole tree) may not exceed the budget's byte limit either."""


@dataclass(frozen=True)
class GitFiles:
    """The files a commit selects, and the commit."""

    commit: str
    files: dict[str, bytes]
    ref_name: str | None = None
    """The full ref the commit was reached through (None: by id)."""


class _BudgetSpentError(Exception):
    pass


class _Fetched:
    """The objects of one fetch, and whether the server cut the history short."""

    def __init__(self, store: MemoryObjectStore, shallow: bool, size: int) -> None:
        self.store = store
        self.shallow = shallow
        self.size = size


def check_repository(repository: str) -> str:
    """The repository URL, refused unless http(s) with no credentials in it or SSH
    (git_ssh.parse_ssh_repository). Messages never repeat the URL."""
    if not isinstance(repository, str) or len(repository) > 2048:
        raise SourceRefusedError("the repository must be an http://, https:// or ssh:// URL")
    if is_ssh(repository):
        parse_ssh_repository(repository)
        return repository
    parts = urlsplit(repository)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SourceRefusedError(
            "the repository must be an http://, https:// or ssh:// URL, or user@host:path"
        )
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise SourceRefusedError("the repository URL must not carry credentials")
    if parts.query or parts.fragment:
        raise SourceRefusedError("the repository URL must have no query or fragment")
    return repository.rstrip("/")


class GitRemote:
    """One repository on a smart HTTP Git server or an SSH server."""

    def __init__(
        self,
        repository: str,
        credentials: Credentials | SshCredentials | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.url = check_repository(repository)
        self.ssh = parse_ssh_repository(self.url) if is_ssh(self.url) else None
        self.ssh_credentials: SshCredentials | None = None
        self.credentials: Credentials | None = None
        if self.ssh is not None:
            self.host = self.ssh.shown
            if not isinstance(credentials, SshCredentials):
                raise SourceUnreachableError(
                    "an SSH repository needs a Secret with known_hosts and ssh-privatekey"
                    f" ({KNOWN_HOSTS_MISSING})"
                )
            self.ssh_credentials = credentials
        else:
            self.host = urlsplit(self.url).netloc.lower()
            if isinstance(credentials, SshCredentials):
                raise SourceUnreachableError(
                    f"the Git server {self.host} is reached over HTTP: the Secret needs"
                    " username and password"
                )
            self.credentials = credentials
        self.timeout = timeout

    # -- the advertisement --------------------------------------------------------------

    def advertisement(self) -> Advertisement:
        """`GET info/refs?service=git-upload-pack` in protocol v0 (ls-remote); over SSH,
        `git-upload-pack` in protocol v0."""
        if self.ssh is not None:
            return self._ssh_advertisement()
        auth = (
            (self.credentials.username, self.credentials.password)
            if self.credentials is not None
            else None
        )
        with reaching(f"the Git server {self.host}"):
            response = requests.get(
                self.url + "/info/refs",
                params={"service": "git-upload-pack"},
                headers={"Accept": "*/*", "Pragma": "no-cache"},
                auth=auth,
                timeout=self.timeout,
                stream=True,
            )
        try:
            if response.status_code == 401:
                raise self._unauthorized()
            if response.status_code == 403:
                raise SourceUnreachableError(f"the Git server {self.host} denies access")
            if response.status_code == 404:
                raise SourceUnreachableError(f"the Git server {self.host} has no such repository")
            if response.status_code != 200:
                raise SourceUnreachableError(
                    f"the Git server {self.host} answered HTTP {response.status_code}"
                )
            content_type = response.headers.get("Content-Type", "").split(";")[0].strip()
            if content_type != ADVERTISEMENT_TYPE:
                raise SourceUnreachableError(
                    f"the Git server {self.host} is not a smart HTTP Git server"
                )
            body = bytearray()
            for chunk in response.iter_content(64 * 1024):
                body += chunk
                if len(body) > MAX_ADVERTISEMENT_BYTES:
                    raise SourceRefusedError("the repository advertises too many refs")
        except requests.exceptions.RequestException:
            raise SourceUnreachableError(
                f"the Git server {self.host}'s answer could not be read"
            ) from None
        finally:
            response.close()
        return parse_advertisement(bytes(body))

    def _ssh_client(self) -> tuple[SSHGitClient, PinnedSshVendor]:
        assert self.ssh is not None
        assert self.ssh_credentials is not None
        vendor = PinnedSshVendor(self.ssh_credentials, self.ssh)
        client = SSHGitClient(
            self.ssh.host,
            port=self.ssh.port,
            username=self.ssh.username,
            vendor=vendor,
            thin_packs=False,
            quiet=True,
        )
        return client, vendor

    def _ssh_advertisement(self) -> Advertisement:
        assert self.ssh is not None
        client, vendor = self._ssh_client()
        try:
            # dulwich's get_refs does not return a v0 advertisement's capabilities, which
            # decide SRC-GIT-10: read the advertisement's pkt-lines from its connection.
            proto, _, _ = client._connect(b"upload-pack", self.ssh.path, 0)
            with proto:
                lines: list[bytes | None] = []
                size = 0
                for line in proto.read_pkt_seq():
                    size += len(line)
                    if size > MAX_ADVERTISEMENT_BYTES:
                        raise SourceRefusedError("the repository advertises too many refs")
                    lines.append(line)
                proto.write_pkt_line(None)
        except HangupException as exc:
            raise vendor.failure(self.host, exc.stderr_lines or ()) from None
        except GitProtocolError:
            raise vendor.failure(self.host) from None
        except OSError:
            raise vendor.failure(self.host) from None
        finally:
            client.close()
        return advertisement_of_lines(lines)

    def _unauthorized(self) -> SourceUnreachableError:
        if self.credentials is None:
            return SourceUnreachableError(
                f"the Git server {self.host} asks for credentials and none were given"
            )
        return SourceUnreachableError(f"the Git server {self.host} refused the credentials")

    # -- fetching -----------------------------------------------------------------------

    def fetch(self, want: str, depth: int, max_bytes: int) -> _Fetched:
        """A shallow fetch of `want` into memory; _BudgetSpentError past `max_bytes`."""
        client: GitClient
        vendor: PinnedSshVendor | None = None
        if self.ssh is not None:
            client, vendor = self._ssh_client()
            path = self.ssh.path
        else:
            client = Urllib3HttpGitClient(
                self.url,
                username=self.credentials.username if self.credentials else None,
                password=self.credentials.password if self.credentials else None,
                timeout=self.timeout,
                thin_packs=False,
                quiet=True,
            )
            path = ""
        store = MemoryObjectStore()
        # The pack stays in memory: the Job's root filesystem is read-only, so dulwich's own
        # spooling to a temporary file past 16 MiB is not an option.
        pack = io.BytesIO()
        size = 0

        def pack_data(chunk: bytes) -> int:
            nonlocal size
            size += len(chunk)
            if size > max_bytes:
                raise _BudgetSpentError
            return pack.write(chunk)

        def determine_wants(
            refs: Mapping[Ref, ObjectID], depth: int | None = None
        ) -> list[ObjectID]:
            return [ObjectID(want.encode("ascii"))]

        walker = ObjectStoreGraphWalker([], lambda _sha: [])
        try:
            result = client.fetch_pack(
                path,
                determine_wants,
                walker,
                pack_data,
                depth=depth,
                protocol_version=0,
            )
        except HangupException as exc:
            if vendor is None:
                raise
            raise vendor.failure(self.host, exc.stderr_lines or ()) from None
        finally:
            client.close()
        if getattr(client, "dumb", False):
            raise SourceUnreachableError(
                f"the Git server {self.host} is not a smart HTTP Git server"
            )
        try:
            _unpack(store, pack, size)
        except Exception:
            raise SourceUnreachableError(
                f"the Git server {self.host} sent a pack that cannot be read"
            ) from None
        return _Fetched(store, bool(result.new_shallow), size)

    def fetch_checked(
        self,
        want: str,
        depth: int,
        max_bytes: int,
        *,
        refused: Callable[[], Exception],
    ) -> _Fetched:
        """`fetch`, mapping the server's refusal to give `want` to `refused()`."""
        try:
            return self.fetch(want, depth, max_bytes)
        except HTTPUnauthorized:
            raise self._unauthorized() from None
        except HTTPProxyUnauthorized:
            raise SourceUnreachableError("the proxy refused the credentials") from None
        except NotGitRepository:
            raise SourceUnreachableError(
                f"the Git server {self.host} has no such repository"
            ) from None
        except GitProtocolError as exc:
            # The server's own words are not repeated; "not our ref" means it will not give
            # the object, anything else that the exchange failed.
            if "not our ref" in str(exc).lower():
                raise refused() from None
            raise SourceUnreachableError(
                f"the fetch from the Git server {self.host} failed"
            ) from None


def _unpack(store: MemoryObjectStore, pack: io.BytesIO, size: int) -> None:
    """Check the pack's trailing checksum, then add its objects (deltas resolved) to `store`."""
    if size == 0:
        return
    pack.seek(0)
    data = PackData.from_file(pack, store.object_format, size)
    try:
        data.check()
        for obj in PackInflater.for_pack_data(data, store.get_raw):
            store.add_object(obj)
    finally:
        data.close()


def peel(store: MemoryObjectStore, oid: str, what: str) -> str:
    """The commit `oid` names (annotated tags peeled); refused if it names no commit."""
    current = ObjectID(oid.encode("ascii"))
    for _ in range(16):
        try:
            obj = store[current]
        except KeyError:
            raise CommitUnreachableError(f"the server did not send {what}") from None
        if isinstance(obj, Commit):
            return current.decode("ascii")
        if isinstance(obj, Tag):
            current = obj.object[1]
            continue
        raise SourceRefusedError(f"{what} names a {obj.type_name.decode()}, not a commit")
    raise SourceRefusedError(f"{what} is a chain of tags too long to follow")


def select_files(
    store: MemoryObjectStore,
    commit: str,
    path: str | None,
    max_bytes: int | None = None,
    limit_rule: str = "the limit",
) -> dict[str, bytes]:
    """The regular files directly in `path` at `commit` (see the module's selection rules)."""
    parts = normalize_path(path)
    shown = "/".join(parts) or "the repository root"
    obj = store[ObjectID(commit.encode("ascii"))]
    if not isinstance(obj, Commit):
        raise SourceRefusedError(f"{commit} is not a commit")
    tree = store[obj.tree]
    walked: list[str] = []
    for part in parts:
        walked.append(part)
        assert isinstance(tree, Tree)
        try:
            mode, sha = tree[part.encode("utf-8")]
        except KeyError:
            raise SourceRefusedError(
                f"path {'/'.join(parts)} does not exist at commit {commit}"
            ) from None
        if S_ISGITLINK(mode):
            raise SourceRefusedError(
                f"path {'/'.join(walked)} is a submodule at commit {commit};"
                " submodules are not read"
            )
        if not stat.S_ISDIR(mode):
            raise SourceRefusedError(
                f"path {'/'.join(walked)} is not a directory at commit {commit}"
            )
        tree = store[sha]
    assert isinstance(tree, Tree)
    files: dict[str, bytes] = {}
    total = 0
    for entry in tree.iteritems():
        raw_name, mode, sha = entry.path, entry.mode, entry.sha
        name = raw_name.decode("utf-8", "replace")
        if S_ISGITLINK(mode):
            raise SourceRefusedError(f"{shown} holds a submodule {name!r}; submodules are not read")
        if stat.S_ISDIR(mode):
            continue  # only the directory's own files: subdirectories are not selected
        if stat.S_ISLNK(mode):
            raise SourceRefusedError(f"{shown} holds a symbolic link {name!r}")
        check_name(name, f"{shown} holds a file")
        blob = store[sha]
        if not isinstance(blob, Blob):
            raise SourceRefusedError(f"file {name} is not a blob")
        data = blob.as_raw_string()
        if len(data) > MAX_FILE_BYTES:
            raise SourceRefusedError(
                f"file {name} is {len(data)} bytes, over the limit of {MAX_FILE_BYTES} bytes"
            )
        if is_lfs_pointer(data):
            raise SourceRefusedError(
                f"file {name} is a Git LFS pointer; its content is not in the repository"
            )
        total += len(data)
        files[name] = data
    check_total(total, max_bytes, limit_rule)
    return files


def resolve(
    repository: str,
    ref: str,
    path: str | None,
    *,
    credentials: Credentials | SshCredentials | None = None,
    max_bytes: int | None = None,
    limit_rule: str = "the source policy's maxBytes",
    timeout: float = DEFAULT_TIMEOUT,
) -> GitFiles:
    """The commit `ref` names now and the files it selects (the Resolve operation).
    Nothing is fetched for a commit id the advertisement does not allow (SRC-GIT-10)."""
    normalize_path(path)
    remote = GitRemote(repository, credentials, timeout=timeout)
    target = resolve_ref(remote.advertisement(), ref)
    return _through(remote, target, path, max_bytes, limit_rule)


def _through(
    remote: GitRemote,
    target: RefTarget,
    path: str | None,
    max_bytes: int | None,
    limit_rule: str,
) -> GitFiles:
    what = f"ref {target.ref}" if target.name else f"commit {target.want}"
    try:
        fetched = remote.fetch_checked(
            target.want,
            1,
            MAX_SINGLE_FETCH_BYTES,
            refused=lambda: CommitUnreachableError(f"the server does not give {what}"),
        )
    except _BudgetSpentError:
        raise SourceRefusedError(
            f"fetching {what} takes more than {_size(MAX_SINGLE_FETCH_BYTES)}"
        ) from None
    commit = peel(fetched.store, target.want, what)
    files = select_files(fetched.store, commit, path, max_bytes, limit_rule)
    return GitFiles(commit=commit, files=files, ref_name=target.name)


def fetch_commit(
    repository: str,
    ref: str,
    commit: str,
    path: str | None,
    budget: FetchBudget | None = None,
    *,
    credentials: Credentials | SshCredentials | None = None,
    max_bytes: int | None = None,
    limit_rule: str = "the limit",
    timeout: float = DEFAULT_TIMEOUT,
) -> GitFiles:
    """The files `commit` selects, fetched again in the order of SRC-GIT-08."""
    budget = budget or FetchBudget()
    if not is_commit_id(commit):
        raise SourceRefusedError("the recorded commit must be 40 hex digits")
    commit = commit.lower()
    normalize_path(path)
    remote = GitRemote(repository, credentials, timeout=timeout)
    advertisement = remote.advertisement()
    target: RefTarget | None = None
    if not is_commit_id(ref):
        try:
            target = resolve_ref(advertisement, ref)
        except RefNotFoundError:  # the ref is gone (or ambiguous) now: the id or nothing
            target = None
    # 1. Through the ref while it still names the commit.
    if target is not None and target.commit == commit:
        found = _through(remote, target, path, max_bytes, limit_rule)
        if found.commit == commit:
            return found
    # 2. By id where the advertisement allows it.
    if advertisement.allows_commit_id(commit):
        by_id = RefTarget(ref=commit, name=None, want=commit, commit=commit)
        return _through(remote, by_id, path, max_bytes, limit_rule)
    # 3. Along the ref's history, deeper each time, within the budget.
    if target is None:
        gone = "" if is_commit_id(ref) else f", {ref} no longer names it,"
        raise CommitUnreachableError(
            f"commit {commit} is at no branch or tag tip{gone} and the server does not give"
            " commits by id"
        )
    spent = 0
    for depth in budget.depths():
        try:
            fetched = remote.fetch_checked(
                target.want,
                depth,
                budget.max_bytes - spent,
                refused=lambda: CommitUnreachableError(f"the server does not give ref {ref}"),
            )
        except _BudgetSpentError:
            break
        spent += fetched.size
        if ObjectID(commit.encode("ascii")) in fetched.store:
            files = select_files(fetched.store, commit, path, max_bytes, limit_rule)
            return GitFiles(commit=commit, files=files, ref_name=target.name)
        if not fetched.shallow:
            raise CommitUnreachableError(
                f"commit {commit} is not in the history of {ref} (force-pushed or deleted)"
            )
    raise CommitUnreachableError(
        f"commit {commit} is not within the last {budget.max_depth} commits or"
        f" {_size(budget.max_bytes)} of the history of {ref} (the fetch budget)"
    )


def _size(count: int) -> str:
    mib = 1024 * 1024
    return f"{count // mib} MiB" if count % mib == 0 else f"{count} bytes"
