"""Pods as host processes, for tests that need a Job's Pod but no image and no kubelet.

The local stack runs its Pods under a real kubelet (`node.py`). A few integration tests of the
runner need less: a control plane without a node (the session's `kube` fixture), the working
tree's own code run as a Job's containers would run it (no image built after each edit), and
the real Job controller reading the outcome. For them this module registers a Node, binds every
unscheduled Pod to it, runs the Pod's containers (init containers first, in order, then the
rest) and writes the Pod's status the way a kubelet would, so the real Job controller marks the
Job Complete or Failed.

Each container's command runs as a local process with only its own environment (`env` with
`value`, `secretKeyRef`, `configMapKeyRef`, `fieldRef`) and its own mounts: volumes
(`emptyDir`, `configMap`, `secret`) become directories under the work directory, and the
container's `volumeMounts` are bind-mounted at their `mountPath` in a private mount namespace
(`unshare --mount`, root only), so a container sees exactly the paths a Pod would and nothing of
another container's Secret. Without root it refuses to start rather than quietly running
containers with the wrong view.

A Pod deleted while it runs has its processes killed and is then removed (grace 0), as the
kubelet confirms a graceful deletion. Container logs are files under the work directory.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import os
import shlex
import shutil
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import structlog
from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config
from kubernetes_asyncio import watch as k8s_watch
from kubernetes_asyncio.client.exceptions import ApiException

NODE_NAME = "ptah-local"
_SYSTEM_DIRS = frozenset(
    "/" + d
    for d in [
        "bin",
        "boot",
        "dev",
        "etc",
        "home",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "media",
        "mnt",
        "opt",
        "proc",
        "root",
        "run",
        "sbin",
        "srv",
        "sys",
        "tmp",
        "usr",
        "var",
    ]
)
log = structlog.get_logger("process-pods")
Json = dict[str, Any]


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def _termination_message(container: Json, code: int, termination: Path, logfile: Path) -> str:
    """What the kubelet reports: the termination-message file, or with FallbackToLogsOnError
    and a failure, the log's last lines; at most 4 KiB."""
    message = termination.read_text(errors="replace").strip()
    if (
        not message
        and code != 0
        and container.get("terminationMessagePolicy") == "FallbackToLogsOnError"
    ):
        message = "\n".join(logfile.read_text(errors="replace").splitlines()[-10:])
    return message[-4096:]


class PodRunError(Exception):
    """The Pod cannot be run as specified (a missing Secret key, an unsupported volume)."""


class ProcessPods:
    """Bind, run and report, as host processes, the Pods of a control plane without a node."""

    def __init__(
        self,
        api: k8s.ApiClient,
        workdir: Path,
        extra_path: str | None = None,
        node_name: str = NODE_NAME,
        only_selected: bool = False,
    ) -> None:
        self.only_selected = only_selected
        self.api = api
        # Typed as Any: this module speaks plain JSON dicts to the API, which the client accepts.
        self.core: Any = k8s.CoreV1Api(api)
        self.workdir = workdir
        self.node_name = node_name
        self.extra_path = extra_path or str(Path(sys.executable).parent)
        self._running: dict[str, asyncio.Task[None]] = {}
        self._procs: dict[str, list[asyncio.subprocess.Process]] = {}
        self._deleted: set[str] = set()

    # -- node ------------------------------------------------------------------------

    async def register_node(self) -> None:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.node_name,
                "labels": {
                    "kubernetes.io/hostname": self.node_name,
                    "ptah.run/process-pods": "true",
                },
            },
        }
        with contextlib.suppress(ApiException):
            await self.core.create_node(node)
        status = {
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "message": "ptah process-pods runs Pods as local processes",
                        "lastHeartbeatTime": _now(),
                        "lastTransitionTime": _now(),
                    }
                ],
                "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
            }
        }
        await self.core.patch_node_status(self.node_name, status)

    # -- the loop --------------------------------------------------------------------

    async def run(self) -> None:
        if os.geteuid() != 0:
            raise RuntimeError("process-pods needs root for private mount namespaces")
        await self.register_node()
        while True:
            listing = await self.core.list_pod_for_all_namespaces(_preload_content=False)
            body = await listing.json()
            for pod in body["items"]:
                await self._handle(pod)
            watcher = k8s_watch.Watch()
            try:
                async for event in watcher.stream(
                    self.core.list_pod_for_all_namespaces,
                    resource_version=body["metadata"]["resourceVersion"],
                    timeout_seconds=300,
                    _request_timeout=330,
                ):
                    obj = self.api.sanitize_for_serialization(event["object"])
                    if event["type"] == "ERROR":
                        break
                    if event["type"] == "DELETED":
                        await self._forget(obj)
                    else:
                        await self._handle(obj)
            except ApiException as exc:
                if exc.status != 410:
                    log.warning("pod watch failed", status=exc.status)
                    await asyncio.sleep(1)
            finally:
                watcher.stop()

    def _key(self, pod: Json) -> str:
        meta = pod["metadata"]
        return f"{meta['namespace']}/{meta['name']}/{meta['uid']}"

    async def _handle(self, pod: Json) -> None:
        meta, spec = pod["metadata"], pod["spec"]
        key = self._key(pod)
        node = spec.get("nodeName")
        phase = pod.get("status", {}).get("phase")
        if meta.get("deletionTimestamp"):
            if node == self.node_name:
                await self._terminate(pod)
            return
        if not node:
            if self._wants(spec):
                await self._bind(pod)
            return
        if node != self.node_name or phase in ("Succeeded", "Failed") or key in self._running:
            return
        self._running[key] = asyncio.create_task(self._run_pod(pod), name=f"pod {key}")

    def _wants(self, spec: Json) -> bool:
        """Whether this node takes an unscheduled Pod: one that selects its node by
        hostname, or any Pod that selects none unless `only_selected` is set."""
        selector = spec.get("nodeSelector") or {}
        hostname = selector.get("kubernetes.io/hostname")
        if hostname is not None:
            return bool(hostname == self.node_name)
        return not self.only_selected

    async def _forget(self, pod: Json) -> None:
        key = self._key(pod)
        self._deleted.add(key)
        await self._kill(key)

    async def _bind(self, pod: Json) -> None:
        meta = pod["metadata"]
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": self.node_name},
        }
        try:
            await self.core.create_namespaced_pod_binding(
                meta["name"], meta["namespace"], binding, _preload_content=False
            )
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise

    async def _terminate(self, pod: Json) -> None:
        key = self._key(pod)
        await self._kill(key)
        meta = pod["metadata"]
        with contextlib.suppress(ApiException):
            await self.core.delete_namespaced_pod(
                meta["name"], meta["namespace"], grace_period_seconds=0, _preload_content=False
            )

    async def _kill(self, key: str) -> None:
        for proc in self._procs.get(key, []):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        task = self._running.get(key)
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # -- running a Pod ---------------------------------------------------------------

    async def _run_pod(self, pod: Json) -> None:
        key = self._key(pod)
        meta, spec = pod["metadata"], pod["spec"]
        poddir = (
            self.workdir / "pods" / _safe_name(f"{meta['namespace']}_{meta['name']}_{meta['uid']}")
        )
        poddir.mkdir(parents=True, exist_ok=True)
        init_statuses: list[Json] = []
        statuses: list[Json] = []
        started = _now()
        try:
            volumes = await self._prepare_volumes(pod, poddir)
            for container in spec.get("initContainers") or []:
                init_statuses.append(self._waiting(container))
            for container in spec.get("containers", []):
                statuses.append(self._waiting(container))
            await self._patch_status(pod, "Pending", init_statuses, statuses, started)
            for index, container in enumerate(spec.get("initContainers") or []):
                init_statuses[index] = self._running_status(container)
                await self._patch_status(pod, "Pending", init_statuses, statuses, started)
                code, message = await self._run_container(pod, container, volumes, poddir)
                init_statuses[index] = self._terminated(container, code, message)
                if code != 0:
                    await self._patch_status(pod, "Failed", init_statuses, statuses, started)
                    return
            await self._patch_status(pod, "Pending", init_statuses, statuses, started)
            containers = spec.get("containers", [])
            for index, container in enumerate(containers):
                statuses[index] = self._running_status(container)
            await self._patch_status(pod, "Running", init_statuses, statuses, started)
            results = await asyncio.gather(
                *(self._run_container(pod, c, volumes, poddir) for c in containers)
            )
            for index, (container, (code, message)) in enumerate(
                zip(containers, results, strict=True)
            ):
                statuses[index] = self._terminated(container, code, message)
            phase = "Succeeded" if all(code == 0 for code, _ in results) else "Failed"
            await self._patch_status(pod, phase, init_statuses, statuses, started)
        except PodRunError as exc:
            log.warning("pod cannot run", pod=key, reason=str(exc))
            await self._patch_status(
                pod,
                "Failed",
                init_statuses,
                statuses,
                started,
                reason="CreateContainerConfigError",
                message=str(exc),
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one Pod must not end the loop
            log.exception("pod run crashed", pod=key)
            with contextlib.suppress(Exception):
                await self._patch_status(
                    pod,
                    "Failed",
                    init_statuses,
                    statuses,
                    started,
                    reason="ProcessPodsError",
                    message=type(exc).__name__,
                )
        finally:
            self._running.pop(key, None)
            self._procs.pop(key, None)

    def _waiting(self, container: Json) -> Json:
        return {
            "name": container["name"],
            "image": container.get("image", ""),
            "imageID": "",
            "ready": False,
            "restartCount": 0,
            "started": False,
            "state": {"waiting": {"reason": "PodInitializing"}},
        }

    def _running_status(self, container: Json) -> Json:
        status = self._waiting(container)
        status.update(started=True, ready=True, state={"running": {"startedAt": _now()}})
        return status

    def _terminated(self, container: Json, code: int, message: str) -> Json:
        status = self._waiting(container)
        terminated: Json = {
            "exitCode": code,
            "reason": "Completed" if code == 0 else "Error",
            "startedAt": _now(),
            "finishedAt": _now(),
        }
        if message:
            terminated["message"] = message
        status.update(started=False, ready=False, state={"terminated": terminated})
        return status

    async def _patch_status(
        self,
        pod: Json,
        phase: str,
        init_statuses: list[Json],
        statuses: list[Json],
        started: str,
        reason: str | None = None,
        message: str | None = None,
    ) -> None:
        if self._key(pod) in self._deleted:
            return
        meta = pod["metadata"]
        status: Json = {
            "phase": phase,
            "hostIP": "127.0.0.1",
            "podIP": "127.0.0.1",
            "startTime": started,
            "initContainerStatuses": init_statuses,
            "containerStatuses": statuses,
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
                {
                    "type": "Ready",
                    "status": "True" if phase == "Running" else "False",
                    "lastTransitionTime": _now(),
                },
            ],
        }
        if reason:
            status["reason"] = reason
        if message:
            status["message"] = message
        with contextlib.suppress(ApiException):
            await self.core.patch_namespaced_pod_status(
                meta["name"], meta["namespace"], {"status": status}, _preload_content=False
            )

    # -- volumes, environment, processes --------------------------------------------

    async def _read_keyed(self, kind: str, namespace: str, name: str) -> dict[str, bytes]:
        """The object's keys; ApiException when it cannot be read (404: it does not exist),
        as a kubelet would refuse it, rather than an object with no keys."""
        if kind == "configMap":
            cm = await self.core.read_namespaced_config_map(name, namespace, _preload_content=False)
            if cm.status != 200:
                raise ApiException(status=cm.status, reason=cm.reason)
            body = await cm.json()
            data = {k: v.encode() for k, v in (body.get("data") or {}).items()}
            data.update({k: base64.b64decode(v) for k, v in (body.get("binaryData") or {}).items()})
            return data
        secret = await self.core.read_namespaced_secret(name, namespace, _preload_content=False)
        if secret.status != 200:
            raise ApiException(status=secret.status, reason=secret.reason)
        body = await secret.json()
        return {k: base64.b64decode(v) for k, v in (body.get("data") or {}).items()}

    async def _prepare_volumes(self, pod: Json, poddir: Path) -> dict[str, Path]:
        namespace = pod["metadata"]["namespace"]
        volumes: dict[str, Path] = {}
        for volume in pod["spec"].get("volumes") or []:
            path = poddir / "volumes" / _safe_name(volume["name"])
            path.mkdir(parents=True, exist_ok=True)
            if "emptyDir" in volume:
                path.chmod(0o777)
            elif "configMap" in volume or "secret" in volume:
                kind = "configMap" if "configMap" in volume else "secret"
                source = volume[kind]
                name = source.get("name") or source.get("secretName")
                try:
                    data = await self._read_keyed(kind, namespace, name)
                except ApiException as exc:
                    if source.get("optional"):
                        continue
                    raise PodRunError(
                        f"{kind} {name} for volume {volume['name']}: HTTP {exc.status}"
                    ) from exc
                items = source.get("items") or [{"key": k, "path": k} for k in sorted(data)]
                for item in items:
                    if item["key"] not in data:
                        raise PodRunError(f"{kind} {name} has no key {item['key']}")
                    target = path / item["path"]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data[item["key"]])
                    target.chmod(source.get("defaultMode", 0o644))
            else:
                raise PodRunError(
                    f"volume {volume['name']}: only emptyDir, configMap and secret are supported"
                )
            volumes[volume["name"]] = path
        return volumes

    async def _environment(self, pod: Json, container: Json) -> dict[str, str]:
        namespace = pod["metadata"]["namespace"]
        env = {
            "PATH": f"{self.extra_path}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/tmp",
            "HOSTNAME": pod["metadata"]["name"],
            "LANG": "C.UTF-8",
        }
        cache: dict[tuple[str, str], dict[str, bytes]] = {}
        for item in container.get("env") or []:
            if "value" in item:
                env[item["name"]] = item["value"]
                continue
            source = item.get("valueFrom") or {}
            if "fieldRef" in source:
                path = source["fieldRef"]["fieldPath"]
                fields = {
                    "metadata.name": pod["metadata"]["name"],
                    "metadata.namespace": namespace,
                    "metadata.uid": pod["metadata"]["uid"],
                    "spec.nodeName": self.node_name,
                    "spec.serviceAccountName": pod["spec"].get("serviceAccountName", "default"),
                    "status.podIP": "127.0.0.1",
                }
                if path.startswith("metadata.labels['"):
                    label = path[len("metadata.labels['") : -2]
                    env[item["name"]] = (pod["metadata"].get("labels") or {}).get(label, "")
                elif path in fields:
                    env[item["name"]] = fields[path]
                else:
                    raise PodRunError(f"env {item['name']}: fieldPath {path} is not supported")
                continue
            for kind, ref_key in (("secret", "secretKeyRef"), ("configMap", "configMapKeyRef")):
                if ref_key in source:
                    ref = source[ref_key]
                    cache_key = (kind, ref["name"])
                    if cache_key not in cache:
                        try:
                            cache[cache_key] = await self._read_keyed(kind, namespace, ref["name"])
                        except ApiException as exc:
                            if ref.get("optional"):
                                cache[cache_key] = {}
                            else:
                                raise PodRunError(
                                    f"env {item['name']}: {kind} {ref['name']}: HTTP {exc.status}"
                                ) from exc
                    value = cache[cache_key].get(ref["key"])
                    if value is None:
                        if ref.get("optional"):
                            break
                        raise PodRunError(
                            f"env {item['name']}: {kind} {ref['name']} has no key {ref['key']}"
                        )
                    env[item["name"]] = value.decode()
                    break
        return env

    async def _run_container(
        self, pod: Json, container: Json, volumes: Mapping[str, Path], poddir: Path
    ) -> tuple[int, str]:
        key = self._key(pod)
        argv = [*(container.get("command") or []), *(container.get("args") or [])]
        if not argv:
            raise PodRunError(
                f"container {container['name']}: process-pods needs an explicit command"
            )
        env = await self._environment(pod, container)
        termination = poddir / f"{_safe_name(container['name'])}.termination-log"
        termination.unlink(missing_ok=True)
        termination.touch(mode=0o666)
        mounts: list[tuple[Path, str, bool]] = []
        for mount in container.get("volumeMounts") or []:
            if mount["name"] not in volumes:
                raise PodRunError(f"container {container['name']}: no volume {mount['name']}")
            mounts.append((volumes[mount["name"]], mount["mountPath"], bool(mount.get("readOnly"))))
        termination_path = container.get("terminationMessagePath", "/dev/termination-log")
        script = ["set -e"]
        # A mount target under a directory the host does not use (such as /ptah) gets a fresh
        # tmpfs at that top-level directory first, so one container never sees another's
        # mount points; targets under system directories are bound in place.
        tops = sorted(
            {"/" + Path(t).parts[1] for _, t, _ in mounts if len(Path(t).parts) > 1} - _SYSTEM_DIRS
        )
        for top in tops:
            Path(top).mkdir(exist_ok=True)
            script.append(f"mount -t tmpfs -o mode=0755 ptah-local {shlex.quote(top)}")
        for source, target, read_only in [*mounts, (termination, termination_path, False)]:
            quoted = shlex.quote(target)
            if source.is_dir():
                script.append(f"mkdir -p {quoted}")
            else:
                script.append(f"mkdir -p $(dirname {quoted}); [ -e {quoted} ] || touch {quoted}")
            script.append(f"mount --bind {shlex.quote(str(source))} {quoted}")
            if read_only:
                script.append(f"mount -o remount,bind,ro {quoted}")
        workdir = container.get("workingDir") or "/tmp"
        script.append(f"cd {shlex.quote(workdir)}")
        script.append("exec " + " ".join(shlex.quote(a) for a in argv))
        logfile = poddir / f"{_safe_name(container['name'])}.log"
        unshare = shutil.which("unshare") or "/usr/bin/unshare"
        with logfile.open("ab") as out:
            proc = await asyncio.create_subprocess_exec(
                unshare,
                "--mount",
                "--propagation",
                "private",
                "/bin/sh",
                "-c",
                "\n".join(script),
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
            self._procs.setdefault(key, []).append(proc)
            code = await proc.wait()
        message = _termination_message(container, code, termination, logfile)
        log.info("container finished", pod=key, container=container["name"], exit_code=code)
        return (code if code >= 0 else 128 - code), message


async def serve(
    kubeconfig: Path,
    workdir: Path,
    node_name: str = NODE_NAME,
    only_selected: bool = False,
) -> None:
    configuration = k8s.Configuration()
    await k8s_config.load_kube_config(
        config_file=str(kubeconfig), client_configuration=configuration
    )
    async with k8s.ApiClient(configuration) as api:
        await ProcessPods(api, workdir, node_name=node_name, only_selected=only_selected).run()


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(
        description="Run Pods as host processes (plays the kubelet for a node-less control plane)."
    )
    parser.add_argument("--kubeconfig", required=True, type=Path)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--node-name", default=NODE_NAME)
    parser.add_argument(
        "--only-selected",
        action="store_true",
        help="take only Pods whose nodeSelector names this node's hostname",
    )
    args = parser.parse_args()
    asyncio.run(serve(args.kubeconfig, args.workdir, args.node_name, args.only_selected))


if __name__ == "__main__":
    main()
