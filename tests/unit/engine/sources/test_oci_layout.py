"""OCI references, challenges and the artifact layout (no registry needed)."""

from __future__ import annotations

from typing import Any

import pytest

from ptah_operator.engine.sources.errors import SourceRefusedError
from ptah_operator.engine.sources.oci import (
    TITLE_ANNOTATION,
    Manifest,
    OciRef,
    file_layers,
    insecure_from_env,
    parse_challenge,
    parse_ref,
)

DIGEST = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("oci://registry.example/acme/orders", OciRef("registry.example", "acme/orders")),
        (
            "oci://registry.example:5000/acme/orders:stable",
            OciRef("registry.example:5000", "acme/orders", tag="stable"),
        ),
        (f"oci://127.0.0.1:5000/a@{DIGEST}", OciRef("127.0.0.1:5000", "a", digest=DIGEST)),
        (
            f"oci://Registry.Example/a/b/c:v1.2-rc_3@{DIGEST}",
            OciRef("registry.example", "a/b/c", tag="v1.2-rc_3", digest=DIGEST),
        ),
        ("oci://[::1]:5000/x:y", OciRef("[::1]:5000", "x", tag="y")),
    ],
)
def test_references_parse(text: str, expected: OciRef) -> None:
    assert parse_ref(text) == expected


def test_a_reference_without_tag_or_digest_means_latest() -> None:
    assert parse_ref("oci://r.example/a").reference == "latest"
    assert parse_ref("oci://r.example/a:v1").reference == "v1"
    assert parse_ref(f"oci://r.example/a:v1@{DIGEST}").reference == DIGEST


def test_a_pinned_reference_keeps_its_name() -> None:
    ref = parse_ref("oci://r.example/a:v1").at(DIGEST)
    assert str(ref) == f"oci://r.example/a:v1@{DIGEST}"


@pytest.mark.parametrize(
    "text",
    [
        "r.example/a:v1",
        "https://r.example/a",
        "oci://r.example",
        "oci://r.example/",
        "oci://r.example/UPPER",
        "oci://r.example/a:",
        "oci://r.example/a:-bad",
        "oci://r.example/a@sha256:short",
        "oci://r.example/a@md5:" + "a" * 32,
        "oci://r.example/a//b",
        "oci://r_example/a",
    ],
)
def test_malformed_references_are_refused(text: str) -> None:
    with pytest.raises(SourceRefusedError):
        parse_ref(text)


def test_a_reference_with_credentials_is_refused_without_repeating_them() -> None:
    with pytest.raises(SourceRefusedError) as refused:
        parse_ref("oci://alice:s3cret@r.example/a:v1")
    assert "s3cret" not in str(refused.value)
    assert "alice" not in str(refused.value)


def test_challenges_parse() -> None:
    scheme, params = parse_challenge(
        'Bearer realm="https://auth.example/token",service="registry.example",'
        'scope="repository:acme/orders:pull"'
    )
    assert scheme == "bearer"
    assert params == {
        "realm": "https://auth.example/token",
        "service": "registry.example",
        "scope": "repository:acme/orders:pull",
    }
    assert parse_challenge('Basic realm="ptah"') == ("basic", {"realm": "ptah"})


def test_insecure_registries_from_the_environment() -> None:
    assert insecure_from_env(None) == frozenset()
    assert insecure_from_env(" 127.0.0.1:5000, Reg.Local:80 ,,") == {
        "127.0.0.1:5000",
        "reg.local:80",
    }


def _manifest(layers: list[dict[str, Any]], **extra: Any) -> Manifest:
    document = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": OTHER, "size": 2},
        "layers": layers,
        **extra,
    }
    return Manifest(digest=DIGEST, raw=b"", document=document)


def _layer(title: str | None, size: int = 3, digest: str = OTHER) -> dict[str, Any]:
    layer: dict[str, Any] = {"mediaType": "text/plain", "digest": digest, "size": size}
    if title is not None:
        layer["annotations"] = {TITLE_ANNOTATION: title}
    return layer


@pytest.mark.req("SRC-OCI-02")
def test_the_artifact_type_is_artifact_type_else_the_config_media_type() -> None:
    assert _manifest([], artifactType="application/vnd.x.v1").artifact_type == (
        "application/vnd.x.v1"
    )
    assert _manifest([]).artifact_type == "application/vnd.oci.empty.v1+json"


def test_layers_are_files_named_by_their_title() -> None:
    named = file_layers(_manifest([_layer("a.sql"), _layer("b.sql")]), 1000)
    assert [name for name, _ in named] == ["a.sql", "b.sql"]


@pytest.mark.parametrize(
    ("layers", "why"),
    [
        ([_layer(None)], "no org.opencontainers.image.title"),
        ([_layer("")], "no org.opencontainers.image.title"),
        ([_layer("../etc/passwd")], "not a flat file name"),
        ([_layer("ptah-manifest.json")], "not a flat file name"),
        ([_layer("a.sql"), _layer("a.sql")], "two layers are titled a.sql"),
        ([_layer("a.sql", size=600), _layer("b.sql", size=600)], "total 1200 bytes"),
        ([_layer("a.sql", digest="sha512:" + "a" * 128)], "no sha256 digest"),
        ([_layer("a.sql", size=-1)], "no valid size"),
    ],
)
def test_layers_that_are_not_flat_titled_files_are_refused(
    layers: list[dict[str, Any]], why: str
) -> None:
    with pytest.raises(SourceRefusedError, match=why):
        file_layers(_manifest(layers), 1000)


def test_a_packed_directory_is_refused() -> None:
    layer = _layer("migrations")
    layer["annotations"]["io.deis.oras.content.unpack"] = "true"
    with pytest.raises(SourceRefusedError, match="packed directory"):
        file_layers(_manifest([layer]), 1000)


def test_an_index_is_not_one_artifact() -> None:
    index = Manifest(
        digest=DIGEST,
        raw=b"",
        document={
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [],
        },
    )
    assert index.artifact_type == "application/vnd.oci.image.index.v1+json"
    with pytest.raises(SourceRefusedError, match="index"):
        file_layers(index, 1000)
