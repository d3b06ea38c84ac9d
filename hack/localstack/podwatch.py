"""Every Pod the API server ever told a watcher about, for the real node's tests and Prometheus.

`PodWatch(control_plane)` lists the cluster's Pods, then follows a watch from that list's
resourceVersion in a thread (again from the last version it saw when the server ends a watch,
as informers do; a list again when that version is gone). It keeps every Pod it has seen,
deleted ones included, so a test can count the Pods a Job ever had (`ever`). Given a file, it also writes the manager's running Pods
there as Prometheus file_sd targets: Debian's Prometheus 2.42 is built without Kubernetes
service discovery, and this is the list that discovery would give it (each replica at its
`metrics` port, labelled with its Pod).
"""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localstack.controlplane import ControlPlane
from localstack.process import StackError


@dataclass(frozen=True)
class SeenPod:
    namespace: str
    name: str
    uid: str


@dataclass(frozen=True)
class ScrapedPods:
    """Which Pods are file_sd targets: those of `namespace` with every label of `labels`, at
    their container port named `port`."""

    path: Path
    namespace: str
    labels: dict[str, str]
    port: str = "metrics"


class PodWatch:
    def __init__(self, control_plane: ControlPlane, scraped: ScrapedPods | None = None) -> None:
        self.cp = control_plane
        self.scraped = scraped
        self._seen: dict[str, SeenPod] = {}
        self._live: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._synced = threading.Event()
        self.error: BaseException | None = None

    def start(self) -> PodWatch:
        if self.scraped is not None:
            self._write_targets()
        self._thread = threading.Thread(target=self._run, name="pod-watch", daemon=True)
        self._thread.start()
        if not self._synced.wait(30):
            raise StackError(f"the Pod watch did not list the cluster's Pods: {self.error!r}")
        return self

    def stop(self) -> None:
        self._stop.set()

    def ever(self, namespace: str, prefix: str) -> list[str]:
        """Names of every Pod seen in `namespace` whose name starts with `prefix`."""
        with self._lock:
            return sorted(
                p.name
                for p in self._seen.values()
                if p.namespace == namespace and p.name.startswith(prefix)
            )

    # -- the watch ---------------------------------------------------------------------------

    def _open(self, path: str, timeout: float) -> Any:
        request = urllib.request.Request(f"{self.cp.server}{path}")
        return urllib.request.urlopen(request, context=self.cp.ssl_context(), timeout=timeout)

    def _run(self) -> None:
        version = ""
        while not self._stop.is_set():
            try:
                if not version:
                    version = self._list()
                    self._synced.set()
                version = self._follow(version)
            except urllib.error.HTTPError as exc:
                if exc.code == 410:  # the version is gone: list again
                    version = ""
                self.error = exc
                self._stop.wait(1)
            except Exception as exc:
                self.error = exc
                self._stop.wait(1)

    def _list(self) -> str:
        with self._open("/api/v1/pods", 30) as resp:
            listing = json.load(resp)
        with self._lock:
            self._live.clear()
            for pod in listing["items"]:
                self._note("ADDED", pod)
        self._write_targets()
        return str(listing["metadata"]["resourceVersion"])

    def _follow(self, version: str) -> str:
        path = f"/api/v1/pods?watch=1&resourceVersion={version}&timeoutSeconds=300"
        with self._open(path, 330) as resp:
            for line in resp:
                if self._stop.is_set():
                    break
                event = json.loads(line)
                if event["type"] == "ERROR":
                    if event["object"].get("code") == 410:
                        return ""
                    raise StackError("the Pod watch ended with an error event")
                pod = event["object"]
                with self._lock:
                    self._note(event["type"], pod)
                version = str(pod["metadata"]["resourceVersion"])
                self._write_targets()
        return version

    def _note(self, kind: str, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        self._seen.setdefault(meta["uid"], SeenPod(meta["namespace"], meta["name"], meta["uid"]))
        if kind == "DELETED":
            self._live.pop(meta["uid"], None)
        else:
            self._live[meta["uid"]] = pod

    # -- Prometheus's targets ------------------------------------------------------------------

    def _write_targets(self) -> None:
        scraped = self.scraped
        if scraped is None:
            return
        with self._lock:
            pods = list(self._live.values())
        groups = []
        for pod in pods:
            meta, status = pod["metadata"], pod.get("status") or {}
            labels = meta.get("labels") or {}
            if (
                meta["namespace"] != scraped.namespace
                or any(labels.get(k) != v for k, v in scraped.labels.items())
                or meta.get("deletionTimestamp")
                or status.get("phase") != "Running"
                or not status.get("podIP")
            ):
                continue
            for container in pod["spec"]["containers"]:
                for port in container.get("ports") or []:
                    if port.get("name") == scraped.port:
                        groups.append(
                            {
                                "targets": [f"{status['podIP']}:{port['containerPort']}"],
                                "labels": {"pod": meta["name"]},
                            }
                        )
        text = json.dumps(sorted(groups, key=lambda g: g["labels"]["pod"]), indent=1)
        with contextlib.suppress(FileNotFoundError):
            if scraped.path.read_text() == text:
                return
        tmp = scraped.path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(scraped.path)
