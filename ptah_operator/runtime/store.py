"""The informer's local cache: objects by key, with secondary indexes.

Contract:
- Objects are the API server's JSON as dicts (`KubeObject`), the same shape for core, batch
  and custom resources. Callers must treat them as read-only: the store hands out the object
  it holds, not a copy (copy before changing one).
- The key is client-go's `MetaNamespaceKeyFunc`: "namespace/name", or "name" for a
  cluster-scoped object (`object_key`, `split_key`).
- An index is a name and a function from an object to the index values it files under;
  `by_index(name, value)` lists the objects filed under `value`. Helpers build the usual
  ones (`index_by_namespace`, `index_by_owner_uid`, `index_by_label`).
- Single event loop, no locks: only the informer that owns the store writes to it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping
from typing import Any

KubeObject = dict[str, Any]
IndexFunc = Callable[[KubeObject], Iterable[str]]

NAMESPACE_INDEX = "namespace"
OWNER_UID_INDEX = "owner-uid"


def metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def object_key(obj: Mapping[str, Any]) -> str:
    """ "namespace/name" for a namespaced object, "name" for a cluster-scoped one."""
    meta = metadata(obj)
    name = meta.get("name")
    if not name:
        raise ValueError("object has no metadata.name")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else str(name)


def split_key(key: str) -> tuple[str | None, str]:
    """(namespace, name) of a key; namespace is None for a cluster-scoped key."""
    namespace, sep, name = key.partition("/")
    if not sep:
        return None, key
    if not namespace or not name or "/" in name:
        raise ValueError(f"malformed key {key!r}")
    return namespace, name


def resource_version(obj: Mapping[str, Any]) -> str:
    return str(metadata(obj).get("resourceVersion") or "")


def index_by_namespace(obj: KubeObject) -> list[str]:
    namespace = metadata(obj).get("namespace")
    return [str(namespace)] if namespace else []


def index_by_owner_uid(obj: KubeObject) -> list[str]:
    refs = metadata(obj).get("ownerReferences") or []
    return [str(ref["uid"]) for ref in refs if isinstance(ref, Mapping) and ref.get("uid")]


def index_by_label(label: str) -> IndexFunc:
    """An index on the value of one label (objects without the label are not filed)."""

    def index(obj: KubeObject) -> list[str]:
        labels = metadata(obj).get("labels") or {}
        value = labels.get(label)
        return [str(value)] if value is not None else []

    return index


class Store:
    """Objects by key plus indexes; written only by its informer."""

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        # Invariants:
        # - `_indices` has exactly the names of `_indexers`;
        # - for every index, `value -> keys` holds a key exactly when `_items` holds an object
        #   under it whose index function gives `value`; no set is left empty (a value no
        #   object gives is not listed by `index_values`);
        # - unfiling calls the index function again on the object being replaced, so index
        #   functions must be pure functions of the object.
        self._items: dict[str, KubeObject] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def get(self, key: str) -> KubeObject | None:
        return self._items.get(key)

    def list(self) -> builtins.list[KubeObject]:
        return list(self._items.values())

    def keys(self) -> builtins.list[str]:
        return list(self._items)

    def index_names(self) -> builtins.list[str]:
        return list(self._indexers)

    def by_index(self, index_name: str, value: str) -> builtins.list[KubeObject]:
        return [self._items[key] for key in sorted(self.index_keys(index_name, value))]

    def index_keys(self, index_name: str, value: str) -> set[str]:
        if index_name not in self._indexers:
            raise KeyError(f"no index named {index_name!r}")
        return set(self._indices[index_name].get(value, ()))

    def index_values(self, index_name: str) -> builtins.list[str]:
        if index_name not in self._indexers:
            raise KeyError(f"no index named {index_name!r}")
        return sorted(self._indices[index_name])

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Add an index (filing every object already held)."""
        if name in self._indexers:
            raise ValueError(f"index {name!r} already exists")
        self._indexers[name] = func
        self._indices[name] = {}
        for key, obj in self._items.items():
            self._file(name, key, obj)

    def upsert(self, obj: KubeObject) -> KubeObject | None:
        """Hold `obj` under its key; returns the object it replaced, if any."""
        key = object_key(obj)
        old = self._items.get(key)
        if old is not None:
            self._unfile_all(key, old)
        self._items[key] = obj
        for name in self._indexers:
            self._file(name, key, obj)
        return old

    def delete(self, key: str) -> KubeObject | None:
        """Drop the object under `key`; returns it, if it was held."""
        old = self._items.pop(key, None)
        if old is not None:
            self._unfile_all(key, old)
        return old

    def replace(self, objs: Iterable[KubeObject]) -> None:
        """Hold exactly `objs` (the result of a list)."""
        self._items = {}
        self._indices = {name: {} for name in self._indexers}
        for obj in objs:
            self.upsert(obj)

    def _file(self, name: str, key: str, obj: KubeObject) -> None:
        index = self._indices[name]
        for value in self._indexers[name](obj):
            index.setdefault(value, set()).add(key)

    def _unfile_all(self, key: str, obj: KubeObject) -> None:
        for name, func in self._indexers.items():
            index = self._indices[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
