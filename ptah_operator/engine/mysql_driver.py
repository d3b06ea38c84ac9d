"""PyMySQL without loading `cryptography` until a password exchange needs it.

`pymysql._auth` imports `cryptography` when it is first imported (aiomysql imports it too),
which takes 50 to 150 ms on a two-core machine: more than everything else `ptah migrations
status` loads. It needs it for one thing only, the RSA encryption of a password that
`sha256_password` and `caching_sha2_password` (MySQL 8's default) do on a connection without
TLS. `load()` imports PyMySQL with `cryptography` hidden and then gives `pymysql._auth` stand-ins
that import the real modules the first time that encryption runs, so the driver behaves as it
would have, one import later. PyMySQL offers no switch for this, hence the few lines here; if
`cryptography` is loaded already, or PyMySQL is, nothing is done. While PyMySQL is imported,
`cryptography` is hidden from the whole process: a thread importing it in those milliseconds
would be told it is absent. The engines call `load()` from the event loop's thread, as they
connect; nothing of theirs imports `cryptography` from another.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any

# The modules pymysql/_auth.py takes its names from, and the names.
_STAND_INS = {
    "default_backend": ("cryptography.hazmat.backends", "default_backend"),
    "hashes": ("cryptography.hazmat.primitives.hashes", None),
    "serialization": ("cryptography.hazmat.primitives.serialization", None),
    "padding": ("cryptography.hazmat.primitives.asymmetric.padding", None),
}


class _OnFirstUse:
    """A module, or a function of one, imported when first used."""

    def __init__(self, module: str, name: str | None) -> None:
        self._module = module
        self._name = name

    def _target(self) -> Any:
        try:
            module: ModuleType = importlib.import_module(self._module)
        except ImportError:  # as PyMySQL says when it has no cryptography
            raise RuntimeError(
                "'cryptography' package is required for sha256_password or"
                " caching_sha2_password auth methods"
            ) from None
        return module if self._name is None else getattr(module, self._name)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._target(), attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)


def load() -> ModuleType:
    """Import PyMySQL (and return it) so that `cryptography` loads only when an RSA password
    exchange runs."""
    if "pymysql._auth" in sys.modules or "cryptography" in sys.modules:
        return importlib.import_module("pymysql")
    sys.modules["cryptography"] = None  # type: ignore[assignment]  # makes its import fail
    try:
        auth = importlib.import_module("pymysql._auth")
    finally:
        del sys.modules["cryptography"]
    if (
        not getattr(auth, "_have_cryptography", True)
        and importlib.util.find_spec("cryptography") is not None
    ):
        for attribute, (module, name) in _STAND_INS.items():
            setattr(auth, attribute, _OnFirstUse(module, name))
        setattr(auth, "_have_cryptography", True)  # noqa: B010
    return importlib.import_module("pymysql")
