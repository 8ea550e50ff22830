"""The split of pairs over annotators: pinned, seeded, balanced, with the overlap asked for."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankscope.errors import InputError
from rankscope.judge.annotate.assign import assign_pairs, overlap_count


def test_pinned_split() -> None:
    """The same input gives these queues everywhere (the shuffle is rankscope's own Fisher-Yates
    over random.Random.random, whose sequence Python keeps for an integer seed)."""
    assert assign_pairs(list(range(1, 21)), ["alice", "bob", "carol"], overlap=0.1, seed=7) == {
        "alice": [1, 2, 3, 5, 6, 13, 19],
        "bob": [7, 9, 11, 12, 13, 14, 16, 18],
        "carol": [4, 8, 9, 10, 15, 17, 20],
    }
    assert assign_pairs(list(range(1, 11)), ["alice", "bob"], overlap=0.25, seed=0) == {
        "alice": [1, 2, 3, 5, 6, 8, 10],
        "bob": [1, 4, 5, 6, 7, 9],
    }


def test_overlap_rounds_half_up() -> None:
    assert [overlap_count(n, 0.1) for n in (4, 5, 14, 15, 25, 100)] == [0, 1, 1, 2, 3, 10]
    assert overlap_count(10, 0.25) == 3 and overlap_count(7, 0.0) == 0 and overlap_count(7, 1) == 7
    # as written in decimal: 0.29 * 50 = 14.5 -> 15 (binary floating point gives 14.4999...)
    assert overlap_count(50, 0.29) == 15 and overlap_count(90, 0.35) == 32


def test_one_annotator_gets_everything_in_order() -> None:
    assert assign_pairs([5, 3, 9], ["solo"], overlap=0.5) == {"solo": [5, 3, 9]}


def test_seed_changes_the_split_and_names_keep_their_order() -> None:
    a = assign_pairs(list(range(50)), ["x", "y"], seed=1)
    b = assign_pairs(list(range(50)), ["x", "y"], seed=2)
    assert a != b
    assert list(assign_pairs(list(range(5)), ["zed", "amy"])) == ["zed", "amy"]


@given(
    n=st.integers(0, 120),
    k=st.integers(2, 6),
    overlap=st.floats(0, 1, allow_nan=False),
    seed=st.integers(0, 2**32),
)
def test_each_pair_once_or_twice_and_queues_balanced(
    n: int, k: int, overlap: float, seed: int
) -> None:
    pairs = [p * 3 + 1 for p in range(n)]
    names = [f"a{i}" for i in range(k)]
    split = assign_pairs(pairs, names, overlap=overlap, seed=seed)
    counts = {p: sum(p in q for q in split.values()) for p in pairs}
    assert sum(1 for c in counts.values() if c == 2) == overlap_count(n, overlap)
    assert set(counts.values()) <= {1, 2}
    lengths = [len(q) for q in split.values()]
    assert max(lengths) - min(lengths) <= 1
    for queue in split.values():  # pool order kept
        assert queue == sorted(queue, key=pairs.index)
    assert split == assign_pairs(pairs, names, overlap=overlap, seed=seed)


@pytest.mark.parametrize(
    ("names", "overlap", "match"),
    [
        ([], 0.1, "no annotator"),
        (["a", "a"], 0.1, "named twice"),
        (["a", "b"], 1.5, "fraction from 0 to 1"),
        (["a", "b"], -0.1, "fraction from 0 to 1"),
    ],
)
def test_bad_requests(names: list[str], overlap: float, match: str) -> None:
    with pytest.raises(InputError, match=match):
        assign_pairs([1, 2], names, overlap=overlap)
