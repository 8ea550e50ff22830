"""Getting judgments: pooling, LLM relevance labels, annotation import, agreement, RAG grading.

Nothing here imports an LLM SDK until a provider is created, and the names below load on first
use (PEP 562): ``rankscope judge`` needs neither the agreement statistics nor the needle grader.
``cohen_kappa``, ``kendall_tau_b`` and ``confusion_matrix`` are :mod:`rankscope.stats`' (their one
home), re-exported here beside the agreement reports that use them (docs/judging.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.judge.agreement import (
        LabelAgreement,
        RankingAgreement,
        cohen_kappa,
        confusion_matrix,
        kendall_tau_b,
        label_agreement,
        ranking_agreement,
    )
    from rankscope.judge.annotations import import_annotations, merge_qrels, read_annotations
    from rankscope.judge.batch import batch_status, plan_batches, resume_batches, submit_batches
    from rankscope.judge.cache import JudgmentCache, default_cache_path
    from rankscope.judge.config import JudgeSettings, load_settings
    from rankscope.judge.judging import Judgment, RelevanceJudge, estimate, judge_pool
    from rankscope.judge.needle import (
        GradeResult,
        NeedleQuestion,
        NeedleSummary,
        PositionWeights,
        QuestionResult,
        RetrievalGrader,
        read_questions,
        run_needle,
    )
    from rankscope.judge.pool import Pool, PoolEntry, build_pool, read_pool, write_pool
    from rankscope.judge.prompts import DEFAULT_TEMPLATE, PromptTemplate, parse_label
    from rankscope.judge.providers import Completion, Provider, ProviderCallError, make_provider

__all__ = [
    "DEFAULT_TEMPLATE",
    "Completion",
    "GradeResult",
    "JudgeSettings",
    "Judgment",
    "JudgmentCache",
    "LabelAgreement",
    "NeedleQuestion",
    "NeedleSummary",
    "Pool",
    "PoolEntry",
    "PositionWeights",
    "PromptTemplate",
    "Provider",
    "ProviderCallError",
    "QuestionResult",
    "RankingAgreement",
    "RelevanceJudge",
    "RetrievalGrader",
    "batch_status",
    "build_pool",
    "cohen_kappa",
    "confusion_matrix",
    "default_cache_path",
    "estimate",
    "import_annotations",
    "judge_pool",
    "kendall_tau_b",
    "label_agreement",
    "load_settings",
    "make_provider",
    "merge_qrels",
    "parse_label",
    "plan_batches",
    "ranking_agreement",
    "read_annotations",
    "read_pool",
    "read_questions",
    "resume_batches",
    "run_needle",
    "submit_batches",
    "write_pool",
]

__getattr__, __dir__ = lazy_exports(globals())
