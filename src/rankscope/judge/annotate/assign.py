"""Who judges what: a deterministic, seeded split of the pairs over annotators, with overlap.

Each pair goes to one annotator; ``round(overlap * n)`` pairs (half up), drawn with the seed, go
to two, so that agreement can be measured on them. Pairs are dealt in a seeded order to the
annotator(s) with the fewest so far (ties to the one earliest in a seeded order of the names),
so the queues differ in length by at most one pair. Each queue keeps the pool's order (a
query's documents one after another). The same pairs, names, overlap and seed give the same
queues on any machine and Python version: the shuffles are rankscope's own Fisher-Yates over
:meth:`random.Random.random`, whose sequence for an integer seed Python keeps stable (its
``shuffle`` and ``sample`` may change between versions).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from decimal import Decimal
from typing import TypeVar

from rankscope.errors import InputError

T = TypeVar("T")


def overlap_count(n: int, overlap: float) -> int:
    """Pairs judged twice: ``overlap * n`` rounded half up, with the overlap read as the
    decimal it was written as (0.29 of 50 is 14.5, so 15; in binary floating point 14.499...)."""
    return math.floor(Decimal(repr(float(overlap))) * n + Decimal("0.5"))


def _shuffled(items: Sequence[T], rng: random.Random) -> list[T]:
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


def assign_pairs(
    pairs: Sequence[int], annotators: Sequence[str], *, overlap: float = 0.1, seed: int = 0
) -> dict[str, list[int]]:
    """``{annotator: [pair, ...]}``, each list in the order of ``pairs``.

    With one annotator every pair is theirs and ``overlap`` is moot. ``overlap`` is a fraction
    in [0, 1]; 1 gives every pair to two annotators.
    """
    if not annotators:
        raise InputError("no annotator to assign pairs to", hint="e.g. --annotators alice,bob")
    if len(set(annotators)) != len(annotators):
        raise InputError("an annotator is named twice", value=list(annotators))
    if not (isinstance(overlap, float | int) and 0.0 <= overlap <= 1.0):
        raise InputError("the overlap is a fraction from 0 to 1", value=overlap, hint="e.g. 0.1")
    if len(set(pairs)) != len(pairs):
        raise InputError("a pair is listed twice")
    if len(annotators) == 1:
        return {annotators[0]: list(pairs)}
    rng = random.Random(seed)
    names = _shuffled(annotators, rng)  # the tie order: no name is favoured by its place
    order = _shuffled(pairs, rng)
    twice = set(order[: overlap_count(len(order), overlap)])  # a uniform draw: order is random
    load = dict.fromkeys(names, 0)
    got: dict[str, set[int]] = {name: set() for name in names}
    for pair in order:
        take = sorted(names, key=lambda name: load[name])[: 2 if pair in twice else 1]
        for name in take:
            load[name] += 1
            got[name].add(pair)
    return {name: [p for p in pairs if p in got[name]] for name in annotators}


__all__ = ["assign_pairs", "overlap_count"]
