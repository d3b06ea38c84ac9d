"""kubernetes_asyncio, loaded a module at a time (issue #17: memory).

`import kubernetes_asyncio.client` executes the package's `__init__`, which imports every API
class and every model the generator made: 859 modules and about 60 MiB of the manager's 106 MiB
at start, of which the manager uses four APIs and a handful of models. `install()` puts in
`sys.modules`, before anything imports the real packages, four lazy package modules in their
place (`kubernetes_asyncio`, `.client`, `.client.api`, `.client.models`) whose `__path__` is the
real package directory, so that every submodule imports as it always does, and whose attribute
lookups import the one submodule that defines the name (read from the real `__init__.py`'s
`from ... import Name` lines). `ApiClient` deserializes by `getattr(client.models, "V1Lease")`,
which imports `models.v1_lease` alone.

Written here rather than taken from a library: the lazy-import helpers we know of (importlib's
LazyLoader, lazy_loader) delay a module's execution, not its `__init__`'s imports of hundreds
of submodules, which is where the cost is. If the real package is already imported (a test
process, a tool that imported it first), `install()` does nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from importlib.machinery import ModuleSpec
from pathlib import Path

PACKAGE = "kubernetes_asyncio"
LAZY = (PACKAGE, f"{PACKAGE}.client", f"{PACKAGE}.client.api", f"{PACKAGE}.client.models")
"""The packages whose `__init__` is replaced; every other module is the real one."""

_NAMED = re.compile(r"^from (kubernetes_asyncio(?:\.\w+)+) import (\w+)\s*$", re.MULTILINE)
_VERSION = re.compile(r"^__version__ = \"([^\"]+)\"", re.MULTILINE)


class LazyPackage(types.ModuleType):
    """A package whose names are imported on first use, each from the submodule its real
    `__init__.py` imports it from."""

    _ptah_init: Path
    _ptah_names: dict[str, str] | None

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        source = self._names().get(name)
        if source is None:
            submodule = f"{self.__name__}.{name}"
            try:
                return importlib.import_module(submodule)
            except ModuleNotFoundError as error:
                if error.name != submodule:
                    raise  # (a submodule that is there, missing one of its own imports)
                raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from (
                    error
                )
        value = getattr(importlib.import_module(source), name)
        setattr(self, name, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._names()})

    def _names(self) -> dict[str, str]:
        if self._ptah_names is None:
            text = self._ptah_init.read_text(encoding="utf-8")
            self._ptah_names = {name: module for module, name in _NAMED.findall(text)}
        return self._ptah_names


def install() -> bool:
    """Put the lazy packages in place; False when the real package is imported already (or
    is not installed), and nothing was changed."""
    if any(name in sys.modules for name in LAZY):
        return False
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return False
    root = Path(spec.origin).parent
    modules: dict[str, LazyPackage] = {}
    for name in LAZY:
        directory = root.joinpath(*name.split(".")[1:])
        module = LazyPackage(name)
        module.__file__ = str(directory / "__init__.py")
        module.__path__ = [str(directory)]
        module.__package__ = name
        package_spec = ModuleSpec(name, None, origin=module.__file__, is_package=True)
        package_spec.submodule_search_locations = [str(directory)]
        module.__spec__ = package_spec
        module._ptah_init = directory / "__init__.py"
        module._ptah_names = None
        modules[name] = module
    version = _VERSION.search(modules[PACKAGE]._ptah_init.read_text(encoding="utf-8"))
    if version is not None:
        modules[PACKAGE].__version__ = version.group(1)  # type: ignore[attr-defined]
    sys.modules.update(modules)
    modules[PACKAGE].client = modules[f"{PACKAGE}.client"]  # type: ignore[attr-defined]
    client = modules[f"{PACKAGE}.client"]
    client.api = modules[f"{PACKAGE}.client.api"]  # type: ignore[attr-defined]
    client.models = modules[f"{PACKAGE}.client.models"]  # type: ignore[attr-defined]
    return True
