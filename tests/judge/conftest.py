"""Fixtures for the judge tests: a scripted LLM server and fast retry settings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rankscope.judge.config import JudgeSettings
from rankscope.testing.llm_server import ScriptedLLMServer


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(api_key="test-key") as s:
        yield s


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


@pytest.fixture
def fast_settings() -> JudgeSettings:
    """Short timeout, tiny backoff: retries are exercised without slowing the suite."""
    # 1.5 s leaves room for a loaded machine; hangs in the tests last much longer than that.
    # The scripted server stands in for the providers' own APIs: their list prices apply.
    return JudgeSettings(
        timeout_s=1.5,
        backoff_base_s=0.001,
        backoff_max_s=0.01,
        max_retries=3,
        list_prices_anywhere=True,
    )
