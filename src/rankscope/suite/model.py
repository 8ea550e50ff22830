"""The resolved suite: queries, judgments, settings and configurations, ready to run."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rankscope.data.qrels import Qrels
from rankscope.engines.base import Document, Query
from rankscope.engines.stream import DocumentStream
from rankscope.errors import ConfigError
from rankscope.suite.corpus import iter_documents
from rankscope.suite.relevance import JudgmentSet, PatternCredit
from rankscope.suite.schema import BenchConfig, SuiteSettings, SuiteSpec
from rankscope.suite.sweep import check_embedding_extra, preset_configs


@dataclass
class Suite:
    """A loaded suite. Its documents stay in their source: :meth:`corpus` reads them afresh
    each time it is iterated, so a run holds no copy of the corpus beside the engines."""

    name: str
    description: str
    spec: SuiteSpec
    base_dir: Path
    queries: list[Query]
    judgments: JudgmentSet
    settings: SuiteSettings
    configs: list[BenchConfig]
    path: Path | None = None
    extra_qrels: Qrels | None = None
    _qrels: Qrels | None = field(default=None, repr=False)
    _credit: PatternCredit | None = field(default=None, repr=False)

    def corpus(self) -> DocumentStream:
        """The documents, read from the corpus source on each iteration (nothing is kept)."""
        spec, base_dir = self.spec.corpus, self.base_dir
        return DocumentStream(lambda: iter_documents(spec, base_dir))

    def documents(self) -> list[Document]:
        """Every document in a list, read now and not kept (for small corpora and tests; the
        benchmark streams :meth:`corpus`)."""
        return list(self.corpus())

    def qrels(self) -> Qrels:
        """Document-level judgments (code-search expectations resolved against the corpus in
        one pass over it)."""
        if self._qrels is None:
            docs: Iterable[Document] = self.corpus() if self.judgments.code else ()
            self._qrels = self.judgments.resolve(
                docs, match_grade=max(1, self.settings.relevance_threshold)
            )
        return self._qrels

    def by_pattern(self) -> bool:
        """Whether code-search queries are judged by pattern (``settings.relevance: pattern``)."""
        return self.settings.relevance == "pattern" and bool(self.judgments.code)

    def scored_qrels(self) -> Qrels:
        """The judgments measures are computed from: :meth:`qrels`, except that with
        ``relevance: pattern`` code-search queries are judged by pattern units."""
        if not self.by_pattern():
            return self.qrels()
        grade = max(1, self.settings.relevance_threshold)
        try:
            return self.judgments.resolve((), match_grade=grade, by_pattern=True)
        except ConfigError as error:
            raise ConfigError(
                error.problem, path=self.path, value=error.value, hint=error.hint
            ) from None

    def pattern_credit(self) -> PatternCredit | None:
        """With ``relevance: pattern``, the code-search queries' matches over the corpus (one
        pass), for :meth:`PatternCredit.credit`; else None."""
        if not self.by_pattern():
            return None
        if self._credit is None:
            grade = max(1, self.settings.relevance_threshold)
            self._credit = PatternCredit.of(self.judgments.code, self.corpus(), grade)
        return self._credit

    @property
    def answers(self) -> dict[str, str]:
        return dict(self.judgments.answers)

    def queries_fingerprint(self) -> str:
        digest = hashlib.sha256(repr(self.queries).encode("utf-8", "surrogateescape"))
        return digest.hexdigest()[:16]

    def select(self, names: Sequence[str] = (), preset: str | None = None) -> Suite:
        """A copy limited to configurations by name, or running a preset's configurations."""
        configs = list(self.configs)
        if preset is not None:
            configs = preset_configs(preset)
            check_embedding_extra(configs, f"preset {preset!r}")
        if names:
            by_name = {c.name: c for c in configs}
            unknown = [n for n in names if n not in by_name]
            if unknown:
                raise ConfigError(
                    f"no configuration named {', '.join(map(repr, unknown))} in suite "
                    f"{self.name!r}",
                    path=self.path,
                    hint=f"choose from: {', '.join(by_name) or '(none)'}",
                )
            configs = [by_name[n] for n in names]
        return replace(self, configs=configs)

    def with_cutoffs(self, k: Sequence[int] = (), max_k: int | None = None) -> Suite:
        """A copy with the cut-offs ``k`` and/or ``max_k`` replaced (``rankscope bench --k``,
        ``--max-k``), checked as the suite file's ``settings`` are."""
        update: dict[str, Any] = {}
        if k:
            update["k"] = list(k)
        if max_k is not None:
            update["max_k"] = max_k
        if not update:
            return self
        try:
            settings = SuiteSettings.model_validate(self.settings.model_dump() | update)
        except ValidationError as error:
            problem = error.errors()[0]
            raise ConfigError(
                f"--k/--max-k: {problem['msg'].removeprefix('Value error, ')}",
                value=update,
                hint="every k is positive and at most max_k",
            ) from None
        spec = self.spec.model_copy(update={"settings": settings})
        return replace(self, spec=spec, settings=settings)

    def resolved(self) -> dict[str, Any]:
        """The suite as it will run: absolute paths, sweep expanded into ``engines``."""
        data = self.spec.model_dump(mode="json", exclude_none=True)
        corpus = data["corpus"]
        if "path" in corpus:
            corpus["path"] = str((self.base_dir / corpus["path"]).resolve())
        if isinstance(data.get("queries"), dict):
            data["queries"]["path"] = str((self.base_dir / data["queries"]["path"]).resolve())
        qrels = data.get("qrels")
        if isinstance(qrels, str):
            data["qrels"] = str((self.base_dir / qrels).resolve())
        elif isinstance(qrels, list):
            data["qrels"] = [str((self.base_dir / q).resolve()) for q in qrels]
        data.pop("sweep", None)
        data["engines"] = [_config_yaml(c) for c in self.configs]
        return data

    def resolved_yaml(self) -> str:
        return yaml.safe_dump(self.resolved(), sort_keys=False, allow_unicode=True)


def _config_yaml(config: BenchConfig) -> dict[str, Any]:
    plain = config.json_safe().model_dump()
    return {k: v for k, v in plain.items() if v not in (None, {})}
