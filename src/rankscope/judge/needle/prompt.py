"""The grading prompt: question, expected answer and the retrieved chunks, graded 1-10."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rankscope.errors import InputError

#: the prompt that asks the grader to grade an answer against the expected one
GRADER_PROMPT = """\
You are grading a retrieval system. Given a question, the answer we expect, and the chunks the \
system retrieved, decide whether the chunks contain the information needed to answer the \
question. Judge only the chunks, not your own knowledge.

Grade on a 1-10 scale:
10 = the chunks contain the complete answer;
8-9 = the chunks contain the core of the answer;
6-7 = the chunks contain most of the answer;
4-5 = the chunks contain part of the answer;
2-3 = the chunks are only tangentially related;
1 = the chunks are irrelevant.

Question: {question}
Expected answer: {expected_answer}

Retrieved chunks:
{chunks}

Answer with JSON only: {{"grade": <integer 1-10>, "reasoning": "<one or two sentences>"}}"""

#: a chunk longer than this is cut before it is sent (its start is kept)
MAX_CHUNK_CHARS = 4000


@dataclass(frozen=True, slots=True)
class GradingPrompt:
    """The prompt as sent, the chunk block in it, and how many chunks were cut."""

    text: str
    chunks_block: str
    chunks_cut: int


def template_hash(template: str) -> str:
    """Identity of a grading template, for the cache and for resuming."""
    return hashlib.sha256(("needle-1-10\x00" + template).encode("utf-8")).hexdigest()[:16]


def load_template(path: Path) -> str:
    """A grading template from a UTF-8 file (``rankscope needle --template``): it must hold
    ``{question}`` and ``{chunks}``; ``{expected_answer}`` is optional, ``{{``/``}}`` are literal
    braces."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the grading template: {error}", path=path) from None
    missing = [name for name in ("{question}", "{chunks}") if name not in text]
    if missing:
        raise InputError(
            f"the grading template has no {' or '.join(missing)} placeholder",
            path=path,
            hint="the question and the retrieved chunks are filled in at {question} and {chunks}",
        )
    return text


def render_prompt(
    template: str,
    question: str,
    expected_answer: str,
    chunks: Sequence[str],
    max_chunk_chars: int = MAX_CHUNK_CHARS,
) -> GradingPrompt:
    """Fill the template; chunks are numbered ``[1]``, ``[2]``... and cut to ``max_chunk_chars``."""
    body = (
        "\n\n".join(f"[{i}] {c[:max_chunk_chars]}" for i, c in enumerate(chunks, 1))
        or "(no chunks were retrieved)"
    )
    text = (
        template.replace("{question}", question)
        .replace("{expected_answer}", expected_answer)
        .replace("{chunks}", body)
        .replace("{{", "{")
        .replace("}}", "}")
    )
    return GradingPrompt(text, body, sum(1 for c in chunks if len(c) > max_chunk_chars))


__all__ = [
    "GRADER_PROMPT",
    "MAX_CHUNK_CHARS",
    "GradingPrompt",
    "load_template",
    "render_prompt",
    "template_hash",
]
