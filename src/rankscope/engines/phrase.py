"""Lucene's sloppy-phrase rule, for engines that check phrases themselves.

Lucene (``SloppyPhraseMatcher``) matches a phrase within ``slop`` when each query term can be
given one occurrence in the document, at distinct positions, such that the *match length*

    max_i(p_i - q_i) - min_i(p_i - q_i) <= slop

where ``p_i`` is the term's position in the document and ``q_i`` its position in the phrase. Terms
need not keep their order: ``"blunt body"`` matches ``"body blunt"`` at slop 2 (a transposition
costs 2), not at slop 1; ``"a b c"`` matches ``"a x b c"`` at slop 1. Slop 0 is an exact phrase.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence


def phrase_offsets(phrase: Sequence[str]) -> list[tuple[str, int]]:
    """The phrase's terms with their positions, ``[(term, q_i)]``; empty terms keep a gap."""
    return [(t, i) for i, t in enumerate(phrase) if t]


def sloppy_match_length(
    positions: Sequence[Sequence[int]], offsets: Sequence[int], slop: int
) -> int | None:
    """The smallest match length <= ``slop`` for terms at ``positions`` (one sorted list per
    query term) and phrase ``offsets``, or None when there is none.

    A depth-first search over one occurrence per term (rarest term first), trying only the
    occurrences that keep the window of ``p_i - q_i`` within ``slop``; occurrences must be
    distinct (a word repeated in the phrase needs two occurrences).
    """
    if not positions:
        return None
    if any(not p for p in positions):
        return None
    order = sorted(range(len(positions)), key=lambda i: len(positions[i]))
    best: list[int | None] = [None]

    def walk(j: int, lo: int, hi: int, used: frozenset[int]) -> None:
        if j == len(order):
            length = hi - lo
            if best[0] is None or length < best[0]:
                best[0] = length
            return
        i = order[j]
        cands = positions[i]
        if j > 0:  # only offsets d with hi - slop <= d <= lo + slop keep the window
            lo_p, hi_p = hi - slop + offsets[i], lo + slop + offsets[i]
            cands = cands[bisect_left(cands, lo_p) : bisect_right(cands, hi_p)]
        for p in cands:
            if p in used:
                continue
            d = p - offsets[i]
            nlo, nhi = (d, d) if j == 0 else (min(lo, d), max(hi, d))
            if nhi - nlo > slop:
                continue
            if best[0] is not None and nhi - nlo >= best[0]:
                continue
            walk(j + 1, nlo, nhi, used | {p})

    walk(0, 0, 0, frozenset())
    return best[0]


def phrase_matches(tokens: Sequence[str], phrase: Sequence[str], slop: int) -> bool:
    """Whether ``phrase`` (analysed terms, in order) occurs in ``tokens`` within ``slop`` by
    Lucene's rule (see the module docstring). An empty phrase matches nothing."""
    terms = phrase_offsets(phrase)
    if not terms:
        return False
    where: dict[str, list[int]] = {t: [] for t, _ in terms}
    for pos, tok in enumerate(tokens):
        if tok in where:
            where[tok].append(pos)
    positions = [where[t] for t, _ in terms]
    offsets = [q for _, q in terms]
    return sloppy_match_length(positions, offsets, max(0, int(slop))) is not None
