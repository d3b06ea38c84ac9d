"""Registry Bearer-token auth against the real registry (distribution 2.8) configured with
`auth: token` and a token issuer in the harness that signs JWTs with a test key: a pull with
good credentials works, wrong credentials and a token for another scope are refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from localstack.registry import OciRegistry
from localstack.tokenissuer import SERVICE, TokenIssuer

from ptah_operator.engine.sources.errors import SourceUnreachableError
from ptah_operator.engine.sources.files import Credentials
from ptah_operator.engine.sources.oci import OciClient, parse_ref
from ptah_operator.engine.sources.verification import MIGRATIONS_ARTIFACT_TYPE
from tests.support.sources import MIGRATIONS, unique

pytestmark = pytest.mark.integration

READER = Credentials("reader", "r3ad-0nly-pw")
PUSHER = Credentials("pusher", "pu5h-pw")


@pytest.fixture(scope="module")
def issuer(stack_workdir: Path) -> Iterator[TokenIssuer]:
    users = {READER.username: READER.password, PUSHER.username: PUSHER.password}
    with TokenIssuer(stack_workdir, users, pushers=frozenset({PUSHER.username})) as issuer:
        yield issuer


@pytest.fixture(scope="module")
def registry(stack_workdir: Path, issuer: TokenIssuer) -> Iterator[OciRegistry]:
    with OciRegistry(
        stack_workdir, name="token-registry", token_auth=issuer.registry_auth()
    ) as reg:
        yield reg


def client(
    registry: OciRegistry, issuer: TokenIssuer, credentials: Credentials | None
) -> OciClient:
    # The issuer's realm is plain HTTP on loopback: listed as insecure like the registry.
    return OciClient(insecure_registries=[registry.host, issuer.host], credentials=credentials)


@pytest.fixture
def artifact(registry: OciRegistry, issuer: TokenIssuer) -> tuple[str, str]:
    ref = parse_ref(registry.ref(unique("acme/tok"), "v1"))
    digest = client(registry, issuer, PUSHER).push(ref, MIGRATIONS, MIGRATIONS_ARTIFACT_TYPE)
    return str(ref), digest


@pytest.mark.req("SRC-OCI-01", "SRC-OCI-06")
def test_a_pull_with_good_credentials_exchanges_them_for_a_pull_token(
    registry: OciRegistry, issuer: TokenIssuer, artifact: tuple[str, str]
) -> None:
    text, digest = artifact
    ref = parse_ref(text)
    issuer.requests.clear()
    reader = client(registry, issuer, READER)
    assert reader.resolve(ref) == digest
    assert reader.fetch(ref, digest) == MIGRATIONS
    asked = {(r["scope"], r["service"], r["user"]) for r in issuer.requests}
    assert asked == {(f"repository:{ref.repository}:pull", SERVICE, READER.username)}


def test_wrong_credentials_are_refused_by_the_token_service(
    registry: OciRegistry, issuer: TokenIssuer, artifact: tuple[str, str]
) -> None:
    ref = parse_ref(artifact[0])
    wrong = Credentials(READER.username, "not-the-password")
    with pytest.raises(
        SourceUnreachableError, match=r"token service refused \(HTTP 401\)"
    ) as refused:
        client(registry, issuer, wrong).resolve(ref)
    assert "not-the-password" not in str(refused.value)
    # An anonymous token grants nothing here: the registry wants credentials, none were given.
    with pytest.raises(SourceUnreachableError, match="asks for credentials and none were given"):
        client(registry, issuer, None).resolve(ref)


def test_a_token_for_another_scope_is_refused(
    registry: OciRegistry, issuer: TokenIssuer, artifact: tuple[str, str]
) -> None:
    ref = parse_ref(artifact[0])
    issuer.grant_for = lambda repository: "acme/some-other-repository"
    try:
        with pytest.raises(SourceUnreachableError, match="refused the credentials") as refused:
            client(registry, issuer, READER).resolve(ref)
    finally:
        issuer.grant_for = lambda repository: repository
    assert "eyJ" not in str(refused.value)  # no token in the message
