"""The one error tree rankscope raises on purpose.

Every message says what went wrong, where (file and line when there is one), the offending value,
and how to fix it. The CLI prints ``str(error)`` and exits non-zero; it never shows a traceback
for a ``RankscopeError``.
"""

from __future__ import annotations

from os import PathLike


class RankscopeError(Exception):
    """Base class of every error rankscope raises for bad input, configuration or environment."""

    exit_code: int = 2


class InputError(RankscopeError):
    """A file or value given by the user cannot be read or is invalid.

    ``path`` and ``line`` (1-based) locate the problem; ``value`` is the offending text;
    ``hint`` says how to fix it.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        value: object = None,
        hint: str | None = None,
    ) -> None:
        self.problem = problem
        self.path = None if path is None else str(path)
        self.line = line
        self.value = value
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            where += ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        text = f"{where}{self.problem}"
        if self.value is not None:
            shown = repr(self.value)
            if len(shown) > 120:
                shown = shown[:117] + "..."
            text += f" (got {shown})"
        if self.hint:
            text += f". {self.hint}"
        return text


class FormatError(InputError):
    """A file does not follow its format (TREC, BEIR, JSONL, CSV, Parquet, YAML)."""


class DuplicateError(FormatError):
    """A document listed twice for one query (in a run or in qrels)."""


class MeasureError(RankscopeError):
    """An unknown or malformed measure name or parameter."""


class ConfigError(InputError):
    """A suite or configuration file is invalid (``line`` may be a YAML path instead)."""


class EngineError(RankscopeError):
    """A search engine failed to index or search, or cannot be reached."""


class QueryError(EngineError):
    """An engine cannot run this one query (too many terms, text it cannot take); the engine
    itself is fine. The benchmark records it as a failed query and runs the others."""


class UnsupportedQueryError(EngineError):
    """An engine was given a query kind it does not support; engines never fall back silently."""


class JudgeError(RankscopeError):
    """LLM judging failed in a way the caller must handle (configuration, provider set-up)."""


class ProviderError(JudgeError):
    """An LLM provider call failed after all retries."""


class ServiceError(RankscopeError):
    """The online collection service or its store rejected a request."""


class DataWarning(UserWarning):
    """Something a lenient (trec_eval-compatible) reader accepted but that looks wrong (the
    command line shows each as one line on standard error)."""


__all__ = [
    "ConfigError",
    "DataWarning",
    "DuplicateError",
    "EngineError",
    "FormatError",
    "InputError",
    "JudgeError",
    "MeasureError",
    "ProviderError",
    "QueryError",
    "RankscopeError",
    "ServiceError",
    "UnsupportedQueryError",
]
