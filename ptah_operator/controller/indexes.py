"""The informer indexes both family controllers use, and the maps from a watched object to the
keys of the resources it concerns.

Contract: the manager shares one informer per resource, and an index registered twice keeps
its first function, so every index name here has exactly one function, used by both the
PtahMigration and the PtahSchema controller. Index values are "namespace/name" keys unless a
function says otherwise.

`FamilyWatches` turns an event on a watched object into the keys of one family's resources:
its source and policy ConfigMaps, the objects it owns (records, snapshots, piece records), the
Pods of its Jobs, its realm, its realm Lease, and every claimant of its coordination key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ptah_operator.api.constants import LABEL_OWNER_KIND, LABEL_OWNER_NAME, LABEL_OWNER_UID
from ptah_operator.api.names import realm_lease_name
from ptah_operator.runtime.informer import Informer
from ptah_operator.runtime.store import KubeObject, metadata, object_key

BY_COORDINATION_KEY = "coordination-key"
BY_SOURCE_CONFIGMAP = "source-configmap"
BY_REALM = "realm"
BY_LEASE = "realm-lease"
BY_OWNER_UID = "owner-uid"
BY_MIGRATION_NAME = "migration-name"
BY_SCHEMA_NAME = "schema-name"
BY_JOB_UID = "job-uid"
BY_POD_NAME_STEM = "pod-name-stem"


def spec_of(obj: KubeObject) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def coordination_key(obj: KubeObject) -> str | None:
    target = spec_of(obj).get("target") or {}
    key = target.get("coordinationKey")
    return str(key) if key else None


def index_coordination_key(obj: KubeObject) -> list[str]:
    """A resource under its coordination key (not a "namespace/name" key)."""
    key = coordination_key(obj)
    return [key] if key else []


def index_lease(obj: KubeObject) -> list[str]:
    """A resource under the name of its realm Lease."""
    key = coordination_key(obj)
    return [realm_lease_name(key)] if key else []


def index_source_configmap(obj: KubeObject) -> list[str]:
    """The ConfigMaps a resource reads without a Job: its source ConfigMap and the ConfigMaps
    holding its policies (a replaced policy is read at once, SRC-POL-07)."""
    spec = spec_of(obj)
    config_map = spec.get("configMap") or {}
    git = spec.get("git") or {}
    names = [
        config_map.get("name"),
        (config_map.get("sourcePolicyFrom") or {}).get("name"),
        (git.get("sourcePolicyFrom") or {}).get("name"),
        ((spec.get("artifact") or {}).get("verificationPolicyFrom") or {}).get("name"),
    ]
    namespace = metadata(obj).get("namespace")
    return sorted({f"{namespace}/{name}" for name in names if name})


def index_realm(obj: KubeObject) -> list[str]:
    """A resource under the name of the PtahRealm it names (cluster-scoped)."""
    realm = (spec_of(obj).get("target") or {}).get("realm")
    return [str(realm)] if realm else []


def index_owner_uid(obj: KubeObject) -> list[str]:
    """An operator-made object under the UID of the resource it belongs to: the owner label,
    else its ownerReferences (a chunk is owned by its plan but labelled with the schema)."""
    uid = (metadata(obj).get("labels") or {}).get(LABEL_OWNER_UID)
    if uid:
        return [str(uid)]
    return [str(ref["uid"]) for ref in metadata(obj).get("ownerReferences") or [] if "uid" in ref]


def index_job_owner_uid(obj: KubeObject) -> list[str]:
    """A Job under the UID of the resource it belongs to: its owner label and its controlling
    owner reference, both. A label is anyone's to change who may edit Jobs; a Job relabelled
    (by hand, a policy engine, a `commonLabels`) stays under the resource whose controller
    reference it carries, so its run is still followed (review of #18)."""
    label = (metadata(obj).get("labels") or {}).get(LABEL_OWNER_UID)
    uids = {str(label)} if label else set()
    for ref in metadata(obj).get("ownerReferences") or []:
        if ref.get("controller") is True and ref.get("uid"):
            uids.add(str(ref["uid"]))
    return sorted(uids)


def job_uid_of_pod(obj: KubeObject) -> str | None:
    """The UID of the Job that controls a Pod: its controlling owner reference to a Job, and
    nothing else. Labels (`job-name`, `controller-uid`) are anyone's to write who may create
    Pods, so a Pod carrying them is not taken as a Job's (review of #18, finding 9); a Pod
    orphaned by its Job's deletion loses the reference and is no Job's any more."""
    meta = metadata(obj)
    for ref in meta.get("ownerReferences") or []:
        if ref.get("kind") == "Job" and ref.get("controller") is True and ref.get("uid"):
            return str(ref["uid"])
    return None


def index_job_uid(obj: KubeObject) -> list[str]:
    """A Pod under the UID of the Job that controls it (not a "namespace/name" key)."""
    uid = job_uid_of_pod(obj)
    return [uid] if uid else []


def pod_name_stem(name: str) -> str:
    """The name a Pod's name was generated from: a Job's Pod is `<job name>-<suffix>`."""
    return name.rsplit("-", 1)[0] if "-" in name else ""


def index_pod_name_stem(obj: KubeObject) -> list[str]:
    """A Pod under "namespace/<the name its name was generated from>" (a Job's name, for a
    Job's Pod); a Pod's name cannot change, as its labels can."""
    stem = pod_name_stem(str(metadata(obj).get("name", "")))
    return [f"{metadata(obj).get('namespace')}/{stem}"] if stem else []


def job_pod_keys(job: KubeObject) -> list[str]:
    """The BY_JOB_UID keys of a Job's Pods: its UID."""
    return [str(metadata(job).get("uid"))]


def _ref_index(field: str) -> Any:
    def index(obj: KubeObject) -> list[str]:
        ref = spec_of(obj).get(field) or {}
        name = ref.get("name")
        return [f"{metadata(obj).get('namespace')}/{name}"] if name else []

    return index


index_migration_name = _ref_index("migrationRef")
"""An approval or acknowledgment under the key of the migration it names."""
index_schema_name = _ref_index("schemaRef")
"""A schema approval under the key of the schema it names."""


def controlling_owner(obj: KubeObject, kind: str) -> str | None:
    """The key of the object's controlling owner of `kind` (same namespace), or None."""
    for ref in metadata(obj).get("ownerReferences") or []:
        if ref.get("kind") == kind and ref.get("controller"):
            return f"{metadata(obj).get('namespace')}/{ref.get('name')}"
    return None


def labelled_owner(obj: KubeObject, kind: str) -> str | None:
    """The key of the resource an operator-made object is labelled with, when of `kind`."""
    labels = metadata(obj).get("labels") or {}
    if labels.get(LABEL_OWNER_KIND) != kind or not labels.get(LABEL_OWNER_NAME):
        return None
    return f"{metadata(obj).get('namespace')}/{labels[LABEL_OWNER_NAME]}"


class FamilyWatches:
    """Map functions from watched objects to the keys of one family's resources (`kind`,
    held by `primaries`, which must carry the indexes above)."""

    def __init__(self, kind: str, primaries: Informer, jobs: Informer) -> None:
        self.kind = kind
        self.primaries = primaries
        self.jobs = jobs

    def claimants_of(self, obj: KubeObject) -> list[str]:
        """This family's resources sharing the object's coordination key (its census)."""
        key = coordination_key(obj)
        if not key:
            return []
        return sorted(self.primaries.store.index_keys(BY_COORDINATION_KEY, key))

    def self_and_claimants(self, obj: KubeObject) -> list[str]:
        """The resource's own key and its census (a change to one claimant can change every
        other's verdict): the equivalent of watching the resource plus `claimants_of`."""
        return sorted({object_key(obj), *self.claimants_of(obj)})

    def configmap_keys(self, obj: KubeObject) -> list[str]:
        """Readers of a source or policy ConfigMap, and the owner of a record or snapshot."""
        keys = set(self.primaries.store.index_keys(BY_SOURCE_CONFIGMAP, object_key(obj)))
        owner = controlling_owner(obj, self.kind)
        if owner is not None:
            keys.add(owner)
        return sorted(keys)

    def pod_keys(self, obj: KubeObject) -> list[str]:
        """A Pod's Job's owner: an init container's verdict arrives on the Pod first; and the
        resource a Pod is labelled with, so that a Pod orphaned by its Job's deletion still
        wakes the run it keeps open when it stops (issue #18; a wake-up only)."""
        meta = metadata(obj)
        keys: set[str] = set()
        labelled = labelled_owner(obj, self.kind)
        if labelled is not None:
            keys.add(labelled)
        job = (meta.get("labels") or {}).get("job-name")
        owner_job = self.jobs.store.get(f"{meta.get('namespace')}/{job}") if job else None
        owner = controlling_owner(owner_job, self.kind) if owner_job is not None else None
        if owner is not None:
            keys.add(owner)
        return sorted(keys)

    def realm_keys(self, obj: KubeObject) -> list[str]:
        """The resources naming a PtahRealm (`spec.target.realm`, index BY_REALM)."""
        return sorted(self.primaries.store.index_keys(BY_REALM, str(metadata(obj).get("name"))))

    def lease_keys(self, obj: KubeObject) -> list[str]:
        """The resources whose coordination key's realm Lease this is (index BY_LEASE): any
        claimant of the key, whoever holds the Lease."""
        return sorted(self.primaries.store.index_keys(BY_LEASE, str(metadata(obj).get("name"))))

    def labelled_keys(self, obj: KubeObject) -> list[str]:
        """The resource an operator-made object is labelled with (a chunk, owned by its plan)."""
        owner = labelled_owner(obj, self.kind)
        return [owner] if owner is not None else []


PRIMARY_INDEXES = {
    BY_COORDINATION_KEY: index_coordination_key,
    BY_SOURCE_CONFIGMAP: index_source_configmap,
    BY_REALM: index_realm,
    BY_LEASE: index_lease,
}
"""The indexes every family's resources carry."""
