"""The read verbs without pydantic (issue 16): what they print from `manifest` views is byte for
byte what they printed from the API models, over the plugin's test fixtures; an object the
views do not take is read into its model as before; and the whole read path, run in a process
of its own against a server, imports neither pydantic nor the Kubernetes client library."""

from __future__ import annotations

import asyncio
import copy
import http.server
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from ptah_operator.api import fields, fingerprints
from ptah_operator.api.constants import Kind, SchemaPhase
from ptah_operator.api.kinds import kind_info, to_manifest
from ptah_operator.api.objectmeta import ObjectMeta, Resource
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk, PtahSchemaPlanChunkSpec
from ptah_operator.cli.kubectl import manifest, shapes_gen
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.lookup import Reads, read_model
from ptah_operator.cli.kubectl.main import execute_read, parse_command
from ptah_operator.cli.kubectl.targets import model_of
from tests.support.migration_objects import T0
from tests.support.schema_objects import (
    awaiting_approval,
    catalog_schema,
    plan_pieces,
    schema_plan,
    schema_plan_spec,
)
from tests.unit.cli.rendering_fixtures import blocked, waiting

REPO = Path(__file__).resolve().parents[3]
NAMESPACE = "application"


# --- a world of manifests, as the API server would give them ------------------------------------


def _chunks(plan: PtahSchemaPlan) -> list[PtahSchemaPlanChunk]:
    return [
        PtahSchemaPlanChunk(
            metadata=ObjectMeta(name=ref.name, namespace=NAMESPACE, uid=f"c-{ref.index}"),
            spec=PtahSchemaPlanChunkSpec(
                plan_ref={"name": plan.metadata.name or "", "uid": plan.metadata.uid or ""},
                index=ref.index,
                data=text,
                digest=ref.digest,
            ),
        )
        for ref, text in zip(plan.spec.chunks, plan_pieces(plan.spec), strict=True)
    ]


class World:
    """Manifests by (kind, name)."""

    def __init__(self, objects: list[Resource]) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        for obj in objects:
            self.put(to_manifest(obj))

    def put(self, obj: dict[str, Any]) -> None:
        self.objects[(obj["kind"], obj["metadata"]["name"])] = obj


def _schema_objects(status: str) -> list[Resource]:
    plan = schema_plan(schema_plan_spec(_schema_ref(), chunks=2))
    schema_status = awaiting_approval(plan)
    if status == "applied":
        schema_status = _applied(plan)
    objects: list[Resource] = [catalog_schema(status=schema_status), plan, *_chunks(plan)]
    return objects


def _schema_ref() -> Any:
    from ptah_operator.api.common import ObjectReference

    return ObjectReference(name="catalog", uid="s-uid-1")


def _applied(plan: PtahSchemaPlan) -> Any:
    from ptah_operator.api.common import ObjectReference, PlanReference, UserInfo
    from ptah_operator.api.constants import ApplyOutcome, VerifiedOutcome
    from ptah_operator.api.schema import AppliedPlan, ApplyRecord, SchemaVerification

    reference = PlanReference(
        name=plan.metadata.name or "", uid=plan.metadata.uid, fingerprint=plan.spec.fingerprint
    )
    alice = UserInfo(username="alice@example.com", groups=["dba"])
    return awaiting_approval(plan).model_copy(
        update={
            "phase": SchemaPhase.IN_SYNC,
            "plan": None,
            "last_apply": ApplyRecord(
                operation_id="op-00000000b2",
                outcome=ApplyOutcome.SUCCEEDED,
                plan=reference,
                plan_digest=plan.spec.digest,
                approval=ObjectReference(name="catalog-plan-x1", uid="a-uid-1"),
                approver=alice,
                started_at=T0,
                finished_at=T0 + timedelta(seconds=2, microseconds=250),
                verification=SchemaVerification(
                    outcome=VerifiedOutcome.IN_SYNC, read_at=T0, operation_id="op-00000000b3"
                ),
            ),
            "applied": AppliedPlan(
                plan=reference,
                digest=plan.spec.digest,
                operation_id="op-00000000b2",
                approval=ObjectReference(name="catalog-plan-x1", uid="a-uid-1"),
                approver=alice,
                applied_at=T0,
                verified_at=T0,
            ),
        }
    )


def _worlds() -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
    """The fixtures the plugin's tests use, each a world of manifests."""
    m, p = waiting()
    worlds: dict[str, list[Resource]] = {
        "waiting": [m, p, *_schema_objects("waiting")],
        "blocked": [blocked(), *_schema_objects("applied")],
    }
    new = copy.deepcopy(m)
    new.status = None
    worlds["new"] = [new, catalog_schema()]
    replaced = copy.deepcopy(p)
    replaced.metadata.uid = "another-uid"
    worlds["replaced"] = [m, replaced, *_schema_objects("waiting")[:2]]
    return {name: World(objects).objects for name, objects in worlds.items()}


class FakeReads(Reads):
    """Reads over a dict of manifests; `models` reads them as the plugin did before."""

    def __init__(self, objects: dict[tuple[str, str], dict[str, Any]], models: bool) -> None:
        self.objects = objects
        self.models = models
        self.namespace = NAMESPACE
        self.printed = io.StringIO()
        self.out = self.printed

    async def get(
        self, kind: Kind, name: str, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        obj = self.objects.get((kind.value, name))
        if obj is None:
            if missing_ok:
                return None
            raise CommandError(f"{kind.lower()} {name} not found in namespace {self.namespace}")
        return copy.deepcopy(obj)

    async def observe(self, plural: str, name: str) -> AsyncIterator[dict[str, Any] | None]:
        for (kind, found), obj in self.objects.items():
            if found == name and kind_info(kind).plural == plural:
                yield copy.deepcopy(obj)
        raise CommandError("the fixture has no more states")

    def read_object(self, kind: Kind, obj: dict[str, Any]) -> Any:
        if self.models:
            return read_model(model_of(kind), obj)
        return super().read_object(kind, obj)


COMMANDS = (
    ["migration", "orders"],
    ["plan", "migration/orders"],
    ["schema", "catalog"],
    ["plan", "schema/catalog"],
    ["plan", "schema/catalog", "--no-sql"],
    ["plan", "schema/catalog", "--applied"],
    ["wait", "migration/orders", "--for=AwaitingApproval", "--timeout=5s"],
    ["wait", "schema/catalog", "--for=AwaitingApproval", "--timeout=5s"],
    ["wait", "schema/catalog", "--for=InSync", "--timeout=5s"],
)


def _printed(objects: dict[tuple[str, str], dict[str, Any]], argv: list[str], models: bool) -> str:
    command, _ = parse_command(argv)
    reads = FakeReads(objects, models)
    try:
        code: int | str = asyncio.run(execute_read(command, reads))
    except CommandError as exc:
        code = f"error: {exc}"
    return f"{reads.printed.getvalue()}[{code}]"


@pytest.mark.req("PLUGIN-02", "PLUGIN-03", "PLUGIN-04", "PLUGIN-06")
@pytest.mark.parametrize("world", ["waiting", "blocked", "new", "replaced"])
def test_the_read_verbs_print_from_views_exactly_what_they_printed_from_the_models(
    world: str,
) -> None:
    objects = _worlds()[world]
    for obj in objects.values():
        # Each fixture is taken by the views themselves, not by the fallback to the models.
        manifest.read_view(obj["kind"], copy.deepcopy(obj))
    for argv in COMMANDS:
        before = _printed(objects, argv, models=True)
        assert _printed(objects, argv, models=False) == before, argv


def test_a_view_has_the_models_values() -> None:
    m, _ = waiting()
    view = manifest.read_view("PtahMigration", to_manifest(m))
    assert view.status.history.revisions[0].applied_at == T0 - timedelta(days=1)
    assert view.status.phase is m.status.phase  # type: ignore[union-attr]
    assert view.spec.policy.apply is m.spec.policy.apply
    assert view.status.condition("Progressing").reason == "AwaitingApproval"
    empty = manifest.empty("PtahMigrationStatus")
    assert empty.conditions == []
    assert empty.history is None
    assert empty.phase is None


@pytest.mark.parametrize(
    "change",
    [
        lambda o: o["status"].update(newField=1),
        lambda o: o["status"].update(phase="SomePhaseOfANewerOperator"),
        lambda o: o["status"]["history"].update(readAt="yesterday"),
        lambda o: o["status"]["history"].update(readAt="2026-08-30T09:00:00"),
        lambda o: o["status"]["history"].update(appliedCount="3"),
        lambda o: o["metadata"].update(generation=True),
        lambda o: o["spec"].pop("target"),
        lambda o: o.update(kind="PtahSchema"),
    ],
)
def test_what_the_views_do_not_take_is_read_by_the_model_as_before(change: Any) -> None:
    m, _ = waiting()
    obj = to_manifest(m)
    change(obj)
    with pytest.raises(manifest.MismatchError):
        manifest.read_view("PtahMigration", copy.deepcopy(obj))
    reads = FakeReads({}, models=False)
    try:
        expected: Any = read_model(model_of(Kind.PTAH_MIGRATION), copy.deepcopy(obj))
    except (CommandError, ValueError) as exc:
        with pytest.raises(type(exc), match="^" + re.escape(str(exc)) + "$"):
            reads.read_object(Kind.PTAH_MIGRATION, copy.deepcopy(obj))
    else:
        assert reads.read_object(Kind.PTAH_MIGRATION, copy.deepcopy(obj)) == expected


def test_an_unknown_field_is_still_refused_in_one_line() -> None:
    m, _ = waiting()
    obj = to_manifest(m)
    obj["status"]["newField"] = 1
    with pytest.raises(CommandError, match="has fields this plugin does not understand"):
        FakeReads({}, models=False).read_object(Kind.PTAH_MIGRATION, obj)


def test_the_field_tables_are_what_the_models_give() -> None:
    assert shapes_gen.TARGET.read_text() == shapes_gen.source(), (
        "run python -m ptah_operator.cli.kubectl.shapes_gen"
    )


def test_the_copies_of_the_api_helpers_agree_with_the_api() -> None:
    for kind, names in manifest.NAMES.items():
        info = kind_info(kind.value)
        assert (names.plural, names.short_names, names.singular) == (
            info.plural,
            info.short_names,
            info.singular,
        )
    for text in ("90s", "1h30m", "250ms", "1.5h", "10m"):
        assert manifest.parse_duration(text) == fields.parse_duration(text)
    for bad in ("", "10", "1d", "m10"):
        with pytest.raises(ValueError, match="not a duration"):
            manifest.parse_duration(bad)
    moments = (T0, T0 + timedelta(microseconds=999_999), datetime(2026, 1, 1, 3, tzinfo=UTC))
    for moment in moments:
        assert manifest.format_time(moment) == fields.format_time(moment)
    for text in ("", "CREATE TABLE t (id int);", "é\n"):
        assert manifest.text_digest(text) == fingerprints.text_digest(text)


# --- the whole read path, in a process of its own -----------------------------------------------


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    objects: dict[tuple[str, str], dict[str, Any]]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        # apis/GROUP/VERSION/namespaces/NS/PLURAL[/NAME]
        plural = parts[5]
        kinds = {kind_info(kind).plural: kind for kind, _ in self.server.objects}
        kind = kinds.get(plural, "")
        if len(parts) == 7:
            obj = self.server.objects.get((kind, parts[6]))
            self._answer(404 if obj is None else 200, obj or {"message": "not found"})
            return
        selector = parse_qs(url.query).get("fieldSelector", [""])[0]
        name = selector.removeprefix("metadata.name=")
        items = [o for (k, n), o in self.server.objects.items() if k == kind and n == name]
        listed = {"kind": f"{kind}List", "metadata": {"resourceVersion": "1"}, "items": items}
        self._answer(200, listed)

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[_Server]:
    served = _Server(("127.0.0.1", 0), _Handler)
    served.objects = _worlds()["waiting"]
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.shutdown()
        served.server_close()


READ_VERBS = (
    ["migration", "orders"],
    ["plan", "migration/orders"],
    ["schema", "catalog"],
    ["plan", "schema/catalog"],
    ["wait", "migration/orders", "--for=AwaitingApproval", "--timeout=5s"],
)


@pytest.mark.req("PLUGIN-02", "PLUGIN-04", "PLUGIN-06")
def test_the_read_verbs_import_neither_pydantic_nor_the_client_library(
    tmp_path: Path, server: _Server
) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "x",
                "clusters": [
                    {"name": "k", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    probe = textwrap.dedent(
        f"""\
        import asyncio, io, json, sys
        from ptah_operator.cli.kubectl.main import run
        printed = []
        for argv in {[list(v) for v in READ_VERBS]!r}:
            out, err = io.StringIO(), io.StringIO()
            argv = [*argv, "-n", {NAMESPACE!r}, "--kubeconfig", {str(kubeconfig)!r}]
            code = asyncio.run(run(argv, out, err))
            printed.append(out.getvalue() + err.getvalue() + f"[{{code}}]")
        heavy = ("pydantic", "pydantic_core", "kubernetes_asyncio", "aiohttp")
        from ptah_operator.runtime.lazy_kubernetes import LazyPackage  # (its stand-ins hold nothing)
        loaded = sorted(
            m for m in sys.modules
            if m.split(".")[0] in heavy and not isinstance(sys.modules[m], LazyPackage)
        )
        print(json.dumps({{"printed": printed, "loaded": loaded[:5]}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    found = json.loads(done.stdout)
    assert found["loaded"] == []
    expected = [_printed(server.objects, [*argv], models=True) for argv in READ_VERBS]
    assert found["printed"] == expected
    assert all(text.endswith("[0]") for text in found["printed"])
