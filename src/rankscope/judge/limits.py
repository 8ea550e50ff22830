"""Client-side limits: a requests/tokens-per-minute limiter and token/cost accounting."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rankscope.judge.config import JudgeSettings


class RateLimiter:
    """Token buckets for requests per minute and tokens per minute, shared by threads.

    Each bucket holds at most one minute's allowance and refills continuously. ``acquire``
    blocks until one request and ``tokens`` (an estimate) fit; ``settle`` corrects the token
    bucket once the real usage is known.
    """

    def __init__(
        self,
        requests_per_minute: float | None,
        tokens_per_minute: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        now = clock()
        self._req = requests_per_minute or 0.0
        self._tok = tokens_per_minute or 0.0
        self._last = now

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._last)
        self._last = now
        if self.rpm:
            self._req = min(self.rpm, self._req + elapsed * self.rpm / 60.0)
        if self.tpm:
            self._tok = min(self.tpm, self._tok + elapsed * self.tpm / 60.0)

    def acquire(self, tokens: int = 0) -> float:
        """Wait for room; returns the seconds waited."""
        if not self.rpm and not self.tpm:
            return 0.0
        waited = 0.0
        while True:
            with self._lock:
                self._refill()
                # A request larger than a whole minute's allowance may go once the bucket is full.
                need_tok = min(float(tokens), self.tpm) if self.tpm else 0.0
                wait = 0.0
                if self.rpm and self._req < 1.0:
                    wait = max(wait, (1.0 - self._req) * 60.0 / self.rpm)
                if self.tpm and self._tok < need_tok:
                    wait = max(wait, (need_tok - self._tok) * 60.0 / self.tpm)
                if wait <= 0.0:
                    if self.rpm:
                        self._req -= 1.0
                    if self.tpm:
                        self._tok -= need_tok
                    return waited
            self._sleep(wait)
            waited += wait

    def settle(self, estimated: int, actual: int) -> None:
        if not self.tpm:
            return
        with self._lock:
            self._tok -= actual - estimated


@dataclass(frozen=True, slots=True)
class UsageTotals:
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None when some call's model has no price
    unpriced_models: tuple[str, ...]


class UsageMeter:
    """Counts paid calls, tokens and cost (from the settings' price table), thread-safely."""

    def __init__(self, settings: JudgeSettings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._calls = 0
        self._in = 0
        self._out = 0
        self._cost = 0.0
        self._unpriced: set[str] = set()

    def cost_of(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        price = self._settings.price(model)
        if price is None:
            return None
        return (input_tokens * price.input + output_tokens * price.output) / 1_000_000

    def add(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        cost = self.cost_of(model, input_tokens, output_tokens)
        with self._lock:
            self._calls += 1
            self._in += input_tokens
            self._out += output_tokens
            if cost is None:
                self._unpriced.add(model)
            else:
                self._cost += cost
        return cost

    def totals(self) -> UsageTotals:
        with self._lock:
            return UsageTotals(
                calls=self._calls,
                input_tokens=self._in,
                output_tokens=self._out,
                cost_usd=None if self._unpriced else round(self._cost, 8),
                unpriced_models=tuple(sorted(self._unpriced)),
            )


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate: about four characters per token."""
    return max(1, (len(text) + 3) // 4)


__all__ = ["RateLimiter", "UsageMeter", "UsageTotals", "estimate_tokens"]
