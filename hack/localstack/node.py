"""A real single node for the local control plane: containerd, kube-scheduler and a kubelet.

`with RealNode(workdir, control_plane) as node:` starts, as the stack's other servers are
started (one `Process` each, a log file each, loud failure with the log's tail):

- containerd (Debian's 1.6) with its config, root, state, sockets, `opt` directory, runc root and
  network namespaces all under the node's state directory;
- a pause image built here from `hack/pause/` (no registry), and any image `import_image` is
  given (`podman save`, then `ctr import` into containerd's `k8s.io` namespace);
- a CNI bridge the node creates (`ptah0`, gateway GATEWAY_IP), with `isGateway` false, no
  default route for Pods and `net.ipv4.ip_forward` untouched: a Pod reaches only its bridge's
  subnet, the gateway and the node IP (the rule for addresses in ../shared/design/REAL-NODE.md);
- kube-scheduler, and the kubelet, registered as NODE_NAME with the node IP NODE_IP, which the
  node adds to `lo` (a loopback node IP is refused by the kubelet, and this kernel has no dummy
  links).

A host service that listens on 127.0.0.1 only is reached by Pods at GATEWAY_IP and the same port
once `expose(port)` adds a DNAT rule for it (in the node's own nat chain, for packets that come
in on the bridge, with `route_localnet` on the bridge alone).

Everything the node makes outside its state directory is written to STATE_FILE before it is
made; stopping removes it all (processes by their ids, mounts, the bridge, the address, the nat
chain, cgroups, the host paths the kubelet and containerd write whatever their config says), and
a start that finds the file of a run that crashed cleans up after that run first. One node per
machine: a second start while one runs refuses (LOCK_FILE), since two kubelets share
/var/lib/kubelet/device-plugins.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Self

import yaml

from localstack.controlplane import REPO, SERVICE_CIDR, ControlPlane, NodeIdentity
from localstack.dns import ClusterDNS
from localstack.process import OneProcessServer, Process, StackError, free_port, port_open, run

NODE_NAME = "ptah-node"
NODE_IP = "10.244.76.1"
BRIDGE = "ptah0"
GATEWAY_IP = "10.244.77.1"
POD_SUBNET = "10.244.77.0/24"
NAT_CHAIN = "PTAH-NODE"
NODE_NETWORKS = "10.244.76.0/23"
"""The node IP and the Pod subnet: the addresses the node assigns."""
GUARDS: dict[str, tuple[str, list[list[str]]]] = {
    # A packet routed in from the bridge leaves only by the bridge.
    "FORWARD": ("PTAH-NODE-FORWARD", [["-i", BRIDGE, "!", "-o", BRIDGE, "-j", "DROP"]]),
    # The node's addresses (the API server, CoreDNS, the kubelet) answer this machine and its
    # Pods only, not a neighbour that routes to them, nor one DNATed to them by kube-proxy.
    "INPUT": (
        "PTAH-NODE-INPUT",
        [
            ["-i", "lo", "-j", "RETURN"],
            ["-i", BRIDGE, "-j", "RETURN"],
            ["-d", NODE_NETWORKS, "-j", "DROP"],
        ],
    ),
    # A connection the host made to a ClusterIP leaves by the bridge or not at all, whatever
    # endpoint kube-proxy rewrote it to (an EndpointSlice can name any address).
    "OUTPUT": (
        "PTAH-NODE-OUTPUT",
        [
            ["-o", "lo", "-j", "RETURN"],
            ["-o", BRIDGE, "-j", "RETURN"],
            ["-m", "conntrack", "--ctorigdst", SERVICE_CIDR, "-j", "DROP"],
        ],
    ),
}
"""Filter chains of the node's own, each jumped to first from the built-in chain it is keyed by."""
SYSCTLS = (
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
)
"""Machine-wide settings the kubelet writes at start (its kernel tunables: no config turns that
off without refusing to start when they differ), recorded when the node is claimed and put back
when it is cleaned up."""
KUBE_PROXY_TABLE = "kube-proxy"
"""The nftables table (families ip and ip6) kube-proxy's nftables mode keeps its rules in."""
CNI_NETWORK = "ptah-node"
LOCK_FILE = Path("/run/lock/ptah-local-node.lock")
STATE_FILE = Path("/run/ptah-local-node.json")
IDENTITY = NodeIdentity(name=NODE_NAME, node_ip=NODE_IP, gateway_ip=GATEWAY_IP)

HOST_PATHS = ("/var/log/containers", "/var/lib/kubelet", "/run/containerd", "/var/lib/cni")
"""Written by the kubelet or containerd 1.6 whatever their config says (REAL-NODE.md): pod log
symlinks, the device-plugin socket, shim sockets and fifos, libcni's result cache."""
AVOIDED_PATHS = ("/opt/containerd", "/usr/libexec/kubernetes", "/run/netns")
"""Where they would write without the settings here; checked to stay absent."""
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_NAMES = ("kubepods", "k8s.io")
"""The cgroup trees Pods' containers land in, in every hierarchy."""

PAUSE_DIR = REPO / "hack" / "pause"
CONTAINERS_CONF = REPO / "hack" / "containers.conf"
CNI_BIN_DIR = Path("/usr/lib/cni")
RUNC = "/usr/sbin/runc"


def _which(name: str, hint: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise StackError(f"{name} not found ({hint})")
    return found


# -- what was made outside the state directory ------------------------------------------


def _existing_cgroups() -> list[str]:
    if not CGROUP_ROOT.is_dir():
        return []
    return sorted(
        str(hierarchy / name)
        for hierarchy in CGROUP_ROOT.iterdir()
        for name in CGROUP_NAMES
        if (hierarchy / name).is_dir()
    )


def _write_state(state: dict[str, Any]) -> None:
    tmp = STATE_FILE.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(STATE_FILE)


def _quiet(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run a clean-up command; its failure (or a hang: ctr waits for a socket that is gone) is
    not an error, what it should have undone is checked by the tests."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, -1, "", "timed out")


def _own_lineage() -> set[int]:
    """This process and its ancestors: never signalled by a clean-up."""
    pids: set[int] = set()
    pid = os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pids


def _pids_naming(text: str) -> list[int]:
    """Processes whose command line names `text` (our state directory: leftover shims of the
    node's own containerd, which name its socket)."""
    found = []
    spared = _own_lineage()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        with contextlib.suppress(OSError):
            if text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def _cgroup_pids(tree: Path) -> list[int]:
    pids: list[int] = []
    for procs in tree.rglob("cgroup.procs"):
        with contextlib.suppress(OSError, ValueError):
            pids += [int(line) for line in procs.read_text().split()]
    return pids


def _kill(pids: list[int]) -> None:
    spared = _own_lineage()
    for pid in pids:
        if pid not in spared:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _mounts_under(root: str) -> list[str]:
    points = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            point = line.split()[4].replace("\\040", " ")
            if point == root or point.startswith(root + "/"):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def _rmdir_tree(tree: Path) -> None:
    """Remove an empty cgroup tree (cgroup directories are removed with rmdir, deepest first)."""
    for _ in range(20):
        if not tree.exists():
            return
        dirs = sorted((p for p in tree.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
        for directory in [*dirs, tree]:
            with contextlib.suppress(OSError):
                directory.rmdir()
        if tree.exists():
            time.sleep(0.1)


def clean_up(state: dict[str, Any]) -> None:
    """Undo everything `state` says a node made; safe to run twice, and after a crash."""
    state_dir = state["state_dir"]
    made_cgroups = [Path(p) for p in state.get("cgroups_made", [])]
    for _ in range(3):
        _kill(_pids_naming(state_dir))
        for tree in made_cgroups:
            _kill(_cgroup_pids(tree))
        time.sleep(0.1)
    for point in _mounts_under(state_dir):
        if _quiet(["umount", point]).returncode != 0:
            _quiet(["umount", "-l", point])
    while (
        _quiet(
            ["iptables", "-t", "nat", "-D", "PREROUTING", "-i", BRIDGE, "-j", NAT_CHAIN]
        ).returncode
        == 0
    ):
        pass
    _quiet(["iptables", "-t", "nat", "-F", NAT_CHAIN])
    _quiet(["iptables", "-t", "nat", "-X", NAT_CHAIN])
    # The bridge stops forwarding before the chain that keeps its forwarding on it goes.
    with contextlib.suppress(OSError):
        Path(f"/proc/sys/net/ipv4/conf/{BRIDGE}/forwarding").write_text("0")
    for builtin, (chain, _rules) in GUARDS.items():
        while _quiet(["iptables", "-D", builtin, "-j", chain]).returncode == 0:
            pass
        _quiet(["iptables", "-F", chain])
        _quiet(["iptables", "-X", chain])
    for family in ("ip", "ip6"):
        if f"{family} {KUBE_PROXY_TABLE}" not in state.get("nft_tables_before", []):
            _quiet(["nft", "delete", "table", family, KUBE_PROXY_TABLE])
    _quiet(["ip", "link", "del", BRIDGE])
    _quiet(["ip", "addr", "del", f"{NODE_IP}/32", "dev", "lo"])
    for tree in made_cgroups:
        _kill(_cgroup_pids(tree))
        _rmdir_tree(tree)
    preexisting = set(state.get("host_paths_before", []))
    for path in HOST_PATHS:
        if path not in preexisting:
            shutil.rmtree(path, ignore_errors=True)
        elif path == "/var/log/containers":
            for link in Path(path).iterdir():
                if link.is_symlink() and os.readlink(link).startswith(state_dir + "/"):
                    link.unlink()
    for name, value in state.get("sysctls_before", {}).items():
        path = Path("/proc/sys") / name
        with contextlib.suppress(OSError):
            if path.read_text().strip() != value:
                path.write_text(value)
    shutil.rmtree(state_dir, ignore_errors=True)
    STATE_FILE.unlink(missing_ok=True)


def read_sysctls() -> dict[str, str]:
    values = {}
    for name in SYSCTLS:
        with contextlib.suppress(OSError):
            values[name] = (Path("/proc/sys") / name).read_text().strip()
    return values


def other_kube_proxy() -> str | None:
    """What shows that another kube-proxy uses this machine's network (its chains or its
    tables), or None. Ours would delete its iptables chains at start (kube-proxy's clean-up of
    other modes' leftovers runs in every mode)."""
    if KUBE_PROXY_TABLE in {t.split()[-1] for t in _nft_tables()}:
        return f"an nftables table named {KUBE_PROXY_TABLE}"
    for tool in ("iptables-save", "ip6tables-save"):
        for line in _quiet([tool]).stdout.splitlines():
            if line.startswith(":KUBE-"):
                return f"the chain {line.split()[0][1:]} ({tool})"
    return None


class NodeLock:
    """The machine-wide lock of the one real node (released by the kernel if we die)."""

    def __init__(self) -> None:
        self._fd: int | None = None

    def acquire(self) -> None:
        while True:
            fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                holder = ""
                with contextlib.suppress(OSError, ValueError):
                    holder = f" (pid {json.loads(STATE_FILE.read_text())['pid']})"
                raise StackError(
                    "another local stack runs a real node on this machine"
                    f"{holder}: two kubelets would share /var/lib/kubelet/device-plugins and"
                    f" {BRIDGE}; stop it first"
                ) from None
            # The file may have been removed by the holder we waited for: lock the one there.
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(fd).st_ino == os.stat(LOCK_FILE).st_ino:
                    self._fd = fd
                    return
            os.close(fd)

    def release(self) -> None:
        if self._fd is not None:
            LOCK_FILE.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None


# -- the node's processes -----------------------------------------------------------------


class _NodeProcess(OneProcessServer):
    """A process of the node; its directory goes when the node's state directory does (after
    every mount in it is gone), so `end` only stops the process."""

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def end(self) -> None:
        if self._proc is not None:
            self._proc.stop()
            self._proc = None


class Containerd(_NodeProcess):
    """Debian's containerd 1.6 with every path it would put under /run, /opt or /var moved into
    its own directory (REAL-NODE.md lists those it writes there anyway)."""

    def __init__(self, workdir: Path, sandbox_image: str) -> None:
        self.workdir = workdir / "containerd"
        self.socket = self.workdir / "containerd.sock"
        self.sandbox_image = sandbox_image
        self.cni_conf_dir = workdir / "cni" / "net.d"
        self._proc: Process | None = None

    def config(self) -> str:
        w = self.workdir
        disabled = ", ".join(
            f'"io.containerd.snapshotter.v1.{name}"'
            for name in ("btrfs", "zfs", "devmapper", "aufs")
        )
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        return f"""version = 2
root = "{w}/root"
state = "{w}/state"
oom_score = 0
disabled_plugins = [{disabled}, "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{self.socket}"
[ttrpc]
  address = "{self.socket}.ttrpc"
[debug]
  address = "{w}/debug.sock"
  level = "info"
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "{w}/opt"
[{cri}]
  sandbox_image = "{self.sandbox_image}"
  disable_apparmor = true
  enable_selinux = false
  restrict_oom_score_adj = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  netns_mounts_under_state_dir = true
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[{cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[{cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[{cri}.containerd.runtimes.runc.options]
  BinaryName = "{RUNC}"
  Root = "{w}/runc"
  SystemdCgroup = false
[{cri}.cni]
  bin_dir = "{CNI_BIN_DIR}"
  conf_dir = "{self.cni_conf_dir}"
  max_conf_num = 1
"""

    def ctr(self, *args: str, what: str) -> subprocess.CompletedProcess[str]:
        return run(["ctr", f"--address={self.socket}", "--namespace=k8s.io", *args], what)

    def start(self) -> Self:
        binary = _which("containerd", "apt-get install containerd: hack/install-deps.sh")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.cni_conf_dir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "config.toml"
        config.write_text(self.config())
        self._proc = Process(
            "containerd", [binary, f"--config={config}"], self.workdir / "containerd.log"
        )
        self._proc.start()
        self._proc.wait_until(
            lambda: self.socket.exists() and self.ctr("version", what="ctr version") is not None,
            30,
            "containerd answering on its socket",
        )
        return self

    def remove_containers(self) -> None:
        """Kill and remove every task and container, so each shim exits with containerd's
        knowledge rather than being killed behind its back."""
        tasks = _quiet(["ctr", f"--address={self.socket}", "-n", "k8s.io", "tasks", "ls", "-q"])
        for task in tasks.stdout.split():
            _quiet(
                [
                    "ctr",
                    f"--address={self.socket}",
                    "-n",
                    "k8s.io",
                    "tasks",
                    "kill",
                    "-a",
                    "-s",
                    "SIGKILL",
                    task,
                ]
            )
        for task in tasks.stdout.split():
            _quiet(["ctr", f"--address={self.socket}", "-n", "k8s.io", "tasks", "rm", "-f", task])
        containers = _quiet(
            ["ctr", f"--address={self.socket}", "-n", "k8s.io", "containers", "ls", "-q"]
        )
        if containers.stdout.split():
            _quiet(
                [
                    "ctr",
                    f"--address={self.socket}",
                    "-n",
                    "k8s.io",
                    "containers",
                    "rm",
                    *containers.stdout.split(),
                ]
            )


class Scheduler(_NodeProcess):
    def __init__(self, workdir: Path, control_plane: ControlPlane) -> None:
        self.workdir = workdir / "scheduler"
        self.cp = control_plane
        self.port = free_port()
        self._proc: Process | None = None

    def start(self) -> Self:
        self.workdir.mkdir(parents=True, exist_ok=True)
        kubeconfig = str(self.cp.kubeconfig)
        self._proc = Process(
            "kube-scheduler",
            [
                str(self.cp.bindir / "kube-scheduler"),
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.port}",
                "--v=0",
            ],
            self.workdir / "kube-scheduler.log",
        )
        self._proc.start()
        return self

    def wait_serving(self) -> None:
        assert self._proc is not None
        self._proc.wait_until(lambda: port_open(self.port), 30, "kube-scheduler serving")


def _nft_tables() -> list[str]:
    """`family name` of every nftables table on the machine."""
    listing = _quiet(["nft", "list", "tables"]).stdout
    return sorted(line.removeprefix("table ").strip() for line in listing.splitlines() if line)


class KubeProxy(_NodeProcess):
    """kube-proxy in nftables mode: every Service's ClusterIP answers, for Pods (through the
    bridge's gateway) and for the host's processes, as in a cluster.

    Its rules live in nftables tables of its own (KUBE_PROXY_TABLE), which the clean-up deletes.
    Conntrack sysctls are left as they are (zero in its config means "do not set"), NodePorts
    answer on the node IP only, and every connection to a Service is masqueraded: a Pod that
    reaches a Service on its own bridge gets the answer back through the gateway (no hairpin
    through the bridge)."""

    def __init__(self, workdir: Path, control_plane: ControlPlane) -> None:
        self.workdir = workdir / "kube-proxy"
        self.cp = control_plane
        self.healthz_port = free_port()
        self.metrics_port = free_port()
        self._proc: Process | None = None

    def config(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "mode": "nftables",
            "clientConnection": {"kubeconfig": str(self.cp.kubeconfig)},
            "hostnameOverride": NODE_NAME,
            "bindAddress": NODE_IP,
            "healthzBindAddress": f"127.0.0.1:{self.healthz_port}",
            "metricsBindAddress": f"127.0.0.1:{self.metrics_port}",
            "clusterCIDR": POD_SUBNET,
            "nodePortAddresses": [f"{NODE_IP}/32"],
            "nftables": {"masqueradeAll": True, "syncPeriod": "30s", "minSyncPeriod": "0s"},
            "conntrack": {
                "maxPerCore": 0,
                "min": 0,
                "tcpEstablishedTimeout": "0s",
                "tcpCloseWaitTimeout": "0s",
                "udpTimeout": "0s",
                "udpStreamTimeout": "0s",
            },
        }

    def start(self) -> Self:
        binary = self.cp.bindir / "kube-proxy"
        if not binary.exists():
            raise StackError(
                f"kube-proxy not found in {self.cp.bindir} "
                "(hack/control-plane-binaries.sh builds it)"
            )
        _which("nft", "apt-get install nftables: hack/install-deps.sh")
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "config.yaml"
        config.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        self._proc = Process(
            "kube-proxy",
            [str(binary), f"--config={config}", "--v=0"],
            self.workdir / "kube-proxy.log",
        )
        self._proc.start()
        self._proc.wait_until(self.healthy, 60, "kube-proxy's first sync")
        return self

    def healthy(self) -> bool:
        import urllib.request

        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.healthz_port}/healthz", timeout=2
        ) as resp:
            return bool(resp.status == 200)


class Kubelet(_NodeProcess):
    def __init__(self, workdir: Path, control_plane: ControlPlane, containerd: Containerd) -> None:
        self.workdir = workdir / "kubelet"
        self.cp = control_plane
        self.containerd = containerd
        self.port = free_port()
        self.healthz_port = free_port()
        self._proc: Process | None = None

    def config(self) -> dict[str, Any]:
        assert self.cp.ca is not None
        serving = self.cp.ca.issue(
            "kubelet-serving",
            NODE_NAME,
            server=True,
            dns_names=[NODE_NAME, "localhost"],
            ips=["127.0.0.1", NODE_IP],
        )
        endpoint = f"unix://{self.containerd.socket}"
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            # This host has cgroup v1 only, which kubelet 1.36 refuses unless told.
            "failCgroupV1": False,
            "cgroupDriver": "cgroupfs",
            "cgroupsPerQOS": True,
            "failSwapOn": False,
            # No CAP_SYS_RESOURCE here: never lower an oom_score_adj, never raise a limit.
            "oomScoreAdj": 0,
            # Else it adds KUBE-FIREWALL and canary chains to the host's iptables.
            "makeIPTablesUtilChains": False,
            "maxOpenFiles": 20000,
            "containerRuntimeEndpoint": endpoint,
            "imageServiceEndpoint": endpoint,
            "podLogsDir": str(self.workdir / "pod-logs"),
            "volumePluginDir": str(self.workdir / "volume-plugins"),
            "address": NODE_IP,
            "port": self.port,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": self.healthz_port,
            "tlsCertFile": str(serving.cert_path),
            "tlsPrivateKeyFile": str(serving.key_path),
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True},
                "x509": {"clientCAFile": str(self.cp.ca.cert_path)},
            },
            "authorization": {"mode": "Webhook"},
            "clusterDomain": "cluster.local",
            "clusterDNS": [GATEWAY_IP],
            # Pods resolve through the cluster DNS alone (ClusterFirst); the host's resolver
            # is not reachable from the Pod network, so none of its settings are passed on.
            "resolvConf": "",
            # The disk is shared with everything else on the machine: never evict a Pod or
            # collect an image because of how full it is.
            "evictionHard": {
                "memory.available": "100Mi",
                "nodefs.available": "1%",
                "imagefs.available": "1%",
                "nodefs.inodesFree": "1%",
            },
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "syncFrequency": "10s",
            "fileCheckFrequency": "10s",
            "nodeStatusUpdateFrequency": "10s",
            "serializeImagePulls": False,
        }

    def start(self) -> Self:
        binary = self.cp.bindir / "kubelet"
        if not binary.exists():
            raise StackError(
                f"kubelet not found in {self.cp.bindir} (hack/control-plane-binaries.sh builds it)"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "config.yaml"
        config.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        self._proc = Process(
            "kubelet",
            [
                str(binary),
                f"--config={config}",
                f"--kubeconfig={self.cp.node_kubeconfig}",
                f"--hostname-override={NODE_NAME}",
                f"--node-ip={NODE_IP}",
                f"--root-dir={self.workdir / 'root'}",
                f"--cert-dir={self.workdir / 'certs'}",
                "--v=1",
            ],
            self.workdir / "kubelet.log",
        )
        self._proc.start()
        self._proc.wait_until(self.node_ready, 60, f"Node {NODE_NAME} Ready")
        return self

    def wait_healthy(self) -> None:
        assert self._proc is not None
        self._proc.wait_until(self.healthy, 60, "the kubelet's /healthz")

    def healthy(self) -> bool:
        import urllib.request

        url = f"http://127.0.0.1:{self.healthz_port}/healthz"
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)

    def node_ready(self) -> bool:
        node: Any = self.cp.get_json(f"/api/v1/nodes/{NODE_NAME}")
        conditions = node.get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


# -- the node ---------------------------------------------------------------------------------


def _pause_image() -> str:
    """The pause image, built from hack/pause once per content (tagged by its digest)."""
    digest = hashlib.sha256()
    for name in ("main.go", "Containerfile"):
        digest.update((PAUSE_DIR / name).read_bytes())
    image = f"localhost/ptah-pause:{digest.hexdigest()[:12]}"
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    if _quiet(["podman", "image", "exists", image]).returncode == 0:
        return image
    go = shutil.which("go") or "/usr/local/go/bin/go"
    with tempfile.TemporaryDirectory(prefix="ptah-pause-") as tmp:
        shutil.copy(PAUSE_DIR / "main.go", tmp)
        shutil.copy(PAUSE_DIR / "Containerfile", tmp)
        Path(tmp, "go.mod").write_text("module ptah.local/pause\n\ngo 1.21\n")
        run(
            [go, "build", "-trimpath", "-ldflags=-s -w", "-o", "pause", "."],
            "building the pause binary",
            cwd=tmp,
            env={**os.environ, "CGO_ENABLED": "0", "GOFLAGS": ""},
        )
        run(
            ["podman", "build", "-q", "--network=none", "-t", image, "-f", "Containerfile", "."],
            "building the pause image",
            cwd=tmp,
            env=env,
        )
    return image


class RealNode:
    """`with RealNode(workdir, cp) as node:`: a Ready Node NODE_NAME run by a real kubelet.

    The control plane must have been made with `node=IDENTITY` (controlplane.py)."""

    name = NODE_NAME
    node_ip = NODE_IP
    gateway_ip = GATEWAY_IP
    pod_subnet = POD_SUBNET

    def __init__(self, workdir: Path, control_plane: ControlPlane) -> None:
        if control_plane.node != IDENTITY:
            raise StackError("the control plane was not set up for the real node (node=IDENTITY)")
        self.workdir = workdir / "node"
        self.cp = control_plane
        self._lock = NodeLock()
        self._state: dict[str, Any] | None = None
        self.containerd: Containerd | None = None
        self.scheduler: Scheduler | None = None
        self.kube_proxy: KubeProxy | None = None
        self.dns: ClusterDNS | None = None
        self.kubelet: Kubelet | None = None
        self.timings: dict[str, float] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def claim(self) -> None:
        """Take the machine's one node and make the host side: the lock, the state file, the
        node IP on `lo`, the bridge, the nat and forward chains. The control plane binds to the
        node IP, so this comes before it starts; `start` then starts the node's processes."""
        if self._state is not None:
            return
        if os.geteuid() != 0:
            raise StackError("the real node needs root (addresses, a bridge, mounts, cgroups)")
        for binary in ("kubelet", "kube-scheduler", "kube-proxy"):
            if not (self.cp.bindir / binary).exists():
                raise StackError(
                    f"{binary} not found in {self.cp.bindir}: hack/control-plane-binaries.sh"
                    " builds it (~2 min with a warm Go cache)"
                )
        for tool, hint in (
            ("containerd", "hack/install-deps.sh"),
            ("ctr", "hack/install-deps.sh (containerd)"),
            ("iptables", "hack/install-deps.sh"),
            ("nft", "hack/install-deps.sh (nftables)"),
            ("podman", "hack/install-deps.sh"),
        ):
            _which(tool, hint)
        if not (CNI_BIN_DIR / "bridge").exists():
            raise StackError(f"no CNI bridge plugin in {CNI_BIN_DIR} (containernetworking-plugins)")
        self._lock.acquire()
        try:
            self._claim()
        except BaseException:
            self.stop()
            raise

    def start(self) -> Self:
        """Claim the host if not yet done, then start containerd, the scheduler, the kubelet
        and kube-proxy against the (running) control plane."""
        self.claim()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _claim(self) -> None:
        if STATE_FILE.exists():
            # A node of an earlier run did not stop (its process was killed): undo what it made.
            with contextlib.suppress(OSError, ValueError, KeyError):
                clean_up(json.loads(STATE_FILE.read_text()))
        other = other_kube_proxy()
        if other is not None:
            raise StackError(
                f"another kube-proxy uses this machine's network ({other}): the node's kube-proxy"
                " would delete its rules; stop it first"
            )
        self._state = {
            "pid": os.getpid(),
            "state_dir": str(self.workdir),
            "host_paths_before": [p for p in HOST_PATHS if os.path.lexists(p)],
            "nft_tables_before": _nft_tables(),
            "sysctls_before": read_sysctls(),
            "cgroups_made": [],
        }
        before = set(_existing_cgroups())
        self._state["cgroups_made"] = sorted(
            str(h / n)
            for h in CGROUP_ROOT.iterdir()
            for n in CGROUP_NAMES
            if h.is_dir() and str(h / n) not in before
        )
        _write_state(self._state)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._network()

    def _start(self) -> None:
        begin = time.monotonic()
        sandbox = _pause_image()
        self.containerd = Containerd(self.workdir, sandbox).start()
        self.timings["containerd"] = time.monotonic() - begin
        self.import_image(sandbox)
        self._cni()
        self.scheduler = Scheduler(self.workdir, self.cp).start()
        # Cluster DNS on the gateway, which Pods reach without a route or a rule of their own.
        self.dns = ClusterDNS(self.workdir, self.cp, GATEWAY_IP, 53, SERVICE_CIDR).start()
        kubelet_begin = time.monotonic()
        self.kubelet = Kubelet(self.workdir, self.cp, self.containerd).start()
        self.timings["kubelet_ready"] = time.monotonic() - kubelet_begin
        # kube-proxy reports healthy only once it has synced for a Node that exists.
        self.kube_proxy = KubeProxy(self.workdir, self.cp).start()
        self.scheduler.wait_serving()
        self.timings["start"] = time.monotonic() - begin

    def _network(self) -> None:
        run(["ip", "addr", "add", f"{NODE_IP}/32", "dev", "lo"], "adding the node IP to lo")
        run(["ip", "link", "add", BRIDGE, "type", "bridge"], f"creating the bridge {BRIDGE}")
        conf = Path(f"/proc/sys/net/ipv4/conf/{BRIDGE}")
        # A Pod may not send as any other address (an answer to a forged source would leave by
        # the default route), nor give the host IPv6 routes or addresses by advertising them.
        (conf / "rp_filter").write_text("1")
        Path(f"/proc/sys/net/ipv6/conf/{BRIDGE}/disable_ipv6").write_text("1")
        run(["ip", "addr", "add", f"{GATEWAY_IP}/24", "dev", BRIDGE], "addressing the bridge")
        run(["ip", "link", "set", BRIDGE, "up"], "bringing the bridge up")
        # Per interface, and gone with the bridge: lets a DNAT to 127.0.0.1 deliver (expose).
        Path(f"/proc/sys/net/ipv4/conf/{BRIDGE}/route_localnet").write_text("1")
        run(["iptables", "-t", "nat", "-N", NAT_CHAIN], "creating the nat chain")
        run(
            ["iptables", "-t", "nat", "-A", "PREROUTING", "-i", BRIDGE, "-j", NAT_CHAIN],
            "jumping to the nat chain",
        )
        # A Service's ClusterIP is kube-proxy's DNAT to a Pod on this same bridge, so what comes
        # in on the bridge is routed back out of it: forwarding on the bridge alone (the host's
        # ip_forward stays 0), and guard chains (GUARDS) that keep it and the node's addresses
        # to this machine.
        for builtin, (chain, rules) in GUARDS.items():
            run(["iptables", "-N", chain], f"creating {chain}")
            for rule in rules:
                run(["iptables", "-A", chain, *rule], f"filling {chain}")
            run(["iptables", "-I", builtin, "-j", chain], f"jumping to {chain}")
        Path(f"/proc/sys/net/ipv4/conf/{BRIDGE}/forwarding").write_text("1")
        # The host's own connections to a ClusterIP (the API server calling the webhooks) leave
        # by the bridge, never by the default route, also before kube-proxy's first sync.
        run(
            ["ip", "route", "add", SERVICE_CIDR, "dev", BRIDGE, "src", GATEWAY_IP],
            "routing the Service range to the bridge",
        )

    def _cni(self) -> None:
        assert self.containerd is not None
        conflist = {
            "cniVersion": "1.0.0",
            "name": CNI_NETWORK,
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": BRIDGE,
                    # isGateway would switch on the host-wide ip_forward; Pods get no default
                    # route, only the node IP through the gateway.
                    "isGateway": False,
                    "isDefaultGateway": False,
                    "ipMasq": False,
                    "ipam": {
                        "type": "host-local",
                        "dataDir": str(self.workdir / "cni" / "ipam"),
                        "ranges": [
                            [
                                {
                                    "subnet": POD_SUBNET,
                                    "rangeStart": "10.244.77.10",
                                    "rangeEnd": "10.244.77.250",
                                    "gateway": GATEWAY_IP,
                                }
                            ]
                        ],
                        "routes": [
                            {"dst": f"{NODE_IP}/32", "gw": GATEWAY_IP},
                            {"dst": SERVICE_CIDR, "gw": GATEWAY_IP},
                        ],
                    },
                }
            ],
        }
        path = self.containerd.cni_conf_dir / f"10-{CNI_NETWORK}.conflist"
        path.write_text(json.dumps(conflist, indent=2))

    def expose(self, port: int) -> None:
        """Let Pods reach a host service on 127.0.0.1:`port` at GATEWAY_IP:`port`."""
        run(
            [
                "iptables",
                "-t",
                "nat",
                "-A",
                NAT_CHAIN,
                "-d",
                GATEWAY_IP,
                "-p",
                "tcp",
                "--dport",
                str(port),
                "-j",
                "DNAT",
                "--to-destination",
                f"127.0.0.1:{port}",
            ],
            f"exposing port {port} to Pods",
        )

    def import_image(self, image: str) -> str:
        """Put a podman image into containerd's k8s.io namespace under its name and under
        `repository@sha256:...`, the digest of containerd's import (not podman's), which it
        returns so Pods can be pinned to it."""
        assert self.containerd is not None
        begin = time.monotonic()
        env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
        archive = self.workdir / "image.tar"
        try:
            run(
                ["podman", "save", "-q", "-o", str(archive), image], f"podman save {image}", env=env
            )
            self.containerd.ctr("images", "import", str(archive), what=f"importing {image}")
        finally:
            archive.unlink(missing_ok=True)
        listing = self.containerd.ctr("images", "ls", f"name=={image}", what="ctr images ls")
        lines = listing.stdout.splitlines()[1:]
        if not lines:
            raise StackError(f"{image} is not in containerd after the import")
        digest = lines[0].split()[2]
        name, _, tag = image.rpartition(":")
        repository = name if name and "/" not in tag else image
        pinned = f"{repository}@{digest}"
        # `ctr import --digests` names these import-<date>@sha256:...: the kubelet would not
        # find the image by the reference the operator gives its Jobs.
        self.containerd.ctr("images", "tag", "--force", image, pinned, what=f"tagging {pinned}")
        self.timings[f"import {image}"] = time.monotonic() - begin
        return pinned

    def restart_runtime(self) -> None:
        """Stop the kubelet and containerd and start both again, as a node upgrade or a crash of
        either does: the containers run on under their shims, which containerd finds again."""
        assert self.kubelet is not None
        assert self.containerd is not None
        before = [self.kubelet.pid, self.containerd.pid]
        self.kubelet.end()
        self.containerd.end()
        if [pid for pid in before if pid is None or Path(f"/proc/{pid}").exists()]:
            raise StackError("the kubelet or containerd did not stop")
        self.containerd.start()
        self.kubelet.start()
        # Only the new kubelet can answer: the old one is gone.
        self.kubelet.wait_healthy()

    def running_tasks(self) -> set[str]:
        """Ids of the containers containerd runs right now."""
        assert self.containerd is not None
        listing = self.containerd.ctr("tasks", "ls", what="ctr tasks ls").stdout.splitlines()[1:]
        return {line.split()[0] for line in listing if line.split()[-1] == "RUNNING"}

    def stop_processes(self) -> None:
        """Stop the kubelet, containerd's containers, containerd, kube-proxy and the scheduler
        (the host side stays until `stop`)."""
        if self.kubelet is not None:
            self.kubelet.end()
            self.kubelet = None
        if self.containerd is not None:
            with contextlib.suppress(Exception):
                self.containerd.remove_containers()
            self.containerd.end()
            self.containerd = None
        for process in (self.kube_proxy, self.scheduler):
            if process is not None:
                process.end()
        self.kube_proxy = self.scheduler = None
        if self.dns is not None:
            self.dns.stop()
            self.dns = None

    def stop(self) -> None:
        try:
            self.stop_processes()
        finally:
            try:
                if self._state is not None:
                    clean_up(self._state)
                    self._state = None
            finally:
                self._lock.release()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
