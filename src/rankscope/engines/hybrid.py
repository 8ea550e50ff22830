"""Hybrid search: two (or more) engines fused into one ranking.

Each member engine is asked for its top ``depth`` hits (default: 100, or ``k`` when the hybrid
is asked for more); the lists are fused by

- ``rrf`` (reciprocal-rank fusion, Cormack et al. 2009): ``score(d) = sum_i w_i / (rrf_k +
  rank_i(d))`` over the members that returned ``d`` (ranks 1-based, ``w_i`` = 1 unless
  ``weights`` or ``alpha`` are given);
- ``weighted`` (normalised score fusion, a convex combination): each member's scores are
  normalised (``normalization: minmax`` to [0, 1], or ``zscore``: ``(s - mean) / std`` over the
  list), then ``score(d) = sum_i w_i * n_i(d)`` with ``w = (alpha, 1 - alpha)`` for two members
  (default alpha 0.5) or a ``weights`` list. A document a member did not return gets that
  member's lowest normalised score (0 under min-max): it ranked below everything the member
  returned.

The hybrid supports exactly the query kinds that all its members support. At most the union of
the members' top ``depth`` lists can come back: with ``depth`` below ``k`` a query may return
fewer than ``k`` hits (the option means what it says; it is not raised to ``k``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from rankscope.engines._nested import build_engine
from rankscope.engines.base import (
    Document,
    Engine,
    Hit,
    Query,
    QueryKind,
    register_engine,
    spec_with_embedding_model,
)
from rankscope.engines.embeddings import add_stats
from rankscope.engines.stream import reiterable
from rankscope.errors import ConfigError

Fusion = Literal["rrf", "weighted"]
#: hits fetched from each member when ``depth`` is unset (more when ``k`` is larger)
DEFAULT_DEPTH = 100
Normalization = Literal["minmax", "zscore"]


def rrf_fuse(
    lists: Sequence[Sequence[Hit]], k: int = 60, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """(Weighted) reciprocal-rank fusion scores by document id."""
    ws = [1.0] * len(lists) if weights is None else list(weights)
    fused: dict[str, float] = {}
    for hits, w in zip(lists, ws, strict=True):
        for rank, hit in enumerate(hits, start=1):
            fused[hit.doc_id] = fused.get(hit.doc_id, 0.0) + w / (k + rank)
    return fused


def minmax(hits: Sequence[Hit]) -> dict[str, float]:
    """Scores scaled to [0, 1]; when all scores are equal every document gets 1."""
    if not hits:
        return {}
    lo = min(h.score for h in hits)
    hi = max(h.score for h in hits)
    span = hi - lo
    return {h.doc_id: (h.score - lo) / span if span > 0 else 1.0 for h in hits}


def zscore(hits: Sequence[Hit]) -> dict[str, float]:
    """Scores standardised over the list, ``(s - mean) / std`` (population std); when all
    scores are equal every document gets 0."""
    if not hits:
        return {}
    n = len(hits)
    mean = math.fsum(h.score for h in hits) / n
    std = math.sqrt(math.fsum((h.score - mean) ** 2 for h in hits) / n)
    return {h.doc_id: (h.score - mean) / std if std > 0 else 0.0 for h in hits}


NORMALIZERS = {"minmax": minmax, "zscore": zscore}


def weighted_fuse(
    lists: Sequence[Sequence[Hit]],
    weights: Sequence[float],
    normalization: Normalization = "minmax",
) -> dict[str, float]:
    """Convex combination of normalised scores by document id; a document missing from a list
    gets that list's lowest normalised score."""
    normalize = NORMALIZERS[normalization]
    per_list = [normalize(hits) for hits in lists]
    docs: dict[str, None] = {}
    for scores in per_list:
        docs.update(dict.fromkeys(scores))
    fused = dict.fromkeys(docs, 0.0)
    for scores, w in zip(per_list, weights, strict=True):
        if not scores:
            continue
        floor = min(scores.values())
        for doc in fused:
            fused[doc] += w * scores.get(doc, floor)
    return fused


def ranked(fused: Mapping[str, float], k: int) -> list[Hit]:
    """The ``k`` best fused documents, score descending then id ascending."""
    order = sorted(fused.items(), key=lambda ds: (-ds[1], ds[0]))
    return [Hit(doc_id=d, score=s) for d, s in order[:k]]


@register_engine("hybrid")
class HybridEngine(Engine):
    """Fusion of several engines' rankings.

    Options: ``engines`` (a list of at least two nested engine specs such as
    ``{engine: sqlite}``; default sqlite and vector), ``fusion`` (``rrf``, the default, or
    ``weighted``: normalised score fusion), ``normalization`` (``minmax``, the default, or
    ``zscore``; weighted fusion only), ``alpha`` (weight of the first of two members, the
    second gets ``1 - alpha``), ``weights`` (one per member, instead of ``alpha``; both fusions
    take them), ``rrf_k`` (60), ``depth`` (hits fetched from each member, honoured as given;
    default: 100, or ``k`` when more are asked for).
    """

    name = "hybrid"
    composite = True
    #: the members when the options name none: BM25 (sqlite) and dense retrieval (vector)
    DEFAULT_MEMBERS: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"engine": "sqlite"},
        {"engine": "vector"},
    )

    @classmethod
    def member_specs(cls, options: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        members = options.get("engines")
        if members is None:
            return list(cls.DEFAULT_MEMBERS)
        if isinstance(members, (str, Mapping)) or not isinstance(members, Sequence):
            return []  # refused by __init__ with a clear message
        return [m for m in members if isinstance(m, Mapping)]

    @classmethod
    def with_embedding_model(cls, options: Mapping[str, Any], model: str) -> dict[str, Any]:
        members = options.get("engines")
        if members is None:
            members = cls.DEFAULT_MEMBERS
        if isinstance(members, (str, Mapping)) or not isinstance(members, Sequence):
            return dict(options)
        given = [spec_with_embedding_model(m, model) if isinstance(m, Mapping) else m
                 for m in members]  # fmt: skip
        return {**options, "engines": given}

    def __init__(
        self,
        engines: Sequence[Mapping[str, object] | Engine] | None = None,
        *,
        fusion: Fusion = "rrf",
        normalization: Normalization = "minmax",
        rrf_k: int = 60,
        alpha: float | None = None,
        weights: Sequence[float] | None = None,
        depth: int | None = None,
    ) -> None:
        if engines is None:
            engines = self.DEFAULT_MEMBERS
        if isinstance(engines, (str, Mapping)) or len(engines) < 2:
            raise ConfigError(
                "hybrid engine option 'engines' must list at least two engine specs",
                value=engines,
                hint="e.g. engines: [{engine: sqlite}, {engine: vector}]",
            )
        if fusion not in ("rrf", "weighted"):
            raise ConfigError(
                "hybrid engine option 'fusion' must be 'rrf' or 'weighted'", value=fusion
            )
        if normalization not in NORMALIZERS:
            raise ConfigError(
                "hybrid engine option 'normalization' must be 'minmax' or 'zscore'",
                value=normalization,
            )
        if normalization != "minmax" and fusion != "weighted":
            raise ConfigError(
                "hybrid option 'normalization' applies to weighted fusion only (RRF uses ranks)",
                value=normalization,
                hint="set fusion: weighted, or drop normalization",
            )
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, int) or rrf_k < 0:
            raise ConfigError("hybrid option 'rrf_k' must be a non-negative integer", value=rrf_k)
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0
        ):
            raise ConfigError("hybrid option 'depth' must be a positive integer", value=depth)
        self.fusion: Fusion = fusion
        self.normalization: Normalization = normalization
        self.rrf_k = rrf_k
        self.depth = depth
        self.weights = self._weights(len(engines), alpha, weights, fusion)
        self.engines: list[Engine] = []
        try:
            for i, spec in enumerate(engines):
                self.engines.append(build_engine(spec, f"hybrid engine #{i + 1}"))
        except BaseException:
            self.close()
            raise
        kinds: frozenset[QueryKind] = frozenset.intersection(
            *(e.supported_kinds for e in self.engines)
        )
        # the kinds depend on the configured engines, so they are set per instance
        setattr(self, "supported_kinds", kinds)  # noqa: B010
        setattr(self, "thread_safe", all(e.thread_safe for e in self.engines))  # noqa: B010

    def _weights(
        self, n: int, alpha: float | None, weights: Sequence[float] | None, fusion: Fusion
    ) -> tuple[float, ...]:
        if weights is not None and alpha is not None:
            raise ConfigError("hybrid engine: give 'alpha' or 'weights', not both")
        if weights is not None:
            if (
                isinstance(weights, (str, Mapping))
                or len(weights) != n
                or any(isinstance(w, bool) or not isinstance(w, (int, float)) for w in weights)
                or any(not math.isfinite(w) or w < 0 for w in weights)
                or not any(w > 0 for w in weights)
            ):
                raise ConfigError(
                    f"hybrid option 'weights' must hold {n} non-negative numbers, one per "
                    "engine, not all 0",
                    value=weights,
                )
            return tuple(float(w) for w in weights)
        if alpha is None:
            # RRF's classic form sums 1/(k + rank); normalised scores average
            return tuple(1.0 if fusion == "rrf" else 1.0 / n for _ in range(n))
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
            raise ConfigError("hybrid option 'alpha' must be a number in [0, 1]", value=alpha)
        if n != 2:
            raise ConfigError(
                f"hybrid option 'alpha' weighs two engines, but {n} are configured; "
                "give 'weights' instead"
            )
        return (float(alpha), 1.0 - float(alpha))

    def index(self, docs: Iterable[Document]) -> None:
        docs = reiterable(docs)  # each member reads it (a stream re-reads its source)
        for e in self.engines:
            e.index(docs)

    def _search(self, query: Query, k: int) -> list[Hit]:
        # unset: deep enough that a document ranked low by one member and high by the other
        # can still reach a short fused list (top 5 from top-100 lists, not from top-5 ones)
        depth = max(k, DEFAULT_DEPTH) if self.depth is None else self.depth
        lists = [e.search(query, depth) for e in self.engines]
        if self.fusion == "rrf":
            fused = rrf_fuse(lists, self.rrf_k, self.weights)
        else:
            fused = weighted_fuse(lists, self.weights, self.normalization)
        return ranked(fused, k)

    def index_stats(self) -> Mapping[str, int | float]:
        """The members' counters, summed key by key."""
        return add_stats(*(e.index_stats() for e in self.engines))

    def search_stats(self) -> Mapping[str, int | float]:
        """The members' search counters, summed key by key."""
        return add_stats(*(e.search_stats() for e in self.engines))

    def close(self) -> None:
        for e in self.engines:
            e.close()
