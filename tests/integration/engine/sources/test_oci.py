"""OCI sources against a real registry (Debian's docker-registry 2.8): resolve by tag, fetch
by digest, inspect the artifact type, refuse what is not Ptah's artifact layout."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from localstack.registry import OciRegistry

from ptah_operator.engine.sources.errors import SourceRefusedError, SourceUnreachableError
from ptah_operator.engine.sources.files import Credentials
from ptah_operator.engine.sources.oci import (
    EMPTY_CONFIG,
    EMPTY_MEDIA_TYPE,
    OCI_MANIFEST,
    TITLE_ANNOTATION,
    OciClient,
    OciRef,
    parse_ref,
    sha256_digest,
)
from ptah_operator.engine.sources.verification import (
    MIGRATIONS_ARTIFACT_TYPE,
    SCHEMA_ARTIFACT_TYPE,
)
from tests.support.sources import MIGRATIONS, MORE_MIGRATIONS, oci_client, pushed, unique

pytestmark = pytest.mark.integration


def _manifest_with(client: OciClient, ref: OciRef, layers: list[dict[str, object]]) -> str:
    """Push a hand-made manifest (blobs already uploaded); its digest."""
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": MIGRATIONS_ARTIFACT_TYPE,
        "config": {
            "mediaType": EMPTY_MEDIA_TYPE,
            "digest": client.upload_blob(ref, EMPTY_CONFIG),
            "size": 2,
            "data": base64.b64encode(EMPTY_CONFIG).decode(),
        },
        "layers": layers,
    }
    return client.put_manifest(ref, json.dumps(manifest).encode())


@pytest.mark.req("SRC-OCI-01")
def test_resolve_gives_the_digest_of_the_manifest_the_tag_names(
    oci_registry: OciRegistry,
) -> None:
    ref, digest = pushed(oci_registry)
    assert oci_client(oci_registry).resolve(ref) == digest
    assert oci_client(oci_registry).resolve(ref.at(digest)) == digest


@pytest.mark.req("SRC-OCI-01", "SRC-OCI-07")
def test_a_moved_tag_resolves_to_the_new_digest(oci_registry: OciRegistry) -> None:
    ref, first = pushed(oci_registry)
    second = oci_client(oci_registry).push(ref, MORE_MIGRATIONS, MIGRATIONS_ARTIFACT_TYPE)
    assert second != first
    assert oci_client(oci_registry).resolve(ref) == second


@pytest.mark.req("SRC-OCI-06")
def test_fetch_by_digest_ignores_a_moved_tag(oci_registry: OciRegistry) -> None:
    ref, first = pushed(oci_registry)
    oci_client(oci_registry).push(ref, MORE_MIGRATIONS, MIGRATIONS_ARTIFACT_TYPE)
    assert oci_client(oci_registry).fetch(ref, first) == MIGRATIONS
    assert oci_client(oci_registry).fetch(parse_ref(str(ref.at(first)))) == MIGRATIONS


@pytest.mark.req("SRC-OCI-02", "SRC-OCI-04")
def test_the_artifact_type_is_inspected_at_the_digest(oci_registry: OciRegistry) -> None:
    ref, migrations = pushed(oci_registry)
    schema = oci_client(oci_registry).push(ref, {"schema.hcl": b"table {}\n"}, SCHEMA_ARTIFACT_TYPE)
    client = oci_client(oci_registry)
    assert client.inspect(ref, migrations) == MIGRATIONS_ARTIFACT_TYPE
    assert client.inspect(ref, schema) == SCHEMA_ARTIFACT_TYPE


# Blobs are content-addressed and shared by every repository of the registry: what a test
# tampers with must be content no other test pushes.


def test_a_tampered_file_is_refused(oci_registry: OciRegistry) -> None:
    data = f"SELECT '{unique('tampered')}';\n".encode()
    ref, digest = pushed(oci_registry, {"0000000001_a.up.sql": data})
    blob = oci_registry.blob_path(sha256_digest(data))
    blob.write_bytes(data.replace(b"SELECT", b"DELETE"))  # the same size, other bytes
    with pytest.raises(SourceRefusedError, match="does not match its layer digest"):
        oci_client(oci_registry).fetch(ref, digest)


def test_a_tampered_manifest_is_refused(oci_registry: OciRegistry) -> None:
    ref, digest = pushed(oci_registry, {**MIGRATIONS, "marker.txt": unique("m").encode()})
    stored = oci_registry.blob_path(digest)
    stored.write_bytes(stored.read_bytes().replace(b"migrations.v1", b"migrations.v9"))
    with pytest.raises(SourceRefusedError, match="does not match digest"):
        oci_client(oci_registry).fetch(ref, digest)


def test_a_layer_without_a_title_is_refused(oci_registry: OciRegistry) -> None:
    client = oci_client(oci_registry)
    ref = parse_ref(oci_registry.ref(unique("acme/untitled"), "v1"))
    data = b"SELECT 1;\n"
    digest = _manifest_with(
        client,
        ref,
        [
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar",
                "digest": client.upload_blob(ref, data),
                "size": len(data),
            }
        ],
    )
    with pytest.raises(SourceRefusedError, match=f"no {TITLE_ANNOTATION} annotation"):
        client.fetch(ref, digest)


def test_a_title_that_is_not_a_flat_name_is_refused(oci_registry: OciRegistry) -> None:
    client = oci_client(oci_registry)
    ref = parse_ref(oci_registry.ref(unique("acme/nested"), "v1"))
    data = b"SELECT 1;\n"
    layer = {
        "mediaType": "text/plain",
        "digest": client.upload_blob(ref, data),
        "size": len(data),
        "annotations": {TITLE_ANNOTATION: "db/0001_a.up.sql"},
    }
    digest = _manifest_with(client, ref, [layer])
    with pytest.raises(SourceRefusedError, match="not a flat file name"):
        client.fetch(ref, digest)
    same = _manifest_with(client, ref, [{**layer, "annotations": {TITLE_ANNOTATION: "a.sql"}}] * 2)
    with pytest.raises(SourceRefusedError, match=r"two layers are titled a\.sql"):
        client.fetch(ref, same)


def test_files_over_the_limit_are_refused_before_they_are_downloaded(
    oci_registry: OciRegistry,
) -> None:
    ref, digest = pushed(oci_registry, {"big.sql": b"-" * 2000})
    with pytest.raises(SourceRefusedError, match="total 2000 bytes, over the limit of 1000"):
        oci_client(oci_registry).fetch(ref, digest, max_bytes=1000)
    assert oci_client(oci_registry).fetch(ref, digest) == {"big.sql": b"-" * 2000}


def test_an_absent_artifact_is_unreachable(oci_registry: OciRegistry) -> None:
    ref = parse_ref(oci_registry.ref(unique("acme/absent"), "v1"))
    with pytest.raises(SourceUnreachableError, match="is not in the registry"):
        oci_client(oci_registry).resolve(ref)
    ref, _ = pushed(oci_registry)
    with pytest.raises(SourceUnreachableError, match="is not in the registry"):
        oci_client(oci_registry).fetch(ref, "sha256:" + "0" * 64)


def test_plain_http_is_used_only_for_listed_registries(oci_registry: OciRegistry) -> None:
    ref, _ = pushed(oci_registry)
    with pytest.raises(SourceUnreachableError, match=oci_registry.host):
        OciClient().resolve(ref)


@pytest.fixture(scope="module")
def private_registry(stack_workdir: Path) -> Iterator[OciRegistry]:
    with OciRegistry(stack_workdir, auth=("alice", "pa55-word"), name="private") as registry:
        yield registry


def test_basic_credentials(private_registry: OciRegistry) -> None:
    good = Credentials("alice", "pa55-word")
    ref = parse_ref(private_registry.ref("acme/private", "v1"))
    digest = oci_client(private_registry, good).push(ref, MIGRATIONS, MIGRATIONS_ARTIFACT_TYPE)
    assert oci_client(private_registry, good).fetch(ref, digest) == MIGRATIONS
    with pytest.raises(SourceUnreachableError, match="asks for credentials") as anonymous:
        oci_client(private_registry).resolve(ref)
    with pytest.raises(SourceUnreachableError, match="refused the credentials") as wrong:
        oci_client(private_registry, Credentials("alice", "wrong")).resolve(ref)
    for raised in (anonymous, wrong):
        assert "pa55" not in str(raised.value)
        assert "wrong" not in str(raised.value)
