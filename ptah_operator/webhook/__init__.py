"""webhook layer: the admission webhooks that stamp and check approvals.

The manager mounts the routes on its HTTPS server with `add_routes(app, lookup, seal=...)` (the
seal of spec writers' records, `writers.WriterSeal.derived_from(result_key)`) and registers
them with the configurations of `registration`; `tls.start_https_server` serves an application
on a certificate and key from disk.
"""

from ptah_operator.webhook.app import (
    MUTATE_PATH,
    VALIDATE_PATH,
    ApprovalWebhooks,
    Review,
    add_routes,
    build_app,
)
from ptah_operator.webhook.lookup import (
    ApiObjectLookup,
    CachedLookup,
    ObjectLookup,
    ObjectReadError,
)
from ptah_operator.webhook.tls import HttpsServer, server_ssl_context, start_https_server

__all__ = [
    "MUTATE_PATH",
    "VALIDATE_PATH",
    "ApiObjectLookup",
    "ApprovalWebhooks",
    "CachedLookup",
    "HttpsServer",
    "ObjectLookup",
    "ObjectReadError",
    "Review",
    "add_routes",
    "build_app",
    "server_ssl_context",
    "start_https_server",
]
