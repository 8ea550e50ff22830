"""Judge settings: providers, model aliases, prices, timeouts, retries and rate limits.

Defaults live here; a YAML or TOML file (``--config FILE`` or ``$RANKSCOPE_JUDGE_CONFIG``)
overrides them key by key, and its ``providers``, ``aliases`` and ``prices`` tables are merged
into the defaults rather than replacing them. Example (YAML)::

    aliases:
      claude-sonnet: claude-sonnet-4-5
    prices:                      # USD per million tokens
      claude-sonnet-4-5: {input: 3.0, output: 15.0}
    providers:
      local:                     # any OpenAI-compatible server (vLLM, Ollama, llama.cpp)
        kind: openai
        base_url: http://localhost:8000/v1
        api_key_env: null        # no key needed
    timeout_s: 30
    max_retries: 5
    concurrency: 4                # halved on timeouts unless adaptive_concurrency: false
    max_passage_tokens: 2000      # longer passages are cut (0: send them whole)
    requests_per_minute: 50
    tokens_per_minute: 40000
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rankscope.config import environment
from rankscope.errors import ConfigError
from rankscope.suite.corpus import read_text

ProviderKind = Literal["anthropic", "openai"]


class ProviderSettings(BaseModel):
    """How to reach one provider: the SDK to use, an optional base URL and the key's env var."""

    model_config = ConfigDict(extra="forbid")
    kind: ProviderKind
    base_url: str | None = None
    api_key_env: str | None = None
    default_model: str | None = None
    #: OpenAI kind only: the name of the answer-length parameter. OpenAI's current models take
    #: ``max_completion_tokens``; compatible servers honour ``max_tokens``. Default: the former
    #: for api.openai.com, the latter for any other server, however its URL is given
    #: (``--base-url``, ``base_url`` here, or ``$OPENAI_BASE_URL``).
    token_limit_param: Literal["max_tokens", "max_completion_tokens"] | None = None


class Price(BaseModel):
    """USD per million input and output tokens."""

    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    output: float = Field(ge=0)


def _default_providers() -> dict[str, ProviderSettings]:
    return {
        "anthropic": ProviderSettings(
            kind="anthropic", api_key_env="ANTHROPIC_API_KEY", default_model="claude-sonnet"
        ),
        "openai": ProviderSettings(
            kind="openai", api_key_env="OPENAI_API_KEY", default_model="gpt-4.1-mini"
        ),
    }


# Published list prices when this table was written; override them in the config file.
_DEFAULT_PRICES = {
    "claude-opus-4-6": Price(input=5.0, output=25.0),
    "claude-opus-4-5": Price(input=5.0, output=25.0),
    "claude-opus-4-1": Price(input=15.0, output=75.0),
    "claude-sonnet-4-6": Price(input=3.0, output=15.0),
    "claude-sonnet-4-5": Price(input=3.0, output=15.0),
    "claude-sonnet-4-0": Price(input=3.0, output=15.0),
    "claude-haiku-4-5": Price(input=1.0, output=5.0),
    "claude-3-5-haiku-latest": Price(input=0.8, output=4.0),
    "gpt-4.1": Price(input=2.0, output=8.0),
    "gpt-4.1-mini": Price(input=0.4, output=1.6),
    "gpt-4.1-nano": Price(input=0.1, output=0.4),
    "gpt-4o": Price(input=2.5, output=10.0),
    "gpt-4o-mini": Price(input=0.15, output=0.6),
}

#: the host of each provider's own API, where its list prices apply
PROVIDER_API_HOSTS: dict[str, str] = {
    "anthropic": "api.anthropic.com",
    "openai": "api.openai.com",
}


def is_provider_api(kind: str, base_url: str | None) -> bool:
    """Whether ``base_url`` (None: the SDK's default) is the provider's own API."""
    if base_url is None:
        return True
    return (urlsplit(base_url).hostname or "").lower() == PROVIDER_API_HOSTS.get(kind)


_DEFAULT_ALIASES = {
    "claude-opus": "claude-opus-4-6",
    "claude-sonnet": "claude-sonnet-4-6",
    "claude-haiku": "claude-haiku-4-5",
}


class JudgeSettings(BaseModel):
    """Everything configurable about LLM calls. Times are seconds."""

    model_config = ConfigDict(extra="forbid")
    providers: dict[str, ProviderSettings] = Field(default_factory=_default_providers)
    aliases: dict[str, str] = Field(default_factory=lambda: dict(_DEFAULT_ALIASES))
    prices: dict[str, Price] = Field(default_factory=lambda: dict(_DEFAULT_PRICES))
    timeout_s: float = Field(default=30.0, gt=0)
    max_retries: int = Field(default=5, ge=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    retry_after_max_s: float = Field(default=120.0, ge=0)
    concurrency: int = Field(default=4, ge=1)
    #: halve the calls in flight when calls time out (a server answering one at a time)
    adaptive_concurrency: bool = True
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    max_tokens: int = Field(default=512, ge=1)
    #: ``rankscope judge`` cuts a longer passage to this many tokens (estimated at 4 characters
    #: each) before sending it; 0 sends passages whole
    max_passage_tokens: int = Field(default=2000, ge=0)
    #: sent only when set; some current models reject it
    temperature: float | None = Field(default=None, ge=0)
    #: output tokens assumed per call by ``--dry-run``
    expected_output_tokens: int = Field(default=120, ge=0)
    #: ``judge --batch``: what a batch call costs as a fraction of the list price in ``prices``.
    #: Anthropic's Message Batches and OpenAI's Batch API both bill 50% of the standard price
    #: (their batch-processing guides); set 1.0 for a server that gives no discount.
    batch_price_factor: float = Field(default=0.5, ge=0)
    #: price calls to any server at the ``prices`` table, built-in list prices included (a
    #: proxy or a stand-in of the provider's API); by default a server that is not the
    #: provider's own API is priced only by prices the config or ``--price-in/--price-out`` give
    list_prices_anywhere: bool = False
    #: ``judge --batch --resume``: seconds between polls of unfinished batches
    batch_poll_interval_s: float = Field(default=60.0, gt=0)
    #: ``judge --batch``: requests per batch at most (each provider has its own cap, which
    #: also applies: 100,000 for Anthropic, 50,000 for OpenAI)
    batch_max_requests: int | None = Field(default=None, ge=1)

    def resolve_model(self, model: str) -> str:
        """Follow aliases (``claude-sonnet`` -> a full model id); unknown names pass through."""
        seen: set[str] = set()
        while model in self.aliases and model not in seen:
            seen.add(model)
            model = self.aliases[model]
        return model

    def price(self, model: str) -> Price | None:
        return self.prices.get(self.resolve_model(model))

    def at_server(
        self, kind: ProviderKind, base_url: str | None, model: str, price: Price | None = None
    ) -> JudgeSettings:
        """These settings for calls to ``base_url``: the providers' list prices apply to their
        own APIs only, so for any other server (a local llama.cpp, vLLM or Ollama, a proxy)
        the built-in prices are dropped and a call's cost is unknown unless a price is given
        (``price``, for ``model``, or one the config file sets other than the built-in one),
        or ``list_prices_anywhere`` is set."""
        prices = dict(self.prices)
        if not (is_provider_api(kind, base_url) or self.list_prices_anywhere):
            prices = {m: p for m, p in prices.items() if _DEFAULT_PRICES.get(m) != p}
        if price is not None:
            prices[self.resolve_model(model)] = price
        return self.model_copy(update={"prices": prices})

    def provider(self, name: str) -> ProviderSettings:
        try:
            return self.providers[name]
        except KeyError:
            known = ", ".join(sorted(self.providers))
            raise ConfigError(
                "unknown provider",
                value=name,
                hint=f"use one of: {known}, or add it under 'providers:' in the judge config",
            ) from None


_MERGED_TABLES = ("providers", "aliases", "prices")


def load_settings(path: str | os.PathLike[str] | None = None) -> JudgeSettings:
    """Defaults, overridden by ``path`` (or ``$RANKSCOPE_JUDGE_CONFIG`` when ``path`` is None)."""
    if path is None:
        path = environment().judge_config
        if path is None:
            return JudgeSettings()
    p = Path(path)
    text = read_text(p)  # names the file and line of bytes that are not UTF-8
    data: Any
    try:
        data = tomllib.loads(text) if p.suffix.lower() == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as e:
        raise ConfigError(f"invalid {p.suffix or 'YAML'} syntax: {e}", path=p) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the judge config must be a mapping of settings", path=p, value=data)
    base = JudgeSettings().model_dump()
    for key, value in data.items():
        if key in _MERGED_TABLES and isinstance(value, dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    try:
        return JudgeSettings.model_validate(base)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigError(
            f"invalid setting {where!r}: {first['msg']}",
            path=p,
            value=first.get("input"),
            hint="see docs/judging.md for the settings and their types",
        ) from None


__all__ = ["JudgeSettings", "Price", "ProviderKind", "ProviderSettings", "load_settings"]
