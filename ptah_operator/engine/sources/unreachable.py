"""A server the sources read over HTTP(S) with requests (a Git server, a registry): its failure
to answer becomes SourceUnreachableError, a message naming the server and never its error text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import requests

from ptah_operator.engine.sources.errors import SourceUnreachableError


@contextlib.contextmanager
def reaching(server: str, tls_advice: str = "") -> Iterator[None]:
    """Requests to `server` ("the Git server H", "the registry H") inside the block; a TLS
    failure's message ends with `tls_advice`."""
    try:
        yield
    except requests.exceptions.SSLError:
        raise SourceUnreachableError(
            f"the TLS connection to {server} failed (a certificate not trusted, or no HTTPS"
            f" there{tls_advice})"
        ) from None
    except requests.exceptions.Timeout:
        raise SourceUnreachableError(f"{server} did not answer in time") from None
    except requests.exceptions.RequestException:
        raise SourceUnreachableError(f"{server} cannot be reached") from None
