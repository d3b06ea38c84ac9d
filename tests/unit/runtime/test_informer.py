"""The informer's list/watch state machine, driven by a scripted list-watch and a fake clock."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from ptah_operator.runtime.clock import FakeClock
from ptah_operator.runtime.informer import (
    ApiListWatch,
    ApiStatusError,
    EventHandler,
    Informer,
    ListResult,
    ResourceExpiredError,
    WatchEvent,
    drop_server_fields,
)
from ptah_operator.runtime.store import (
    NAMESPACE_INDEX,
    OWNER_UID_INDEX,
    Store,
    index_by_label,
    index_by_namespace,
    index_by_owner_uid,
    object_key,
    split_key,
)
from tests.unit.runtime.scripted import ScriptedListWatch, bookmark, cm


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def handler(self) -> EventHandler:
        return EventHandler(
            on_add=lambda o: self.events.append(("add", object_key(o), _rv(o))),
            on_update=lambda old, new: self.events.append(("update", object_key(new), _rv(new))),
            on_delete=lambda o: self.events.append(("delete", object_key(o), _rv(o))),
        )


def _rv(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["resourceVersion"])


async def start(informer: Informer, clock: FakeClock) -> asyncio.Task[None]:
    task = asyncio.create_task(informer.run())
    await clock.settle()
    return task


async def test_lists_then_watches_from_the_list_resource_version() -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([cm("a", "5"), cm("b", "6")], "10"))
    informer = Informer(lw, name="cms", clock=clock)
    rec = Recorder()
    informer.add_handler(rec.handler())
    assert not informer.has_synced
    task = await start(informer, clock)
    assert informer.has_synced
    assert sorted(informer.store.keys()) == ["ns/a", "ns/b"]
    assert rec.events == [("add", "ns/a", "5"), ("add", "ns/b", "6")]
    assert lw.calls == [("list", None), ("watch", "10")]
    informer.stop()
    await task


async def test_watch_events_update_the_store_then_the_handlers() -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([cm("a", "5")], "10"))
    lw.watches.append(
        [
            WatchEvent("ADDED", cm("b", "11")),
            WatchEvent("MODIFIED", cm("a", "12")),
            WatchEvent("DELETED", cm("b", "13")),
            WatchEvent("BOOKMARK", bookmark("20")),
        ]
    )
    informer = Informer(lw, name="cms", clock=clock)
    rec = Recorder()
    seen_in_store: list[bool] = []
    informer.add_handler(rec.handler())
    informer.add_handler(
        EventHandler(
            on_update=lambda old, new: seen_in_store.append(
                informer.store.get(object_key(new)) is new
            )
        )
    )
    task = await start(informer, clock)
    assert rec.events[1:] == [
        ("add", "ns/b", "11"),
        ("update", "ns/a", "12"),
        ("delete", "ns/b", "13"),
    ]
    assert seen_in_store == [True]
    assert informer.store.keys() == ["ns/a"]
    # The watch ended normally: the next one starts from the bookmark's resourceVersion.
    assert lw.calls == [("list", None), ("watch", "10"), ("watch", "20")]
    assert informer.last_sync_resource_version == "20"
    informer.stop()
    await task


def _with_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:data": {}}}]
    obj["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        "kept": "yes",
    }
    obj["data"] = {"big": "x" * 100}
    return obj


async def test_the_transform_applies_to_listed_and_watched_objects_before_store_and_handlers() -> (
    None
):
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([_with_server_fields(cm("a", "5"))], "10"))
    lw.watches.append(
        [
            WatchEvent("ADDED", _with_server_fields(cm("b", "11"))),
            WatchEvent("MODIFIED", _with_server_fields(cm("a", "12"))),
            WatchEvent("DELETED", _with_server_fields(cm("b", "13"))),
            WatchEvent("BOOKMARK", bookmark("20")),
        ]
    )

    def keep(obj: dict[str, Any]) -> dict[str, Any]:
        drop_server_fields(obj)
        obj.pop("data", None)
        return obj

    informer = Informer(lw, name="cms", clock=clock, transform=keep)
    handed: list[dict[str, Any]] = []
    informer.add_handler(
        EventHandler(
            on_add=handed.append,
            on_update=lambda old, new: handed.append(new),
            on_delete=handed.append,
        )
    )
    task = await start(informer, clock)
    assert [_rv(o) for o in handed] == ["5", "11", "12", "13"]
    for obj in [*handed, *informer.store.list()]:
        assert "data" not in obj
        assert "managedFields" not in obj["metadata"]
        assert obj["metadata"]["annotations"] == {"kept": "yes"}
    assert informer.last_sync_resource_version == "20"
    informer.stop()
    await task


def test_drop_server_fields_leaves_no_empty_annotations() -> None:
    obj = cm("a", "1")
    obj["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}"}
    obj["metadata"]["managedFields"] = []
    assert drop_server_fields(obj)["metadata"] == cm("a", "1")["metadata"]


@pytest.mark.parametrize(
    "expired",
    [
        ResourceExpiredError("HTTP 410 Gone"),
        ResourceExpiredError("ERROR event, code 410: too old resource version"),
    ],
)
async def test_410_gone_relists_and_reports_what_changed_meanwhile(
    expired: ResourceExpiredError,
) -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([cm("keep", "1"), cm("gone", "2"), cm("same", "3")], "10"))
    lw.watches.append([WatchEvent("MODIFIED", cm("keep", "11")), expired])
    lw.lists.append(ListResult([cm("keep", "30"), cm("same", "3"), cm("new", "31")], "40"))
    informer = Informer(lw, name="cms", clock=clock)
    rec = Recorder()
    informer.add_handler(rec.handler())
    task = await start(informer, clock)
    assert informer.lists == 2
    assert informer.expirations == 1
    assert lw.calls == [("list", None), ("watch", "10"), ("list", None), ("watch", "40")]
    assert rec.events[3:] == [
        ("update", "ns/keep", "11"),
        ("delete", "ns/gone", "2"),
        ("update", "ns/keep", "30"),
        ("update", "ns/same", "3"),
        ("add", "ns/new", "31"),
    ]
    assert sorted(informer.store.keys()) == ["ns/keep", "ns/new", "ns/same"]
    informer.stop()
    await task


async def test_other_watch_failures_back_off_and_rewatch_without_relisting() -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([], "10"))
    lw.watches.append([WatchEvent("ADDED", cm("a", "11")), ApiStatusError(500, "boom")])
    lw.watches.append([ConnectionResetError("reset")])
    informer = Informer(lw, name="cms", clock=clock)
    task = await start(informer, clock)
    assert lw.calls == [("list", None), ("watch", "10")]
    await clock.advance(0.79)
    assert len(lw.calls) == 2, "backing off 0.8 s"
    await clock.advance(0.01)
    assert lw.calls[-1] == ("watch", "11")
    # The second failure (no event in between) waits twice as long.
    await clock.advance(1.59)
    assert len(lw.calls) == 3
    await clock.advance(0.01)
    assert lw.calls[-1] == ("watch", "11")
    assert informer.lists == 1
    informer.stop()
    await task


async def test_a_failed_list_is_retried_after_a_backoff() -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ApiStatusError(404, "the server could not find the requested resource"))
    lw.lists.append(ListResult([cm("a", "1")], "5"))
    informer = Informer(lw, name="crs", clock=clock)
    task = await start(informer, clock)
    assert not informer.has_synced
    await clock.advance(0.8)
    assert informer.has_synced
    assert informer.store.keys() == ["ns/a"]
    informer.stop()
    await task


async def test_a_handler_added_after_sync_gets_the_objects_held() -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([cm("a", "1"), cm("b", "2")], "5"))
    informer = Informer(lw, name="cms", clock=clock)
    task = await start(informer, clock)
    rec = Recorder()
    informer.add_handler(rec.handler())
    assert rec.events == [("add", "ns/a", "1"), ("add", "ns/b", "2")]
    informer.stop()
    await task


async def test_resync_delivers_updates_for_every_object_each_period() -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([cm("a", "1")], "5"))
    informer = Informer(lw, name="cms", clock=clock, resync_period=30)
    rec = Recorder()
    informer.add_handler(rec.handler())
    task = await start(informer, clock)
    await clock.advance(61)
    assert rec.events == [("add", "ns/a", "1"), ("update", "ns/a", "1"), ("update", "ns/a", "1")]
    informer.stop()
    await task


async def test_run_again_after_stop_resumes_from_the_last_resource_version() -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([cm("a", "1")], "5"))
    lw.watches.append([WatchEvent("MODIFIED", cm("a", "6"))])
    informer = Informer(lw, name="cms", clock=clock)
    task = await start(informer, clock)
    informer.stop()
    await task
    assert not informer.running
    task = await start(informer, clock)
    assert lw.calls[-1] == ("watch", "6")
    assert informer.lists == 1
    informer.stop()
    await task


async def test_a_failing_handler_does_not_stop_the_others() -> None:
    clock = FakeClock()
    lw = ScriptedListWatch()
    lw.lists.append(ListResult([cm("a", "1")], "5"))
    informer = Informer(lw, name="cms", clock=clock)

    def broken(obj: dict[str, Any]) -> None:
        raise RuntimeError("handler bug: password=hunter2")

    rec = Recorder()
    informer.add_handler(EventHandler(on_add=broken))
    informer.add_handler(rec.handler())
    with capture_logs() as logs:
        task = await start(informer, clock)
    assert rec.events == [("add", "ns/a", "1")]
    informer.stop()
    await task
    # Logged by its class and frames, never the error's text (issue #18).
    failed = [e for e in logs if e["event"] == "event handler failed"]
    assert [e["error"] for e in failed] == ["RuntimeError"]
    assert "hunter2" not in repr(logs)


# --- the store ----------------------------------------------------------------------------


def test_store_keys_and_indexes() -> None:
    owner = {"uid": "u-1", "kind": "PtahSchema", "name": "s", "apiVersion": "x/v1"}
    store = Store(
        {
            NAMESPACE_INDEX: index_by_namespace,
            OWNER_UID_INDEX: index_by_owner_uid,
            "app": index_by_label("app"),
        }
    )
    store.upsert(cm("a", "1", "ns1", labels={"app": "x"}, ownerReferences=[owner]))
    store.upsert(cm("b", "2", "ns2", labels={"app": "x"}))
    store.upsert(cm("c", "3", "ns1"))
    assert [object_key(o) for o in store.by_index(NAMESPACE_INDEX, "ns1")] == ["ns1/a", "ns1/c"]
    assert [object_key(o) for o in store.by_index(OWNER_UID_INDEX, "u-1")] == ["ns1/a"]
    assert store.index_keys("app", "x") == {"ns1/a", "ns2/b"}
    # Re-filing on update: the label moved.
    store.upsert(cm("a", "4", "ns1", labels={"app": "y"}))
    assert store.index_keys("app", "x") == {"ns2/b"}
    assert store.index_keys(OWNER_UID_INDEX, "u-1") == set()
    store.delete("ns2/b")
    assert store.index_values("app") == ["y"]
    store.add_index("rv", lambda o: [_rv(o)])
    assert store.index_keys("rv", "3") == {"ns1/c"}
    with pytest.raises(KeyError):
        store.by_index("nope", "x")


def test_keys_of_namespaced_and_cluster_scoped_objects() -> None:
    assert object_key(cm("a", "1", "ns")) == "ns/a"
    assert object_key({"metadata": {"name": "realm"}}) == "realm"
    assert split_key("ns/a") == ("ns", "a")
    assert split_key("realm") == (None, "realm")
    with pytest.raises(ValueError):
        split_key("a/b/c")


# --- ApiListWatch: the HTTP answers of the API server -------------------------------------


class FakeContent:
    def __init__(self, lines: list[bytes]) -> None:
        self._lines = list(lines)

    async def readline(self) -> bytes:
        return self._lines.pop(0) if self._lines else b""


class FakeResponse:
    """What the generated client returns with _preload_content=False: an aiohttp response."""

    def __init__(self, status: int, body: bytes = b"", lines: list[bytes] | None = None) -> None:
        self.status = status
        self._body = body
        self.content = FakeContent(lines or [])
        self.released = False

    async def read(self) -> bytes:
        return self._body

    def release(self) -> None:
        self.released = True


def event_line(event_type: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": event_type, "object": obj}).encode() + b"\n"


class Calls:
    def __init__(self, *responses: FakeResponse) -> None:
        self.responses = list(responses)
        self.kwargs: list[dict[str, Any]] = []

    async def __call__(self, *args: Any, **kwargs: Any) -> FakeResponse:
        self.kwargs.append(kwargs)
        return self.responses.pop(0)


async def collect(events: AsyncIterator[WatchEvent]) -> list[WatchEvent]:
    return [event async for event in events]


async def test_api_watch_http_410_is_resource_expired() -> None:
    status = {"kind": "Status", "code": 410, "reason": "Gone", "message": "too old"}
    response = FakeResponse(410, json.dumps(status).encode())
    lw = ApiListWatch(Calls(response), "ns")
    with pytest.raises(ResourceExpiredError, match="too old"):
        await collect(lw.watch("5", 300))
    assert response.released


async def test_api_watch_error_event_410_is_resource_expired() -> None:
    status = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
    response = FakeResponse(
        200, lines=[event_line("ADDED", cm("a", "6")), event_line("ERROR", status)]
    )
    calls = Calls(response)
    lw = ApiListWatch(calls, "ns", label_selector="app=x")
    seen: list[WatchEvent] = []

    async def consume() -> None:
        async for event in lw.watch("5", 300):
            seen.append(event)

    with pytest.raises(ResourceExpiredError):
        await consume()
    assert [e.type for e in seen] == ["ADDED"]
    assert calls.kwargs[0]["watch"] is True
    assert calls.kwargs[0]["allow_watch_bookmarks"] is True
    assert calls.kwargs[0]["resource_version"] == "5"
    assert calls.kwargs[0]["label_selector"] == "app=x"


async def test_api_watch_other_error_event_is_an_api_status_error() -> None:
    status = {"kind": "Status", "code": 500, "message": "internal"}
    lw = ApiListWatch(Calls(FakeResponse(200, lines=[event_line("ERROR", status)])))
    with pytest.raises(ApiStatusError) as caught:
        await collect(lw.watch("5", 300))
    assert caught.value.status == 500


async def test_api_watch_streams_bookmarks_and_ends_with_the_stream() -> None:
    lines = [event_line("BOOKMARK", bookmark("9")), b"\n", event_line("DELETED", cm("a", "10"))]
    lw = ApiListWatch(Calls(FakeResponse(200, lines=lines)))
    events = await collect(lw.watch("5", 300))
    assert [(e.type, e.object["metadata"]["resourceVersion"]) for e in events] == [
        ("BOOKMARK", "9"),
        ("DELETED", "10"),
    ]


async def test_api_list_pages_and_fills_in_kind() -> None:
    page1 = {
        "kind": "ConfigMapList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "50", "continue": "tok"},
        "items": [{"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "1"}}],
    }
    page2 = {
        "kind": "ConfigMapList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "50"},
        "items": [{"metadata": {"name": "b", "namespace": "ns", "resourceVersion": "2"}}],
    }
    calls = Calls(
        FakeResponse(200, json.dumps(page1).encode()), FakeResponse(200, json.dumps(page2).encode())
    )
    result = await ApiListWatch(calls, "ns", page_size=1).list()
    assert result.resource_version == "50"
    assert [(o["kind"], o["apiVersion"], o["metadata"]["name"]) for o in result.items] == [
        ("ConfigMap", "v1", "a"),
        ("ConfigMap", "v1", "b"),
    ]
    assert calls.kwargs[1]["_continue"] == "tok"


async def test_api_list_restarts_when_the_continue_token_expired() -> None:
    first = {
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": "50", "continue": "t"},
        "items": [cm("a", "1")],
    }
    whole = {
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": "60"},
        "items": [cm("a", "1"), cm("b", "2")],
    }
    calls = Calls(
        FakeResponse(200, json.dumps(first).encode()),
        FakeResponse(410, b'{"kind":"Status","code":410,"message":"continue too old"}'),
        FakeResponse(200, json.dumps(whole).encode()),
    )
    result = await ApiListWatch(calls, "ns").list()
    assert result.resource_version == "60"
    assert [o["metadata"]["name"] for o in result.items] == ["a", "b"]
    assert "_continue" not in calls.kwargs[2]


async def test_api_list_error_status() -> None:
    calls = Calls(FakeResponse(403, b'{"kind":"Status","code":403,"message":"forbidden"}'))
    with pytest.raises(ApiStatusError) as caught:
        await ApiListWatch(calls).list()
    assert caught.value.status == 403
