"""The needle benchmark: retrieve top-k chunks per question, find the needle, grade with an LLM.

Each question names the chunk or document that holds its answer (the needle, by id and/or by a
text fragment) and the expected answer. Retrieval gives the needle's rank (1-based, None when
absent from the top k); :class:`RetrievalGrader` asks an LLM whether the chunks contain what is
needed to answer (1-10); the total score weighs the grade by where the needle was found.
Accuracy is the fraction of questions whose needle is in the top k.

Modules: :mod:`.questions` (reading), :mod:`.prompt`, :mod:`.parsing` (grades, clamping),
:mod:`.grading` (the LLM grader), :mod:`.weights`, :mod:`.retrieval` (engine via the benchmark
runner, or a pipeline function), :mod:`.scoring` (results, summary, measures via
``rankscope.evaluate``), :mod:`.progress` (the progress line), :mod:`.output` (files, resume)
and :mod:`.run` (the loop and the dry-run plan).
"""

from rankscope.judge.needle.grading import GradeResult, RetrievalGrader
from rankscope.judge.needle.output import NeedleOutput
from rankscope.judge.needle.parsing import ParsedGrade, parse_grade
from rankscope.judge.needle.progress import progress_line
from rankscope.judge.needle.prompt import GRADER_PROMPT, load_template, render_prompt
from rankscope.judge.needle.questions import NeedleQuestion, read_questions
from rankscope.judge.needle.retrieval import (
    EngineRetrieval,
    FunctionRetrieval,
    RetrievalSource,
    Retrieved,
    Retriever,
    needle_rank,
    pipeline_retrieval,
)
from rankscope.judge.needle.run import NeedlePlan, log_metrics, plan_needle, run_needle
from rankscope.judge.needle.scoring import (
    NeedleSummary,
    QuestionResult,
    retrieval_measures,
    summarize,
)
from rankscope.judge.needle.weights import WEIGHT_PRESETS, PositionWeights

__all__ = [
    "GRADER_PROMPT",
    "WEIGHT_PRESETS",
    "EngineRetrieval",
    "FunctionRetrieval",
    "GradeResult",
    "NeedleOutput",
    "NeedlePlan",
    "NeedleQuestion",
    "NeedleSummary",
    "ParsedGrade",
    "PositionWeights",
    "QuestionResult",
    "RetrievalGrader",
    "RetrievalSource",
    "Retrieved",
    "Retriever",
    "load_template",
    "log_metrics",
    "needle_rank",
    "parse_grade",
    "pipeline_retrieval",
    "plan_needle",
    "progress_line",
    "read_questions",
    "render_prompt",
    "retrieval_measures",
    "run_needle",
    "summarize",
]
