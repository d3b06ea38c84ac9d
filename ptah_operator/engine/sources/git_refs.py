"""What a Git server advertises, and what a ref means against it. Pure: no I/O.

The advertisement is the smart-HTTP reply to `GET <repository>/info/refs?service=git-upload-pack`
in protocol v0/v1: pkt-lines holding every ref with its object id, the peeled commit of each
annotated tag (`refs/tags/v1^{}`), and the server's capabilities on the first line. Protocol v2
is not asked for on purpose: only the v0 advertisement says whether the server gives commits by
id (`allow-reachable-sha1-in-want`, `allow-any-sha1-in-want`, from git's
`uploadpack.allowReachableSHA1InWant` / `uploadpack.allowAnySHA1InWant`), which decides what a
commit-pinned source may ask for (SRC-GIT-10).

Ref rules (SRC-GIT-02, SRC-GIT-13):
- `HEAD`: the server's default branch tip.
- `refs/heads/<name>` or `refs/tags/<name>`: that ref exactly.
- `<name>`: the branch or the tag of that name; a name that is both is refused as ambiguous
  (write the full ref).
- 40 hex digits: that commit, allowed only when a branch or a lightweight tag points at it or
  the server advertises one of the two capabilities above; otherwise refused before anything is
  fetched. Abbreviated ids are not resolved.
- A tag names the commit it points at: an annotated tag is peeled to its commit. A branch
  names its tip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ptah_operator.engine.sources.errors import (
    CommitNotAdvertisedError,
    RefNotFoundError,
    SourceRefusedError,
    SourceUnreachableError,
)

ALLOW_REACHABLE = "allow-reachable-sha1-in-want"
ALLOW_ANY = "allow-any-sha1-in-want"
HEADS = "refs/heads/"
TAGS = "refs/tags/"
PEELED_SUFFIX = "^{}"
ZERO_ID = "0" * 40

_COMMIT_ID = re.compile(r"^[0-9a-fA-F]{40}$")
_OBJECT_ID = re.compile(r"^[0-9a-f]{40}$")
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|/\.|\.lock$|^/|/$|^-")

# The fetch budget (REQUIREMENTS Decisions, 16): deepen along the ref's history by doubling
# from 50 commits up to 1,600 commits or 256 MiB fetched, whichever comes first.
FIRST_DEPTH = 50
MAX_DEPTH = 1600
MAX_FETCH_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class FetchBudget:
    first_depth: int = FIRST_DEPTH
    max_depth: int = MAX_DEPTH
    max_bytes: int = MAX_FETCH_BYTES

    def __post_init__(self) -> None:
        if self.first_depth < 1 or self.max_depth < self.first_depth or self.max_bytes < 1:
            raise ValueError("a fetch budget needs 1 <= first_depth <= max_depth and max_bytes > 0")

    def depths(self) -> list[int]:
        """The depths tried along the ref's history: first_depth doubling, the last one capped
        at max_depth (50, 100, 200, 400, 800, 1600 by default)."""
        out: list[int] = []
        depth = self.first_depth
        while depth < self.max_depth:
            out.append(depth)
            depth *= 2
        out.append(self.max_depth)
        return out


@dataclass(frozen=True)
class Advertisement:
    refs: Mapping[str, str]
    """Ref name (`HEAD`, `refs/heads/main`, `refs/tags/v1`) -> the object id it points at."""
    peeled: Mapping[str, str]
    """Annotated tag ref -> the object its tag object finally names."""
    capabilities: frozenset[str]

    @property
    def allows_any_commit_id(self) -> bool:
        """The server gives a commit asked for by id even when no ref points at it."""
        return bool({ALLOW_REACHABLE, ALLOW_ANY} & self.capabilities)

    def tip_names(self, commit: str) -> list[str]:
        """Branches and lightweight tags that point straight at `commit`."""
        return sorted(
            name
            for name, value in self.refs.items()
            if value == commit and (name.startswith((HEADS, TAGS)))
        )

    def allows_commit_id(self, commit: str) -> bool:
        """May `commit` be asked for by id (SRC-GIT-10)?"""
        return self.allows_any_commit_id or bool(self.tip_names(commit))


@dataclass(frozen=True)
class RefTarget:
    """What a ref means against an advertisement."""

    ref: str
    """The ref as given."""
    name: str | None
    """The full ref name (`refs/heads/main`), None for a commit id."""
    want: str
    """The object to ask the server for: the ref's own value (an annotated tag's tag object),
    or the commit id."""
    commit: str
    """The commit the advertisement says it names: a branch tip, a lightweight tag's value, an
    annotated tag's peeled value, the commit id (a tag the server did not peel: its value)."""

    @property
    def kind(self) -> str:
        if self.name is None:
            return "commit"
        if self.name.startswith(TAGS):
            return "tag"
        return "branch"


def is_commit_id(ref: str) -> bool:
    return bool(_COMMIT_ID.match(ref))


def check_ref(ref: str) -> None:
    """Refuse a ref that no server could hold (and that a message should not repeat)."""
    if not isinstance(ref, str) or not ref or len(ref) > 255 or _BAD_REF.search(ref):
        raise RefNotFoundError("the ref is not a valid branch, tag or commit id")


def resolve_ref(advertisement: Advertisement, ref: str) -> RefTarget:
    """What `ref` names on the server; RefNotFoundError or CommitNotAdvertisedError else."""
    check_ref(ref)
    refs = advertisement.refs
    if is_commit_id(ref):
        commit = ref.lower()
        if not advertisement.allows_commit_id(commit):
            raise CommitNotAdvertisedError(
                f"commit {commit} is at no branch or tag tip and the server does not give"
                " commits by id (uploadpack.allowReachableSHA1InWant is off); name a tag or"
                " a branch instead"
            )
        return RefTarget(ref=ref, name=None, want=commit, commit=commit)
    if ref == "HEAD":
        candidates = ["HEAD"] if "HEAD" in refs else []
    elif ref.startswith("refs/"):
        if not (ref.startswith((HEADS, TAGS))):
            raise RefNotFoundError(f"ref {ref} is neither a branch nor a tag")
        candidates = [ref] if ref in refs else []
    else:
        candidates = [name for name in (HEADS + ref, TAGS + ref) if name in refs]
    if not candidates:
        raise RefNotFoundError(f"the server has no branch or tag {ref}")
    if len(candidates) > 1:
        raise RefNotFoundError(
            f"{ref} names both a branch and a tag; write refs/heads/{ref} or refs/tags/{ref}"
        )
    name = candidates[0]
    value = refs[name]
    # An annotated tag names its peeled commit. A tag with no peeled line is lightweight (or
    # from a server that does not peel: the fetched object says which, see git.peel).
    commit = advertisement.peeled.get(name, value) if name.startswith(TAGS) else value
    return RefTarget(ref=ref, name=name, want=value, commit=commit)


def pkt_lines(data: bytes) -> Iterator[bytes | None]:
    """The pkt-lines of `data`; None for a flush-pkt (`0000`)."""
    pos = 0
    while pos < len(data):
        head = data[pos : pos + 4]
        try:
            size = int(head, 16)
        except ValueError:
            raise SourceUnreachableError("the Git server's advertisement is malformed") from None
        if size in (0, 1, 2):  # flush, delim, response-end
            yield None
            pos += 4
            continue
        if size < 4 or pos + size > len(data):
            raise SourceUnreachableError("the Git server's advertisement is malformed")
        yield data[pos + 4 : pos + size]
        pos += size


def parse_advertisement(body: bytes) -> Advertisement:
    """Parse a smart-HTTP `info/refs?service=git-upload-pack` reply (protocol v0/v1)."""
    lines = list(pkt_lines(body))
    # "# service=git-upload-pack", flush, then refs (an optional "version 1" line first).
    if not lines or lines[0] is None or not lines[0].startswith(b"# service=git-upload-pack"):
        raise SourceUnreachableError("the Git server did not answer as a smart HTTP server")
    rest = lines[1:]
    if rest and rest[0] is None:
        rest = rest[1:]
    return advertisement_of_lines(rest)


def advertisement_of_lines(rest: Iterable[bytes | None]) -> Advertisement:
    """The refs and capabilities of a v0/v1 advertisement's pkt-lines, as smart HTTP sends
    them after its `# service=` header and as `git-upload-pack` sends them over SSH."""
    refs: dict[str, str] = {}
    peeled: dict[str, str] = {}
    capabilities: frozenset[str] = frozenset()
    first = True
    for line in rest:
        if line is None:
            break
        text = line.rstrip(b"\n")
        if first and text.startswith(b"version "):
            if text != b"version 1":
                raise SourceUnreachableError("the Git server answered another protocol version")
            continue
        if first:
            text, _, caps = text.partition(b"\x00")
            capabilities = frozenset(c.decode("ascii", "replace") for c in caps.split() if c)
            first = False
        oid, _, name_bytes = text.partition(b" ")
        name = name_bytes.decode("utf-8", "replace")
        object_id = oid.decode("ascii", "replace")
        if not _OBJECT_ID.match(object_id):
            if len(object_id) == 64:
                raise SourceRefusedError("the repository uses SHA-256 object ids; not supported")
            raise SourceUnreachableError("the Git server's advertisement is malformed")
        if name == "capabilities^{}" and object_id == ZERO_ID:
            continue  # an empty repository
        if name.endswith(PEELED_SUFFIX):
            peeled[name[: -len(PEELED_SUFFIX)]] = object_id
        else:
            refs[name] = object_id
    return Advertisement(refs=refs, peeled=peeled, capabilities=capabilities)


def normalize_path(path: str | None) -> tuple[str, ...]:
    """The selected directory as components; () for the repository's root (None, "", ".")."""
    if path is None:
        return ()
    text = path.strip("/")
    if text in ("", "."):
        return ()
    parts = tuple(text.split("/"))
    for part in parts:
        if part in ("", ".", "..") or any(ord(c) < 0x20 or c == "\x7f" for c in part):
            raise SourceRefusedError(
                "the path must be a relative directory path without '.', '..' or empty parts"
            )
    if len(text) > 4096:
        raise SourceRefusedError("the path is too long")
    return parts
