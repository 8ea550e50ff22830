"""LLM providers through the official SDKs, with uniform timeouts, retries and limits.

``anthropic`` uses the Messages API; ``openai`` uses Chat Completions and also serves any
OpenAI-compatible server (vLLM, Ollama, llama.cpp) through ``base_url``. The SDKs' own retries
are switched off (``max_retries=0``): rankscope retries 429, 5xx, timeouts, dropped connections
and malformed 200 bodies itself, honouring ``retry-after`` / ``retry-after-ms``, so behaviour is
the same for every provider and visible in tests.
"""

from __future__ import annotations

import email.utils
import importlib
import importlib.util
import logging
import os
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from rankscope.errors import JudgeError, ProviderError
from rankscope.judge.config import JudgeSettings, Price, ProviderKind
from rankscope.judge.limits import (
    AdaptiveConcurrency,
    RateLimiter,
    UsageMeter,
    estimate_tokens,
)
from rankscope.util.extras import needs_extra

log = logging.getLogger("rankscope.judge.providers")

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class ProviderCallError(ProviderError):
    """A call failed; ``fatal`` errors (bad key, unknown model, bad request) stop a whole run."""

    def __init__(self, message: str, *, status: int | None = None, fatal: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.fatal = fatal


@dataclass(frozen=True, slots=True)
class Completion:
    """One paid answer: its text, usage, the provider's request id and the raw response JSON."""

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    request_id: str | None
    raw: dict[str, Any]
    latency_ms: float
    attempts: int


@dataclass(frozen=True, slots=True)
class Answer:
    """A model answer as read from one HTTP attempt or one batch result, normalised across SDKs."""

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    request_id: str | None
    raw: dict[str, Any]


class RetryableError(Exception):
    """A transient failure worth another attempt."""

    def __init__(
        self,
        reason: str,
        retry_after: float | None = None,
        status: int | None = None,
        *,
        timed_out: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.status = status
        self.timed_out = timed_out


class Provider(ABC):
    """A chat model behind one SDK. ``complete`` is thread-safe.

    The SDK is imported and its client built at the first call, not here: importing an SDK
    costs about a second of CPU (thousands of modules and model classes), which a run whose
    pairs are all done or cached never needs.
    """

    kind: ProviderKind
    #: the SDK's module, and its pip name for the error when it is missing
    sdk_module: str

    def __init__(
        self,
        model: str,
        settings: JudgeSettings,
        *,
        name: str | None = None,
        meter: UsageMeter | None = None,
        limiter: RateLimiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.name = name or self.kind
        self.requested_model = model
        self.model = settings.resolve_model(model)
        self.settings = settings
        self.meter = meter or UsageMeter(settings)
        self.limiter = limiter or RateLimiter(
            settings.requests_per_minute, settings.tokens_per_minute
        )
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self.concurrency = AdaptiveConcurrency(
            settings.concurrency, adaptive=settings.adaptive_concurrency
        )
        if importlib.util.find_spec(self.sdk_module) is None:
            raise JudgeError(
                needs_extra(f"provider {self.name!r}", f"the {self.sdk_module} SDK", "llm")
            )
        self._sdk: Any = None
        self._client: Any = None
        self._client_lock = threading.Lock()

    def connect(self) -> Any:
        """The SDK client, made at the first call (thread-safe)."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    try:
                        sdk = importlib.import_module(self.sdk_module)
                        client = self._make_client(sdk)
                    except Exception as e:  # a broken install or a URL the SDK refuses
                        raise ProviderCallError(
                            f"{self.name}: cannot set up the {self.sdk_module} client: {e}",
                            fatal=True,
                        ) from e
                    self._sdk = sdk
                    self._client = client
        return self._client

    @abstractmethod
    def _make_client(self, sdk: Any) -> Any:
        """The SDK's client for this provider."""

    @abstractmethod
    def _attempt(self, prompt: str, system: str | None, max_tokens: int) -> Answer:
        """One HTTP call; raises RetryableError or ProviderCallError."""

    def complete(
        self, prompt: str, *, system: str | None = None, max_tokens: int | None = None
    ) -> Completion:
        """Ask the model; retries transient failures, raises ProviderCallError when it gives up."""
        self.connect()
        limit = max_tokens or self.settings.max_tokens
        estimate = estimate_tokens((system or "") + prompt) + limit
        last: RetryableError | None = None
        started = time.perf_counter()
        for attempt in range(1, self.settings.max_retries + 2):
            self.limiter.acquire(estimate)
            try:
                # The timeout runs from the send: waiting for a slot here costs none of it.
                with self.concurrency.slot() as settle:
                    try:
                        got = self._attempt(prompt, system, limit)
                    except RetryableError as e:
                        settle(e.timed_out)
                        raise
                    settle(False)
            except RetryableError as e:
                self.limiter.settle(estimate, 0)
                last = e
                if attempt > self.settings.max_retries:
                    break
                delay = self._delay(attempt, e.retry_after)
                log.warning(
                    "%s %s: %s; retry %d/%d in %.2fs",
                    self.name,
                    self.model,
                    e.reason,
                    attempt,
                    self.settings.max_retries,
                    delay,
                )
                self._sleep(delay)
                continue
            self.limiter.settle(estimate, got.input_tokens + got.output_tokens)
            cost = self.meter.add(self.model, got.input_tokens, got.output_tokens)
            return Completion(
                text=got.text,
                model=got.model or self.model,
                input_tokens=got.input_tokens,
                output_tokens=got.output_tokens,
                cost_usd=cost,
                request_id=got.request_id,
                raw=got.raw,
                latency_ms=(time.perf_counter() - started) * 1000.0,
                attempts=attempt,
            )
        assert last is not None
        raise ProviderCallError(
            f"{self.name} {self.model}: giving up after {self.settings.max_retries + 1} "
            f"attempts; last error: {last.reason}",
            status=last.status,
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.settings.retry_after_max_s)
        base = self.settings.backoff_base_s * (2 ** (attempt - 1))
        with self._rng_lock:
            jitter = self._rng.uniform(0.5, 1.0)
        return float(min(self.settings.backoff_max_s, base * jitter))

    # -- shared SDK error handling -----------------------------------------------------------
    def _classify(self, error: Exception, sdk: Any) -> Exception:
        """Map an SDK exception to RetryableError or a ProviderCallError."""
        if isinstance(error, sdk.APITimeoutError):
            return RetryableError(f"timed out after {self.settings.timeout_s:g}s", timed_out=True)
        if isinstance(error, sdk.APIConnectionError):
            return RetryableError(f"connection failed ({error.__cause__ or error})")
        if isinstance(error, sdk.APIStatusError):
            status = int(error.status_code)
            headers = error.response.headers
            message = _error_message(error)
            if status in _RETRY_STATUS or status >= 500:
                return RetryableError(
                    f"HTTP {status}: {message}",
                    retry_after=parse_retry_after(headers),
                    status=status,
                )
            hint = ""
            if status in (401, 403):
                hint = " (check the API key and its environment variable)"
            elif status == 404:
                hint = f" (check the model name {self.model!r} and the base URL)"
            return ProviderCallError(
                f"{self.name} {self.model}: HTTP {status}: {message}{hint}",
                status=status,
                fatal=True,
            )
        if isinstance(error, ValueError):  # a 200 whose body is not the expected JSON
            return RetryableError(f"malformed response body ({error})")
        return error


def _error_message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(error, "message", error))


def parse_retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, ``retry-after`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class AnthropicProvider(Provider):
    kind: ProviderKind = "anthropic"
    sdk_module = "anthropic"

    def __init__(
        self,
        model: str,
        settings: JudgeSettings,
        *,
        api_key: str,
        base_url: str | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(model, settings, **kw)
        self._api_key = api_key
        self.base_url = base_url

    def _make_client(self, sdk: Any) -> Any:
        return sdk.Anthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.settings.timeout_s,
            max_retries=0,
        )

    def request_body(self, prompt: str, system: str | None, max_tokens: int) -> dict[str, Any]:
        """The Messages API request for one prompt (a batch request's ``params`` too)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
        }
        if system:
            body["system"] = system
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        return body

    def _attempt(self, prompt: str, system: str | None, max_tokens: int) -> Answer:
        args = self.request_body(prompt, system, max_tokens)
        if "temperature" in args:  # not a typed argument in every SDK version
            args["extra_body"] = {"temperature": args.pop("temperature")}
        try:
            raw = self._client.messages.with_raw_response.create(**args)
            msg = raw.parse()
        except Exception as e:
            raise self._classify(e, self._sdk) from e
        return self.read_answer(msg, raw.headers.get("request-id"))

    def read_answer(self, msg: Any, request_id: str | None) -> Answer:
        """A Messages answer (the SDK's ``Message``), checked; RetryableError if malformed."""
        _check_message(msg)
        text = "".join(getattr(b, "text", "") for b in msg.content if b.type == "text")
        return Answer(
            text=text,
            model=msg.model,
            input_tokens=int(msg.usage.input_tokens or 0),
            output_tokens=int(msg.usage.output_tokens or 0),
            request_id=request_id,
            raw=msg.model_dump(mode="json", exclude_none=True),
        )


def _check_message(msg: Any) -> None:
    """Refuse (to retry) a 200 that is not a Messages answer: an error object, or no content
    or usage. The SDK builds its value without validation, so these arrive as None fields."""
    if getattr(msg, "type", None) == "error":
        error = getattr(msg, "error", None)
        if isinstance(error, dict):
            detail = f"{error.get('type', 'error')}: {error.get('message', '')}"
        else:
            detail = str(error)
        raise RetryableError(f"HTTP 200 whose body is an error ({detail})")
    missing = [
        name
        for name in ("content", "usage")
        if getattr(msg, name, None) is None
        or (name == "content" and not isinstance(msg.content, list))
    ]
    if missing:
        raise RetryableError(f"malformed response body (no {' or '.join(missing)})")
    if getattr(msg.usage, "input_tokens", None) is None:
        raise RetryableError("malformed response body (usage without input_tokens)")


class OpenAIProvider(Provider):
    kind: ProviderKind = "openai"
    sdk_module = "openai"

    def __init__(
        self,
        model: str,
        settings: JudgeSettings,
        *,
        api_key: str,
        base_url: str | None = None,
        token_limit_param: str | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(model, settings, **kw)
        self._api_key = api_key
        self.base_url = base_url
        self._limit_param = token_limit_param or token_limit_param_for(base_url)
        self._warned_usage = False

    def _make_client(self, sdk: Any) -> Any:
        return sdk.OpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.settings.timeout_s,
            max_retries=0,
        )

    def request_body(self, prompt: str, system: str | None, max_tokens: int) -> dict[str, Any]:
        """The Chat Completions request for one prompt (a batch line's ``body`` too)."""
        messages: list[dict[str, str]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            self._limit_param: max_tokens,
        }
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        return body

    def _attempt(self, prompt: str, system: str | None, max_tokens: int) -> Answer:
        args = self.request_body(prompt, system, max_tokens)
        try:
            raw = self._client.chat.completions.with_raw_response.create(**args)
            resp = raw.parse()
        except Exception as e:
            raise self._classify(e, self._sdk) from e
        return self.read_answer(resp, raw.headers.get("x-request-id"), args["messages"])

    def read_answer(
        self, resp: Any, request_id: str | None, messages: list[dict[str, str]]
    ) -> Answer:
        """A Chat Completions answer (the SDK's ``ChatCompletion``), checked; raises RetryableError
        if malformed. ``messages`` (what was sent) estimates the tokens when usage is missing."""
        error = getattr(resp, "error", None)
        if error is not None:
            detail = error.get("message", error) if isinstance(error, dict) else error
            raise RetryableError(f"HTTP 200 whose body is an error ({detail})")
        if not resp.choices or getattr(resp.choices[0], "message", None) is None:
            raise RetryableError("response without choices")
        text = resp.choices[0].message.content or ""
        usage = resp.usage
        if usage is not None and usage.prompt_tokens is not None:
            tokens_in, tokens_out = int(usage.prompt_tokens), int(usage.completion_tokens or 0)
        else:
            # Some compatible servers send no usage: count it as the limiter estimates it
            # rather than as free, and say so once.
            tokens_in = estimate_tokens("".join(m["content"] for m in messages))
            tokens_out = estimate_tokens(text)
            if not self._warned_usage:
                self._warned_usage = True
                log.warning(
                    "%s %s: the server sent no token usage; tokens and cost are estimated "
                    "(4 characters per token)",
                    self.name,
                    self.model,
                )
        return Answer(
            text=text,
            model=resp.model,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            request_id=request_id,
            raw=resp.model_dump(mode="json", exclude_none=True),
        )


_PLACEHOLDER_KEY = "not-needed"

#: The variables the SDKs read a server URL from when none is given; rankscope reads them too,
#: so that a server given either way is treated the same (token-limit parameter, placeholder key).
BASE_URL_ENV: dict[ProviderKind, str] = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
}


def token_limit_param_for(base_url: str | None) -> str:
    """``max_completion_tokens`` for OpenAI's own API (its current models refuse
    ``max_tokens``); ``max_tokens`` for any other server, which is what OpenAI-compatible
    servers honour (llama.cpp ignores ``max_completion_tokens`` and generates on)."""
    if base_url is None:
        return "max_completion_tokens"
    host = (urlsplit(base_url).hostname or "").lower()
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


def make_provider(
    name: str,
    model: str | None = None,
    settings: JudgeSettings | None = None,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    meter: UsageMeter | None = None,
    sleep: Callable[[float], None] = time.sleep,
    dry_run: bool = False,
    price: Price | None = None,
) -> Provider:
    """Build a provider by its config name (``anthropic``, ``openai`` or one from the config).

    ``dry_run``: the provider only prices calls and is never called, so no key is needed.

    The server URL is ``base_url``, else the config's, else ``$OPENAI_BASE_URL`` /
    ``$ANTHROPIC_BASE_URL`` (which the SDKs would read anyway), so that a server given either way
    is treated the same. The key comes from the environment variable named in the config (or
    ``api_key_env``). A provider with a custom base URL and no key gets a placeholder, as local
    servers need none.

    Costs: the built-in list prices apply to the providers' own APIs only; at any other URL a
    call's cost is unknown unless ``price`` (USD per million tokens in and out) or the config
    file prices the model (:meth:`JudgeSettings.at_server`). The provider's ``settings`` are
    those, for every estimate made of its calls.
    """
    settings = settings or JudgeSettings()
    conf = settings.provider(name)
    model = model or conf.default_model
    if not model:
        raise JudgeError(f"no model given for provider {name!r}; pass --model")
    url = base_url or conf.base_url or os.environ.get(BASE_URL_ENV[conf.kind]) or None
    settings = settings.at_server(conf.kind, url, model, price)
    env = api_key_env or conf.api_key_env
    key = os.environ.get(env) if env else None
    if not key:
        if url is None and not dry_run:
            raise JudgeError(
                f"provider {name!r} needs an API key: set the environment variable "
                f"{env or '(none configured)'}, or point --base-url at a server that needs none"
            )
        key = _PLACEHOLDER_KEY
    if conf.kind == "anthropic":
        return AnthropicProvider(
            model, settings, api_key=key, base_url=url, name=name, meter=meter, sleep=sleep
        )
    return OpenAIProvider(
        model,
        settings,
        api_key=key,
        base_url=url,
        token_limit_param=conf.token_limit_param,
        name=name,
        meter=meter,
        sleep=sleep,
    )


__all__ = [
    "AnthropicProvider",
    "Completion",
    "OpenAIProvider",
    "Provider",
    "ProviderCallError",
    "make_provider",
    "parse_retry_after",
]
