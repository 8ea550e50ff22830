"""Building the engines that a composite engine (hybrid, rerank) wraps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rankscope.engines.base import Engine, create_engine
from rankscope.errors import ConfigError


def build_engine(spec: object, where: str) -> Engine:
    """An engine from a nested spec ``{"engine": name, **options}`` or an Engine instance."""
    if isinstance(spec, Engine):
        return spec
    if not isinstance(spec, Mapping) or not isinstance(spec.get("engine"), str):
        raise ConfigError(
            f"{where} must be an engine spec: a mapping with an 'engine' name and its options",
            value=spec,
            hint="e.g. {engine: sqlite} or {engine: vector, model: all-MiniLM-L6-v2}",
        )
    options: dict[str, Any] = {str(k): v for k, v in spec.items() if k != "engine"}
    return create_engine(spec["engine"], **options)
