"""The source policy a ConfigMap or Git source may name with `sourcePolicyFrom` (SRC-POL).

The seeds say what a source policy checks and when, not how it is written, so the format is
ours (docs/guide-sources.md):

```yaml
version: 1
configMaps:
  names: ["billing-*"]          # fnmatch patterns a source ConfigMap's name must match
git:
  hosts: ["git.example.com"]    # hosts (optionally host:port) a repository URL may name
maxBytes: 524288                # the selected files together, at most
```

Every field but `version` is optional; an absent rule allows everything. When the source is
resolved, the manager checks a ConfigMap's name and size before it writes a snapshot
(SRC-POL-02) and a Git host before it creates the Resolve Job (SRC-POL-03); the Resolve Job
checks the size of a commit's selected files before the commit is recorded (SRC-POL-04). A
refusal names the rule (SRC-POL-05). The policy's digest (SHA-256 of the key's bytes) is
recorded beside the resolution and bound into every plan made from it (SRC-POL-06).

Pure: parsing and checking only, no I/O.
"""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass
from urllib.parse import urlsplit

import yaml

SOURCE_POLICY_VERSION = 1
MAX_POLICY_BYTES = 64 * 1024


class SourcePolicyError(ValueError):
    """The policy cannot be read; the message says where (never the policy's content)."""


@dataclass(frozen=True)
class SourcePolicy:
    config_map_names: tuple[str, ...] | None = None
    git_hosts: tuple[str, ...] | None = None
    max_bytes: int | None = None

    def refuse_config_map(self, name: str, size: int) -> str | None:
        """Why a source ConfigMap is refused (the rule, and what broke it), or None."""
        if self.config_map_names is not None and not any(
            fnmatch.fnmatchcase(name, pattern) for pattern in self.config_map_names
        ):
            return f"rule configMaps.names does not allow ConfigMap {name}"
        return self.refuse_size(size)

    def refuse_git_host(self, repository: str) -> str | None:
        """Why a Git repository's host is refused, or None."""
        if self.git_hosts is None:
            return None
        host = git_host(repository)
        if host is None:
            return "rule git.hosts cannot read a host in the repository URL"
        bare = host.rsplit(":", 1)[0] if ":" in host and not host.endswith("]") else host
        if any(fnmatch.fnmatchcase(h, pattern) for pattern in self.git_hosts for h in (host, bare)):
            return None
        return f"rule git.hosts does not allow host {bare}"

    def refuse_size(self, size: int) -> str | None:
        if self.max_bytes is not None and size > self.max_bytes:
            return f"rule maxBytes allows {self.max_bytes} bytes; the selected files hold {size}"
        return None


def git_host(repository: str) -> str | None:
    """The host[:port] a repository URL names: https://host/..., ssh://user@host/..., or the
    scp-like user@host:path."""
    if "://" in repository:
        netloc = urlsplit(repository).netloc
        return netloc.rsplit("@", 1)[-1] or None
    if "@" in repository and ":" in repository:
        return repository.split("@", 1)[1].split(":", 1)[0] or None
    return None


def policy_digest(raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def _patterns(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise SourcePolicyError(f"{where} must be a non-empty list of strings")
    return tuple(value)


def parse_source_policy(raw: bytes) -> SourcePolicy:
    """Read a source policy, or raise SourcePolicyError naming the field that is wrong."""
    if len(raw) > MAX_POLICY_BYTES:
        raise SourcePolicyError(f"the policy is larger than {MAX_POLICY_BYTES} bytes")
    try:
        document = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError):
        raise SourcePolicyError("the policy is not valid YAML") from None
    if not isinstance(document, dict):
        raise SourcePolicyError("the policy must be a mapping")
    unknown = sorted(set(document) - {"version", "configMaps", "git", "maxBytes"})
    if unknown:
        raise SourcePolicyError(f"unknown field {unknown[0]}")
    if document.get("version") != SOURCE_POLICY_VERSION:
        raise SourcePolicyError(f"version must be {SOURCE_POLICY_VERSION}")
    names: tuple[str, ...] | None = None
    hosts: tuple[str, ...] | None = None
    config_maps = document.get("configMaps")
    if config_maps is not None:
        if not isinstance(config_maps, dict) or set(config_maps) - {"names"}:
            raise SourcePolicyError("configMaps may hold only names")
        if "names" in config_maps:
            names = _patterns(config_maps["names"], "configMaps.names")
    git = document.get("git")
    if git is not None:
        if not isinstance(git, dict) or set(git) - {"hosts"}:
            raise SourcePolicyError("git may hold only hosts")
        if "hosts" in git:
            hosts = _patterns(git["hosts"], "git.hosts")
    max_bytes = document.get("maxBytes")
    if max_bytes is not None and (
        not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 0
    ):
        raise SourcePolicyError("maxBytes must be a non-negative integer")
    return SourcePolicy(config_map_names=names, git_hosts=hosts, max_bytes=max_bytes)
