"""The spec-writers record's wire format, derived here by hand: the spec digest and the seal are
over compact JSON with sorted keys and the CRD's field names, as every stored record was sealed.
A change of that form (key order, separators, aliases, defaults) would leave every record in
every cluster unopenable, so it must be a deliberate, versioned change, never a side effect."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.webhook.writers import spec_digest
from tests.unit.webhook.test_webhook_four_eyes import ALICE, SEAL, _record, write

SPEC = (
    '{"configMap":{"name":"orders-migrations"},'
    '"policy":{"requireDistinctApprover":true},'
    '"target":{"coordinationKey":"test/orders","engine":"PostgreSQL",'
    '"urlFrom":{"key":"url","name":"orders-database"}}}'
)


@pytest.mark.req("APR-04")
def test_the_spec_digest_is_sha256_of_the_compact_sorted_spec_without_defaults() -> None:
    resource = from_manifest(PtahMigration, write(None, ALICE))
    assert spec_digest(resource) == "sha256:" + hashlib.sha256(SPEC.encode()).hexdigest()


@pytest.mark.req("APR-04")
def test_the_seal_is_an_hmac_over_place_spec_and_record_in_compact_sorted_json() -> None:
    created = write(None, ALICE)
    value = _record(created)
    assert value is not None
    digest = "sha256:" + hashlib.sha256(SPEC.encode()).hexdigest()
    writers = '[{"generation":1,"uid":"u-alice","username":"alice@example.com"}]'
    message = (
        f'{{"generation":1,"name":"orders","namespace":"application","spec":"{digest}",'
        f'"writers":{writers}}}'
    )
    seal = hmac.new(SEAL.key, message.encode(), hashlib.sha256).hexdigest()
    assert value == f'{{"generation":1,"seal":"{seal}","writers":{writers}}}'
    assert json.loads(value)["seal"] == seal
