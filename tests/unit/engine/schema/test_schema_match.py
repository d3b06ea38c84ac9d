"""Pairing a table's items (`diff._match`): the shortcut for items that all have names of
their own gives exactly what the general pairing gives, on any lists.

The shortcut serves most tables of a plan (servers name every index and constraint); the
general pairing is the rule (`_match_any`'s docstring). Items are drawn from a small pool
of names and contents so that twins, same-named items of other content, repeated names and
unnamed items all occur often.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ptah_operator.engine.schema.diff import _match, _match_any, _match_named
from ptah_operator.engine.schema.model import Check, Index, UniqueConstraint

NAMES = st.sampled_from(["a", "b", "c", "d", None])
COLUMNS = st.sampled_from([("x",), ("y",), ("x", "y")])


def indexes() -> st.SearchStrategy[Index]:
    return st.builds(
        Index,
        name=NAMES,
        columns=COLUMNS,
        unique=st.booleans(),
        # A prefix of None everywhere and no prefix are one key, but not equal items.
        prefix_lengths=st.sampled_from([(), (None,), (4,)]),
        implicit=st.booleans(),
    )


def uniques() -> st.SearchStrategy[UniqueConstraint]:
    return st.builds(UniqueConstraint, columns=COLUMNS, name=NAMES)


def checks() -> st.SearchStrategy[Check]:
    return st.builds(Check, expr=st.sampled_from(["x > 0", "y > 0"]), name=NAMES)


@settings(max_examples=600, deadline=None)
@given(
    st.one_of(
        st.tuples(st.lists(indexes(), max_size=5), st.lists(indexes(), max_size=5)),
        st.tuples(st.lists(uniques(), max_size=4), st.lists(uniques(), max_size=4)),
        st.tuples(st.lists(checks(), max_size=4), st.lists(checks(), max_size=4)),
    )
)
def test_the_shortcut_for_named_items_pairs_as_the_general_rule_does(
    sides: tuple[list[Any], list[Any]],
) -> None:
    desired, observed = sides
    assert _match(list(desired), list(observed)) == _match_any(list(desired), list(observed))


def test_the_shortcut_is_taken_only_where_every_name_is_there_and_its_own() -> None:
    one = Index(name="a", columns=("x",))
    other = Index(name="b", columns=("x",))
    unnamed = Index(name=None, columns=("x",))
    assert _match_named([one], [other, one]) == ([], [other])
    assert _match_named([unnamed], [one]) is None
    assert _match_named([one], [unnamed]) is None
    assert _match_named([one, one], [one]) is None
    assert _match_named([one], [one, one]) is None


def test_a_twin_of_another_spelling_of_its_key_is_paired() -> None:
    # Equal keys, unequal items: no prefix given, and a prefix of None for every column.
    desired = Index(name="a", columns=("x",))
    observed = Index(name="a", columns=("x",), prefix_lengths=(None,))
    assert desired != observed
    assert _match_named([desired], [observed]) == ([], [])
    assert _match_named([desired], [Index(name="a", columns=("y",))]) == (
        [desired],
        [Index(name="a", columns=("y",))],
    )
