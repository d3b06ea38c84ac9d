"""OCI artifacts: resolve a reference to a digest, inspect its type, fetch its files by digest.

Reference: `oci://host[:port]/repository[:tag][@sha256:<64 hex>]`; a reference with neither
tag nor digest means the tag `latest`. No userinfo: credentials come from a directory.

Artifact layout (docs/engine-sources.md): an OCI image manifest whose `artifactType` names
what the artifact holds (`application/vnd.stokaro.ptah.migrations.v1`, or the schema type),
with the empty config (`application/vnd.oci.empty.v1+json`, `{}`) and one layer per file,
titled by the annotation `org.opencontainers.image.title`. The title is the file's name and
must be a flat file name (`files.valid_file_name`); any layer media type is accepted, so an
artifact pushed with `oras push --artifact-type ... FILE...` reads the same.

Every byte is checked against a digest before it is used: `resolve` hashes the manifest the
registry served (and refuses one whose digest header disagrees); `fetch` asks for the
manifest by digest, never by tag (SRC-OCI-06), hashes it, then hashes each layer blob against
its descriptor. Sizes are checked from the descriptors before anything is downloaded and again
while reading.

Transport: HTTPS, trusting the system's (or REQUESTS_CA_BUNDLE's) CAs; plain HTTP only for a
host listed, as `host[:port]` exactly as the reference writes it, in `insecure_registries`.
Authentication answers the registry's challenge: `Basic` with the credentials given, or
`Bearer` by asking the challenge's token realm for a token (with the credentials, if any,
else anonymously). Credentials never leave for another host than the registry and its realm.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from ptah_operator.engine.sources.errors import (
    SourceRefusedError,
    SourceUnreachableError,
)
from ptah_operator.engine.sources.files import (
    DEFAULT_MAX_BYTES,
    MAX_FILE_BYTES,
    Credentials,
    check_name,
    check_total,
)
from ptah_operator.engine.sources.unreachable import reaching

OCI_SCHEME = "oci://"
DEFAULT_TAG = "latest"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
MANIFEST_TYPES = (OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST)
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_CONFIG = b"{}"
FILE_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar"
"""The layer media type `push` writes: what `oras push` writes for a plain file."""
TITLE_ANNOTATION = "org.opencontainers.image.title"
UNPACK_ANNOTATION = "io.deis.oras.content.unpack"
"""oras marks a directory pushed as one archive layer with it: not a file of ours."""
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
DEFAULT_TIMEOUT = 60.0

_HOST = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$"
)
_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(rf"^{_COMPONENT}(?:/{_COMPONENT})*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_MEDIA_TYPE = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
)
_CHALLENGE_PARAM = re.compile(r'([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|([^\s,]+))')


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class OciRef:
    """A parsed `oci://` reference. `host` is `host[:port]` as written (lowercased)."""

    host: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def reference(self) -> str:
        """What the registry is asked for: the digest when there is one, else the tag."""
        return self.digest or self.tag or DEFAULT_TAG

    def at(self, digest: str) -> OciRef:
        """The same artifact pinned to `digest` (the tag is kept for messages only)."""
        if not DIGEST.match(digest):
            raise SourceRefusedError("an OCI digest must be sha256:<64 hex>")
        return OciRef(self.host, self.repository, self.tag, digest)

    def __str__(self) -> str:
        text = f"{OCI_SCHEME}{self.host}/{self.repository}"
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def parse_ref(text: str) -> OciRef:
    """Parse `oci://host[:port]/repository[:tag][@sha256:...]`. The message of a refusal
    never repeats the text (it might hold credentials)."""
    usage = "the OCI reference must be oci://host[:port]/repository[:tag|@sha256:<digest>]"
    if not isinstance(text, str) or not text.startswith(OCI_SCHEME) or len(text) > 1024:
        raise SourceRefusedError(usage)
    rest = text[len(OCI_SCHEME) :]
    host, slash, path = rest.partition("/")
    if "@" in host:
        raise SourceRefusedError("the OCI reference must not carry credentials")
    if not slash or not _HOST.match(host):
        raise SourceRefusedError(usage)
    digest: str | None = None
    if "@" in path:
        path, _, digest = path.partition("@")
        if not DIGEST.match(digest):
            raise SourceRefusedError("the OCI reference's digest must be sha256:<64 hex>")
    tag: str | None = None
    name, colon, maybe_tag = path.rpartition(":")
    if colon:
        if not _TAG.match(maybe_tag):
            raise SourceRefusedError("the OCI reference's tag is not a valid tag")
        path, tag = name, maybe_tag
    if not _REPOSITORY.match(path) or len(path) > 255:
        raise SourceRefusedError("the OCI reference's repository is not a valid name")
    return OciRef(host=host.lower(), repository=path, tag=tag, digest=digest)


@dataclass(frozen=True)
class Layer:
    media_type: str
    digest: str
    size: int
    annotations: Mapping[str, str]


@dataclass(frozen=True)
class Manifest:
    """A manifest as served, with the digest of its bytes."""

    digest: str
    raw: bytes
    document: Mapping[str, Any]

    @property
    def media_type(self) -> str:
        value = self.document.get("mediaType")
        return value if isinstance(value, str) else OCI_MANIFEST

    @property
    def artifact_type(self) -> str:
        """`artifactType`, else the config's media type, else the manifest's own media type
        (an index with no artifactType)."""
        value = self.document.get("artifactType")
        if not value:
            config = self.document.get("config")
            value = config.get("mediaType") if isinstance(config, dict) else None
        if not value:
            value = self.media_type
        if not isinstance(value, str) or not _MEDIA_TYPE.match(value):
            raise SourceRefusedError(f"the manifest {self.digest} states no valid artifact type")
        return value

    def layers(self) -> list[Layer]:
        if self.media_type in (OCI_INDEX, DOCKER_LIST) or "manifests" in self.document:
            raise SourceRefusedError(
                f"the manifest {self.digest} is an index of manifests, not one artifact"
            )
        raw_layers = self.document.get("layers")
        if not isinstance(raw_layers, list):
            raise SourceRefusedError(f"the manifest {self.digest} has no list of layers")
        return [_layer(item, index, self.digest) for index, item in enumerate(raw_layers)]


def _layer(item: Any, index: int, manifest_digest: str) -> Layer:
    where = f"layer {index} of manifest {manifest_digest}"
    if not isinstance(item, dict):
        raise SourceRefusedError(f"{where} is not a descriptor")
    digest, size = item.get("digest"), item.get("size")
    media_type = item.get("mediaType", "")
    annotations = item.get("annotations") or {}
    if not isinstance(digest, str) or not DIGEST.match(digest):
        raise SourceRefusedError(f"{where} has no sha256 digest")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise SourceRefusedError(f"{where} has no valid size")
    if not isinstance(media_type, str) or not isinstance(annotations, dict):
        raise SourceRefusedError(f"{where} is not a valid descriptor")
    clean = {str(k): v for k, v in annotations.items() if isinstance(v, str)}
    return Layer(media_type=media_type, digest=digest, size=size, annotations=clean)


def file_layers(manifest: Manifest, max_bytes: int | None) -> list[tuple[str, Layer]]:
    """The (name, layer) pairs of an artifact, refused unless every layer is one titled,
    flat-named file, no name repeats, and the sizes fit."""
    named: list[tuple[str, Layer]] = []
    seen: set[str] = set()
    for index, layer in enumerate(manifest.layers()):
        title = layer.annotations.get(TITLE_ANNOTATION)
        if not title:
            raise SourceRefusedError(
                f"layer {index} of manifest {manifest.digest} has no {TITLE_ANNOTATION}"
                " annotation naming its file"
            )
        check_name(title, "the layer title")
        if layer.annotations.get(UNPACK_ANNOTATION, "").lower() == "true":
            raise SourceRefusedError(
                f"layer {title} is a packed directory; push each file as its own layer"
            )
        if title in seen:
            raise SourceRefusedError(f"two layers are titled {title}")
        if layer.size > MAX_FILE_BYTES:
            raise SourceRefusedError(
                f"file {title} is {layer.size} bytes, over the limit of {MAX_FILE_BYTES} bytes"
            )
        seen.add(title)
        named.append((title, layer))
    check_total(sum(layer.size for _, layer in named), max_bytes, "the limit")
    return named


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """`Bearer realm="…",service="…",scope="…"` -> ("bearer", {realm, service, scope})."""
    scheme, _, rest = header.strip().partition(" ")
    params = {
        m.group(1).lower(): m.group(2) or m.group(3) or "" for m in _CHALLENGE_PARAM.finditer(rest)
    }
    return scheme.lower(), params


@dataclass
class OciClient:
    """A registry client for one process: resolve, inspect, fetch and push.

    `insecure_registries` lists the `host[:port]` spelled as in references that are reached
    over plain HTTP; every other host over HTTPS.
    """

    insecure_registries: Collection[str] = ()
    credentials: Credentials | None = None
    timeout: float = DEFAULT_TIMEOUT
    _session: requests.Session = field(default_factory=requests.Session, repr=False)
    _tokens: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.insecure_registries = frozenset(h.strip().lower() for h in self.insecure_registries)

    # -- reading -------------------------------------------------------------------------

    def resolve(self, ref: OciRef) -> str:
        """The digest of the manifest `ref` names now (a moved tag gives another digest)."""
        return self._manifest(ref, ref.reference).digest

    def manifest(self, ref: OciRef, digest: str | None = None) -> Manifest:
        """The manifest at `digest` (or `ref.digest`), asked for by digest and checked."""
        pinned = digest or ref.digest
        if pinned is None:
            raise SourceRefusedError("an artifact is read by digest only; none was given")
        return self._manifest(ref.at(pinned), pinned)

    def inspect(self, ref: OciRef, digest: str | None = None) -> str:
        """The artifact type of the digest-pinned artifact (SRC-OCI-02)."""
        return self.manifest(ref, digest).artifact_type

    def fetch(
        self, ref: OciRef, digest: str | None = None, *, max_bytes: int | None = DEFAULT_MAX_BYTES
    ) -> dict[str, bytes]:
        """The artifact's files by name, from the manifest at `digest` and its layers, each
        checked against its digest. A moved tag changes nothing here."""
        return self.files(ref, self.manifest(ref, digest), max_bytes=max_bytes)

    def files(
        self, ref: OciRef, manifest: Manifest, *, max_bytes: int | None = DEFAULT_MAX_BYTES
    ) -> dict[str, bytes]:
        files: dict[str, bytes] = {}
        for name, layer in file_layers(manifest, max_bytes):
            data = self._blob(ref, layer.digest, layer.size, name)
            files[name] = data
        return files

    def _manifest(self, ref: OciRef, reference: str) -> Manifest:
        response = self._request(
            "GET",
            ref,
            f"manifests/{reference}",
            headers={"Accept": ", ".join(MANIFEST_TYPES)},
            what=f"the artifact {ref}",
        )
        body = _read_limited(response, MAX_MANIFEST_BYTES, f"the manifest of {ref}")
        digest = sha256_digest(body)
        if DIGEST.match(reference) and digest != reference:
            raise SourceRefusedError(
                f"the registry served a manifest that does not match digest {reference}"
            )
        stated = response.headers.get("Docker-Content-Digest", "")
        if stated.startswith("sha256:") and stated != digest:
            raise SourceRefusedError(
                f"the registry served a manifest for {ref} that does not match its digest header"
            )
        try:
            document = json.loads(body)
        except ValueError:
            raise SourceRefusedError(f"the manifest {digest} is not JSON") from None
        if not isinstance(document, dict) or document.get("schemaVersion") != 2:
            raise SourceRefusedError(f"the manifest {digest} is not an OCI manifest (schema 2)")
        return Manifest(digest=digest, raw=body, document=document)

    def _blob(self, ref: OciRef, digest: str, size: int, name: str) -> bytes:
        response = self._request("GET", ref, f"blobs/{digest}", what=f"file {name} of {ref}")
        data = _read_limited(response, size, f"file {name}")
        if len(data) != size or sha256_digest(data) != digest:
            raise SourceRefusedError(f"file {name} does not match its layer digest {digest}")
        return data

    # -- writing (tests and `ptah artifact push`) ---------------------------------------

    def push(
        self,
        ref: OciRef,
        files: Mapping[str, bytes],
        artifact_type: str,
        *,
        annotations: Mapping[str, str] | None = None,
    ) -> str:
        """Push `files` as an artifact of `artifact_type` under `ref`'s tag; its digest."""
        if not _MEDIA_TYPE.match(artifact_type):
            raise SourceRefusedError("the artifact type is not a media type (type/subtype)")
        layers = []
        for name in sorted(files):
            check_name(name, "file name")
            data = files[name]
            layers.append(
                {
                    "mediaType": FILE_MEDIA_TYPE,
                    "digest": self.upload_blob(ref, data),
                    "size": len(data),
                    "annotations": {TITLE_ANNOTATION: name},
                }
            )
        manifest: dict[str, Any] = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "artifactType": artifact_type,
            "config": {
                "mediaType": EMPTY_MEDIA_TYPE,
                "digest": self.upload_blob(ref, EMPTY_CONFIG),
                "size": len(EMPTY_CONFIG),
                "data": base64.b64encode(EMPTY_CONFIG).decode(),
            },
            "layers": layers,
        }
        if annotations:
            manifest["annotations"] = dict(annotations)
        return self.put_manifest(ref, json.dumps(manifest, separators=(",", ":")).encode())

    def upload_blob(self, ref: OciRef, data: bytes) -> str:
        digest = sha256_digest(data)
        head = self._request("HEAD", ref, f"blobs/{digest}", what=f"a blob of {ref}", ok=(200, 404))
        if head.status_code == 200:
            return digest
        started = self._request(
            "POST", ref, "blobs/uploads/", what=f"an upload to {ref}", ok=(202,)
        )
        location = started.headers.get("Location")
        if not location:
            raise SourceUnreachableError(f"the registry {ref.host} gave no upload location")
        upload = urljoin(self._base(ref), location)
        if urlsplit(upload).netloc.lower() != ref.host:
            raise SourceUnreachableError(f"the registry {ref.host} sent the upload elsewhere")
        separator = "&" if "?" in upload else "?"
        self._request(
            "PUT",
            ref,
            f"{upload}{separator}digest={digest}",
            what=f"an upload to {ref}",
            ok=(201,),
            headers={"Content-Type": "application/octet-stream"},
            data=data,
        )
        return digest

    def put_manifest(self, ref: OciRef, body: bytes, media_type: str = OCI_MANIFEST) -> str:
        """Store manifest bytes under `ref`'s tag (or digest); the digest of those bytes."""
        self._request(
            "PUT",
            ref,
            f"manifests/{ref.reference}",
            what=f"the manifest of {ref}",
            ok=(201,),
            headers={"Content-Type": media_type},
            data=body,
        )
        return sha256_digest(body)

    # -- transport -----------------------------------------------------------------------

    def _base(self, ref: OciRef) -> str:
        scheme = "http" if ref.host in self.insecure_registries else "https"
        return f"{scheme}://{ref.host}/v2/{ref.repository}/"

    def _request(
        self,
        method: str,
        ref: OciRef,
        path: str,
        *,
        what: str,
        ok: Iterable[int] = (200,),
        headers: Mapping[str, str] | None = None,
        data: bytes | None = None,
    ) -> requests.Response:
        url = path if "://" in path else self._base(ref) + path
        scope = (
            f"repository:{ref.repository}:{'pull' if method in ('GET', 'HEAD') else 'pull,push'}"
        )
        sent = dict(headers or {})
        response = self._send(method, url, ref, sent, data, scope)
        if response.status_code == 401:
            self._authorize(ref, response.headers.get("WWW-Authenticate", ""), scope)
            response = self._send(method, url, ref, sent, data, scope)
            if response.status_code == 401:
                response.close()
                if self.credentials is None:  # an anonymous token that grants nothing here
                    raise SourceUnreachableError(
                        f"the registry {ref.host} asks for credentials and none were given"
                    )
                raise SourceUnreachableError(f"the registry {ref.host} refused the credentials")
        if response.status_code in tuple(ok):
            return response
        status = response.status_code
        response.close()
        if status == 403:
            raise SourceUnreachableError(f"the registry {ref.host} denies access to {what}")
        if status == 404:
            raise SourceUnreachableError(f"{what} is not in the registry {ref.host}")
        raise SourceUnreachableError(f"the registry {ref.host} answered HTTP {status} for {what}")

    def _send(
        self,
        method: str,
        url: str,
        ref: OciRef,
        headers: dict[str, str],
        data: bytes | None,
        scope: str,
    ) -> requests.Response:
        sent = dict(headers)
        token = self._tokens.get((ref.host, scope))
        if token is not None:
            sent["Authorization"] = token
        with reaching(
            f"the registry {ref.host}", tls_advice=": list a plain-HTTP registry as insecure"
        ):
            return self._session.request(
                method,
                url,
                headers=sent,
                data=data,
                stream=method == "GET",
                timeout=self.timeout,
                allow_redirects=True,
            )

    def _authorize(self, ref: OciRef, challenge: str, scope: str) -> None:
        scheme, params = parse_challenge(challenge)
        if scheme == "basic":
            if self.credentials is None:
                raise SourceUnreachableError(
                    f"the registry {ref.host} asks for credentials and none were given"
                )
            self._tokens[(ref.host, scope)] = "Basic " + _basic(self.credentials)
            return
        if scheme != "bearer" or not params.get("realm"):
            raise SourceUnreachableError(
                f"the registry {ref.host} asks for an authentication this client does not speak"
            )
        realm = params["realm"]
        realm_parts = urlsplit(realm)
        plain_ok = realm_parts.netloc.lower() in self.insecure_registries
        if realm_parts.scheme != "https" and not (realm_parts.scheme == "http" and plain_ok):
            raise SourceUnreachableError(
                f"the registry {ref.host}'s token service is not served over HTTPS"
            )
        query = {"scope": params.get("scope") or scope}
        if params.get("service"):
            query["service"] = params["service"]
        headers = {"Accept": "application/json"}
        if self.credentials is not None:
            headers["Authorization"] = "Basic " + _basic(self.credentials)
        try:
            answer = self._session.get(
                realm, params=query, headers=headers, timeout=self.timeout, allow_redirects=False
            )
        except requests.exceptions.RequestException:
            raise SourceUnreachableError(
                f"the registry {ref.host}'s token service cannot be reached"
            ) from None
        if answer.status_code != 200:
            raise SourceUnreachableError(
                f"the registry {ref.host}'s token service refused (HTTP {answer.status_code})"
            )
        try:
            body = answer.json()
            token = body.get("token") or body.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if not isinstance(token, str) or not token:
            raise SourceUnreachableError(f"the registry {ref.host}'s token service gave no token")
        self._tokens[(ref.host, scope)] = "Bearer " + token


def _basic(credentials: Credentials) -> str:
    return base64.b64encode(f"{credentials.username}:{credentials.password}".encode()).decode()


def _read_limited(response: requests.Response, limit: int, what: str) -> bytes:
    """The body, refused when it runs past `limit` bytes (a descriptor's size, or a cap)."""
    chunks: list[bytes] = []
    total = 0
    try:
        for chunk in response.iter_content(64 * 1024):
            total += len(chunk)
            if total > limit:
                raise SourceRefusedError(f"{what} is larger than {limit} bytes")
            chunks.append(chunk)
    except requests.exceptions.RequestException:
        raise SourceUnreachableError(f"{what} could not be read to its end") from None
    finally:
        response.close()
    return b"".join(chunks)


def client_from(
    insecure_registries: Collection[str] = (), credentials: Credentials | None = None
) -> OciClient:
    return OciClient(insecure_registries=insecure_registries, credentials=credentials)


def insecure_from_env(value: str | None) -> frozenset[str]:
    """`PTAH_INSECURE_REGISTRIES`: comma-separated `host[:port]`, spaces ignored."""
    if not value:
        return frozenset()
    return frozenset(item.strip().lower() for item in value.split(",") if item.strip())
