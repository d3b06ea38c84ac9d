"""Serving an aiohttp application over TLS from a certificate and key on disk.

The API server calls webhooks only over HTTPS and checks the serving certificate against the
configuration's caBundle and the host it dials (an IP SAN for 127.0.0.1 locally, the Service's
DNS name in a cluster). Certificates rotate (cert-manager renews a mounted Secret in place), so
`reload_when_changed` loads a changed pair into the same SSL context: new handshakes use it,
open connections keep theirs.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import structlog
from aiohttp import web

log = structlog.get_logger(__name__)

DEFAULT_RELOAD_INTERVAL = 60.0


def server_ssl_context(cert_file: str | Path, key_file: str | Path) -> ssl.SSLContext:
    """A TLS server context (TLS 1.2 or later) holding the certificate chain and key."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert_file), str(key_file))
    return context


def _stamp(*paths: Path) -> tuple[float, ...]:
    return tuple(p.stat().st_mtime_ns for p in paths)


async def reload_when_changed(
    context: ssl.SSLContext,
    cert_file: str | Path,
    key_file: str | Path,
    interval: float = DEFAULT_RELOAD_INTERVAL,
) -> None:
    """Load the pair into `context` again whenever either file changes; runs until cancelled.

    A pair that fails to load (a half-written rotation) is tried again at the next look; the
    context keeps serving the last good one meanwhile.
    """
    cert, key = Path(cert_file), Path(key_file)
    seen = _stamp(cert, key)
    while True:
        await asyncio.sleep(interval)
        try:
            current = _stamp(cert, key)
            if current == seen:
                continue
            context.load_cert_chain(str(cert), str(key))
        except (OSError, ssl.SSLError) as exc:
            log.warning("serving certificate not reloaded", error=type(exc).__name__)
            continue
        seen = current
        log.info("serving certificate reloaded", cert=str(cert))


@dataclass
class HttpsServer:
    """A running HTTPS server; `close()` stops it."""

    runner: web.AppRunner
    host: str
    port: int
    context: ssl.SSLContext
    _reloader: asyncio.Task[None] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """https://host:port, to which a webhook path is appended."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}"

    async def close(self) -> None:
        if self._reloader is not None:
            self._reloader.cancel()
            await asyncio.gather(self._reloader, return_exceptions=True)
        await self.runner.cleanup()


async def start_https_server(
    app: web.Application,
    cert_file: str | Path,
    key_file: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    reload_interval: float | None = DEFAULT_RELOAD_INTERVAL,
) -> HttpsServer:
    """Serve `app` over TLS on host:port (port 0: any free port; `.port` says which).

    With `reload_interval`, a rotated certificate is picked up without a restart.
    """
    context = server_ssl_context(cert_file, key_file)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host=host, port=port, ssl_context=context)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound_port = int(runner.addresses[0][1])
    reloader = None
    if reload_interval is not None:
        reloader = asyncio.create_task(
            reload_when_changed(context, cert_file, key_file, reload_interval),
            name="webhook-certificate-reload",
        )
    return HttpsServer(runner, host, bound_port, context, reloader)
