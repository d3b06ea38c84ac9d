"""Object metadata and the envelope every kind shares (apiVersion, kind, metadata).

Metadata is the API server's, not ours: it keeps fields this model does not name (managedFields
and the like) so that an object read and written back loses nothing. The CRDs describe it only
as an object, as Kubernetes requires.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from ptah_operator.api.constants import API_VERSION
from ptah_operator.api.fields import ApiModel, Timestamp


class OwnerReference(ApiModel):
    """metav1.OwnerReference."""

    model_config = ConfigDict(extra="allow")

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(ApiModel):
    """metav1.ObjectMeta: the fields the operator reads, and any others kept as they came."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Timestamp | None = None
    deletion_timestamp: Timestamp | None = None
    # Absent rather than empty by default: an empty list written back in a merge patch would
    # remove what another client put there.
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None

    def annotation(self, key: str) -> str | None:
        """The value of one annotation, or None."""
        return (self.annotations or {}).get(key)

    def label(self, key: str) -> str | None:
        """The value of one label, or None."""
        return (self.labels or {}).get(key)


class Resource(ApiModel):
    """The envelope of every kind of group operator.ptah.run. Subclasses pin kind."""

    api_version: Literal["operator.ptah.run/v1alpha1"] = API_VERSION
    kind: str
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
