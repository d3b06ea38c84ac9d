"""The model classes whose `__init__` stores only fields given something other than their
default (`model._lean_init`): each object is, by every means the engine and Python read
one, the object the dataclass-generated `__init__` makes from the same arguments.

Arguments are drawn per field from its default, an equal value that is another object
(an equal string made anew, a tuple rebuilt), and values of other kinds.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptah_operator.engine.schema import model
from ptah_operator.engine.schema.diff import plan_changes
from ptah_operator.engine.schema.model import (
    Column,
    ForeignKey,
    Index,
    PrimaryKey,
    Schema,
    Table,
    canonical_json,
    compact_json,
)
from ptah_operator.engine.schema.plan import build_plan
from ptah_operator.engine.schema.scope import Scope

LEAN = [Column, Index]


def _made_anew(value: Any) -> Any:
    """An equal value that is not the same object, where Python lets one be made."""
    if isinstance(value, str):
        return "".join(list(value)) if len(value) > 1 else value
    if isinstance(value, tuple) and value:
        return (*value,)
    return value


def _values(f: dataclasses.Field[Any]) -> st.SearchStrategy[Any]:
    others = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.text(max_size=4),
        st.tuples(st.text(max_size=2)),
    )
    if f.default is dataclasses.MISSING:
        return others
    return st.one_of(st.just(f.default), st.just(_made_anew(f.default)), others)


def _arguments(cls: type) -> st.SearchStrategy[dict[str, Any]]:
    fields = dataclasses.fields(cls)
    required = {f.name: _values(f) for f in fields if f.default is dataclasses.MISSING}
    optional = {f.name: _values(f) for f in fields if f.default is not dataclasses.MISSING}
    return st.fixed_dictionaries(required, optional=optional)


def _reference(cls: type) -> type:
    """The class as `dataclass` alone makes it: the same fields, frozen, generated methods."""
    fields = [
        (f.name, f.type, dataclasses.field(default=f.default, compare=f.compare, repr=f.repr))
        for f in dataclasses.fields(cls)
    ]
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=True)


REFERENCES = {cls: _reference(cls) for cls in LEAN}


def _generated(cls: type, arguments: dict[str, Any]) -> Any:
    return REFERENCES[cls](**arguments)


def _fields(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


@pytest.mark.parametrize("cls", LEAN, ids=lambda cls: cls.__name__)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_lean_object_is_the_generated_one(cls: type, data: st.DataObject) -> None:
    one, other = data.draw(_arguments(cls)), data.draw(_arguments(cls))
    lean, generated = cls(**one), _generated(cls, one)
    assert _fields(lean) == _fields(generated)
    assert {k: type(v) for k, v in _fields(lean).items()} == {
        k: type(v) for k, v in _fields(generated).items()
    }
    assert repr(lean).removeprefix(cls.__name__) == repr(generated).removeprefix(cls.__name__)
    assert hash(lean) == hash(generated)
    assert compact_json(lean) == compact_json(generated)
    # Equal exactly when the generated objects are; equal objects hash alike.
    assert (lean == cls(**other)) == (generated == _generated(cls, other))
    if lean == cls(**other):
        assert hash(lean) == hash(cls(**other))
    assert lean == cls(**one)
    for again in (pickle.loads(pickle.dumps(lean)), copy.copy(lean), copy.deepcopy(lean)):
        assert again == lean
        assert _fields(again) == _fields(generated)
    first = dataclasses.fields(cls)[0].name
    changed = dataclasses.replace(lean, **{first: "x"})
    assert _fields(changed) == _fields(dataclasses.replace(generated, **{first: "x"}))
    assert changed == cls(**{**one, first: "x"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        lean.name = "y"


def test_lean_objects_encode_as_their_fields_do() -> None:
    column = Column(name="id", type="integer", nullable=False)
    index = Index(name="i", columns=("id",), unique=True)
    assert compact_json(column) == compact_json(_generated(Column, _fields(column)))
    assert compact_json(index) == compact_json(_generated(Index, _fields(index)))


def _golden_schema(extra: bool) -> Schema:
    """Columns and indexes with fields at their defaults and not, and a foreign key."""
    columns: tuple[Column, ...] = (
        Column(name="id", type="integer", nullable=False, identity="by default"),
        Column(
            name="name",
            type="character varying(40)",
            default="'x'::character varying",
            comment="the name",
        ),
        Column(
            name="at", type="timestamp with time zone", nullable=False, default="CURRENT_TIMESTAMP"
        ),
        Column(name="n", type="integer", generated="(id * 2)"),
    )
    indexes: tuple[Index, ...] = (
        Index(name="t_name", columns=("name",), unique=True, where="(n > 0)"),
        Index(name="t_at", columns=("at", "id"), key_options=("DESC", "")),
    )
    if extra:
        columns += (Column(name="e", type="text", collation="C"),)
        indexes += (Index(name="t_e", columns=("e",), method="hash"),)
    t = Table(
        schema="public",
        name="t",
        columns=columns,
        primary_key=PrimaryKey(columns=("id",), name="t_pkey"),
        indexes=indexes,
    )
    key = ForeignKey(
        columns=("t_id",),
        ref_schema="public",
        ref_table="t",
        ref_columns=("id",),
        name="u_t",
        on_delete="CASCADE",
    )
    u = Table(
        schema="public",
        name="u",
        columns=(Column(name="t_id", type="integer"),),
        foreign_keys=(key,),
    )
    return Schema(dialect=model.Dialect.POSTGRESQL, schemas=("public",), tables=(t, u))


def test_fingerprints_and_plan_bytes_are_those_of_the_model_before_it() -> None:
    # Computed by the engine at 6f0bbbe, whose Column and Index stored every field through
    # the generated __init__ and were encoded through their fields.
    before, after = _golden_schema(False), _golden_schema(True)
    assert before.fingerprint() == (
        "sha256:5b1fa58cec105950370b0e8cfc09dc1eaa6f63fb6dd9b12d96a67096f068c53d"
    )
    assert after.fingerprint() == (
        "sha256:420616fb75710a6264bb33a3659cbec630a22119a70cd0467113c74951573e71"
    )
    assert hashlib.sha256(canonical_json(after)).hexdigest() == (
        "634b671647319cd0444b3787c0fb73feb3f732bab4083fe000e8c5a1fc882e1f"
    )
    plan = build_plan(before, after, Scope(), plan_changes(before, after))
    assert hashlib.sha256(plan).hexdigest() == (
        "14022a71d072e8ddae49c0263bb67ec3897b1c2cd3c0bea4df53d56915c8f021"
    )


def test_a_class_with_a_default_factory_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Factory:
        items: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="only plain defaults"):
        model._lean_init(Factory)
