"""Cluster DNS for the local stack: CoreDNS answering `cluster.local` from the API server.

`with ClusterDNS(workdir, control_plane, host, port) as dns:` runs the `coredns` that
`hack/control-plane-binaries.sh` builds (v1.15.x with only the bind, errors, log, cache and
kubernetes plugins) as a host process, like the stack's other servers: a Corefile and a log in
a directory of its own, a loud failure with the log's tail. It serves `cluster.local` and the
Service range's reverse zone, reading Services through the stack's admin kubeconfig, on `host`
and `port` (udp and tcp) and nowhere else: the binary has no health, ready or metrics plugin,
so it opens no other port. It has no forward plugin either, so a name outside its zones is
answered REFUSED and never sent on: nothing leaves the machine. Start returns once
`kubernetes.default.svc.cluster.local` resolves, i.e. the plugin has read the API.

The real node runs it on the bridge's gateway (10.244.77.1:53), which Pods reach without a route
or a NAT rule; tests run it on 127.0.0.1 and a free port. `query` is a small DNS client (the
standard library's `socket` and `struct`) for the readiness check and for tests.
"""

from __future__ import annotations

import contextlib
import ipaddress
import secrets
import socket
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from localstack.controlplane import SERVICE_CIDR, ControlPlane
from localstack.process import OneProcessServer, Process, StackError

CLUSTER_DOMAIN = "cluster.local"
KUBERNETES_SERVICE = f"kubernetes.default.svc.{CLUSTER_DOMAIN}"
"""Made by the API server itself: it resolving proves the plugin has read the API."""

TYPE_A = 1
TYPE_CNAME = 5
TYPE_SOA = 6
TYPE_PTR = 12
NOERROR = 0
SERVFAIL = 2
NXDOMAIN = 3
REFUSED = 5


def reverse_zone(cidr: str) -> str:
    """The in-addr.arpa zone of an IPv4 range cut on an octet boundary (10.0.0.0/24 gives
    0.0.10.in-addr.arpa); CoreDNS's kubernetes plugin answers PTR queries for the zones it is
    given."""
    network = ipaddress.IPv4Network(cidr)
    if network.prefixlen % 8:
        raise StackError(f"{cidr}: a reverse zone needs a prefix that is a multiple of 8")
    octets = str(network.network_address).split(".")[: network.prefixlen // 8]
    return ".".join([*reversed(octets), "in-addr.arpa"])


def free_dns_port(host: str = "127.0.0.1") -> int:
    """A port on `host` free for both udp and tcp right now (a DNS server takes both)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind((host, 0))
            port: int = udp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
                try:
                    tcp.bind((host, port))
                except OSError:
                    continue
                return port
    raise StackError(f"no port on {host} is free for both udp and tcp")


# -- a small DNS client -----------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One answer record: its owner name, type and value (an address, a name, or hex)."""

    name: str
    type: int
    value: str


@dataclass(frozen=True)
class Reply:
    """A reply's response code (NOERROR, NXDOMAIN, REFUSED...) and its answer section."""

    rcode: int
    answers: tuple[Record, ...]

    @property
    def addresses(self) -> list[str]:
        return [r.value for r in self.answers if r.type == TYPE_A]


def _encode_name(name: str) -> bytes:
    labels = [label for label in name.rstrip(".").split(".") if label]
    return b"".join(bytes([len(label)]) + label.encode("ascii") for label in labels) + b"\0"


def _decode_name(message: bytes, offset: int) -> tuple[str, int]:
    """The name at `offset` (following compression pointers) and the offset after it."""
    labels: list[str] = []
    end: int | None = None
    for _ in range(128):  # a loop of pointers ends here rather than never
        length = message[offset]
        if length & 0xC0 == 0xC0:
            if end is None:
                end = offset + 2
            offset = struct.unpack_from("!H", message, offset)[0] & 0x3FFF
            continue
        if length == 0:
            return ".".join(labels) + ".", end if end is not None else offset + 1
        labels.append(message[offset + 1 : offset + 1 + length].decode("ascii"))
        offset += 1 + length
    raise ValueError("DNS name with a pointer loop")


def encode_query(name: str, qtype: int = TYPE_A, ident: int | None = None) -> bytes:
    """A standard query with recursion desired, as a Pod's resolver sends it."""
    ident = secrets.randbits(16) if ident is None else ident
    header = struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0)
    return header + _encode_name(name) + struct.pack("!HH", qtype, 1)


def decode_reply(message: bytes) -> Reply:
    """The rcode and answers of a reply; the authority and additional sections are skipped."""
    _ident, flags, qdcount, ancount, _nscount, _arcount = struct.unpack_from("!HHHHHH", message)
    offset = 12
    for _ in range(qdcount):
        _qname, offset = _decode_name(message, offset)
        offset += 4
    answers = []
    for _ in range(ancount):
        owner, offset = _decode_name(message, offset)
        rtype, _rclass, _ttl, length = struct.unpack_from("!HHIH", message, offset)
        offset += 10
        rdata = message[offset : offset + length]
        if rtype == TYPE_A and length == 4:
            value = socket.inet_ntoa(rdata)
        elif rtype in (TYPE_CNAME, TYPE_PTR):
            value = _decode_name(message, offset)[0]
        else:
            value = rdata.hex()
        answers.append(Record(owner, rtype, value))
        offset += length
    return Reply(rcode=flags & 0xF, answers=tuple(answers))


def query(
    host: str,
    port: int,
    name: str,
    qtype: int = TYPE_A,
    *,
    tcp: bool = False,
    timeout: float = 2.0,
) -> Reply:
    """Ask `host`:`port` one question over udp (or tcp) and decode the reply."""
    ident = secrets.randbits(16)
    request = encode_query(name, qtype, ident)
    if tcp:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(struct.pack("!H", len(request)) + request)
            data = b""
            while len(data) < 2 or len(data) < 2 + struct.unpack_from("!H", data)[0]:
                chunk = sock.recv(4096)
                if not chunk:
                    raise ConnectionError(f"{host}:{port} closed the connection mid-reply")
                data += chunk
            message = data[2:]
    else:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(timeout)
            sock.sendto(request, (host, port))
            while True:
                message, _ = sock.recvfrom(65535)
                if struct.unpack_from("!H", message)[0] == ident:
                    break
    return decode_reply(message)


# -- the server -------------------------------------------------------------------------------


class ClusterDNS(OneProcessServer):
    """`with ClusterDNS(workdir, cp, "127.0.0.1", port) as dns:`: CoreDNS for `cluster.local`
    on `dns.host`:`dns.port`; `dns.startup_seconds` is how long start took to the first answer."""

    def __init__(
        self,
        workdir: Path,
        control_plane: ControlPlane,
        host: str = "127.0.0.1",
        port: int | None = None,
        service_cidr: str = SERVICE_CIDR,
    ) -> None:
        self.workdir = workdir / f"cluster-dns-{secrets.token_hex(3)}"
        self.cp = control_plane
        self.host = host
        self.port = port if port is not None else free_dns_port(host)
        self.zones = (CLUSTER_DOMAIN, reverse_zone(service_cidr))
        self.startup_seconds: float | None = None
        self._proc: Process | None = None

    @property
    def binary(self) -> Path:
        return self.cp.bindir / "coredns"

    def corefile(self) -> str:
        """One server block for the cluster's zones; none for `.`, so nothing is forwarded.

        `log` records only denials and errors (NXDOMAIN, REFUSED, SERVFAIL): the names Pods
        asked for and did not get, without a line per successful lookup. `cache 30` is what
        kubeadm's Corefile has; the kubernetes plugin's own TTL (5 s) is lower, so a Service
        made after a failed lookup resolves within seconds."""
        zones = " ".join(f"{zone}:{self.port}" for zone in self.zones)
        return f"""{zones} {{
    bind {self.host}
    errors
    log . {{
        class denial error
    }}
    cache 30
    kubernetes {" ".join(self.zones)} {{
        kubeconfig {self.cp.kubeconfig}
    }}
}}
"""

    def start(self) -> Self:
        if not self.binary.exists():
            raise StackError(
                f"coredns not found in {self.cp.bindir}: hack/control-plane-binaries.sh builds"
                " it from the Go module proxy (~4 min cold)"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        corefile = self.workdir / "Corefile"
        corefile.write_text(self.corefile())
        begin = time.monotonic()
        self._proc = Process(
            "coredns",
            [str(self.binary), f"-conf={corefile}"],
            self.workdir / "coredns.log",
            cwd=self.workdir,
        )
        self._proc.start()
        try:
            self._proc.wait_until(
                self.answers, 30, f"coredns answering for {KUBERNETES_SERVICE} on {self.address}"
            )
        except BaseException:
            # The process goes, its directory stays: the error names the log in it.
            self._proc.stop()
            raise
        self.startup_seconds = time.monotonic() - begin
        return self

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def answers(self) -> bool:
        """Whether it gives the API server's own Service an address, over udp."""
        with contextlib.suppress(OSError):
            return bool(query(self.host, self.port, KUBERNETES_SERVICE, timeout=0.5).addresses)
        return False

    def query(self, name: str, qtype: int = TYPE_A, *, tcp: bool = False) -> Reply:
        return query(self.host, self.port, name, qtype, tcp=tcp)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None
