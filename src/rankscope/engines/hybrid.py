"""Hybrid search: two (or more) engines fused into one ranking.

Each engine is asked for its top ``depth`` hits; the lists are fused by

- ``rrf`` (reciprocal-rank fusion): ``score(d) = sum_i 1 / (rrf_k + rank_i(d))``, over the
  engines that returned ``d`` (ranks are 1-based);
- ``weighted``: each list's scores min-max normalised to [0, 1] (a document an engine did not
  return counts 0 for it), then ``alpha * s_1 + (1 - alpha) * s_2`` for two engines, or a
  ``weights`` list for more.

The hybrid supports exactly the query kinds that all its engines support.
"""

from __future__ import annotations

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
from rankscope.errors import ConfigError

Fusion = Literal["rrf", "weighted"]


def rrf_fuse(lists: Sequence[Sequence[Hit]], k: int = 60) -> dict[str, float]:
    """Reciprocal-rank fusion scores by document id."""
    fused: dict[str, float] = {}
    for hits in lists:
        for rank, hit in enumerate(hits, start=1):
            fused[hit.doc_id] = fused.get(hit.doc_id, 0.0) + 1.0 / (k + rank)
    return fused


def minmax(hits: Sequence[Hit]) -> dict[str, float]:
    """Scores scaled to [0, 1]; when all scores are equal every document gets 1."""
    if not hits:
        return {}
    lo = min(h.score for h in hits)
    hi = max(h.score for h in hits)
    span = hi - lo
    return {h.doc_id: (h.score - lo) / span if span > 0 else 1.0 for h in hits}


def weighted_fuse(lists: Sequence[Sequence[Hit]], weights: Sequence[float]) -> dict[str, float]:
    """Weighted sum of min-max normalised scores by document id."""
    fused: dict[str, float] = {}
    for hits, w in zip(lists, weights, strict=True):
        for doc, s in minmax(hits).items():
            fused[doc] = fused.get(doc, 0.0) + w * s
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
    ``weighted``), ``rrf_k`` (60),
    ``alpha`` (weight of the first engine in weighted fusion of two, 0.5), ``weights`` (one per
    engine, instead of ``alpha``), ``depth`` (hits fetched from each engine, at least ``k``;
    default 100).
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
        rrf_k: int = 60,
        alpha: float | None = None,
        weights: Sequence[float] | None = None,
        depth: int = 100,
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
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, int) or rrf_k < 0:
            raise ConfigError("hybrid option 'rrf_k' must be a non-negative integer", value=rrf_k)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0:
            raise ConfigError("hybrid option 'depth' must be a positive integer", value=depth)
        self.fusion: Fusion = fusion
        self.rrf_k = rrf_k
        self.depth = depth
        self.weights = self._weights(len(engines), alpha, weights)
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
        self, n: int, alpha: float | None, weights: Sequence[float] | None
    ) -> tuple[float, ...]:
        if weights is not None and alpha is not None:
            raise ConfigError("hybrid engine: give 'alpha' or 'weights', not both")
        if weights is not None:
            if len(weights) != n or any(not isinstance(w, (int, float)) for w in weights):
                raise ConfigError(
                    f"hybrid option 'weights' must hold {n} numbers, one per engine",
                    value=weights,
                )
            return tuple(float(w) for w in weights)
        a = 0.5 if alpha is None else alpha
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0.0 <= a <= 1.0:
            raise ConfigError("hybrid option 'alpha' must be a number in [0, 1]", value=alpha)
        if n != 2:
            if alpha is not None:
                raise ConfigError(
                    f"hybrid option 'alpha' weighs two engines, but {n} are configured; "
                    "give 'weights' instead"
                )
            return tuple(1.0 / n for _ in range(n))
        return (float(a), 1.0 - float(a))

    def index(self, docs: Iterable[Document]) -> None:
        docs = list(docs)
        for e in self.engines:
            e.index(docs)

    def _search(self, query: Query, k: int) -> list[Hit]:
        depth = max(self.depth, k)
        lists = [e.search(query, depth) for e in self.engines]
        if self.fusion == "rrf":
            fused = rrf_fuse(lists, self.rrf_k)
        else:
            fused = weighted_fuse(lists, self.weights)
        return ranked(fused, k)

    def close(self) -> None:
        for e in self.engines:
            e.close()
