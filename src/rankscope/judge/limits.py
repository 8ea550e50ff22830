"""Client-side limits: calls in flight (adaptive), requests/tokens per minute, token/cost
accounting."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rankscope.judge.config import JudgeSettings

log = logging.getLogger("rankscope.judge.limits")


class AdaptiveConcurrency:
    """Bounds the calls in flight; halves the bound when calls time out (AIMD).

    A server that works on fewer requests at once than we send (llama.cpp's server has one slot
    by default) queues the others, and that queue time counts against the HTTP timeout of each
    request: calls time out although the server is healthy. Waiting here for a slot costs no
    timeout (the request is not sent yet), so on a timeout the bound is halved (at most once per
    round of calls sent under the old bound), down to 1; after ``increase_after`` × bound
    successful calls in a row it grows by one again, up to the configured maximum. With
    ``adaptive=False`` the bound stays fixed.
    """

    def __init__(self, limit: int, *, adaptive: bool = True, increase_after: int = 10) -> None:
        self.maximum = max(1, limit)
        self.adaptive = adaptive
        self.increase_after = increase_after
        self._limit = self.maximum
        self._in_flight = 0
        self._epoch = 0
        self._successes = 0
        self.lowered = 0  # how many times the bound was halved
        self.lowest = self.maximum
        self._cond = threading.Condition()

    @property
    def limit(self) -> int:
        with self._cond:
            return self._limit

    def reset(self, limit: int) -> None:
        """A new maximum (the ``--concurrency`` of a run); the bound starts there."""
        with self._cond:
            self.maximum = max(1, limit)
            self._limit = self.maximum
            self.lowest = self.maximum
            self.lowered = 0
            self._successes = 0
            self._epoch += 1
            self._cond.notify_all()

    @contextlib.contextmanager
    def slot(self) -> Iterator[Callable[[bool], None]]:
        """Hold one slot for a call; call the yielded function with ``timed_out`` when known."""
        with self._cond:
            while self._in_flight >= self._limit:
                self._cond.wait()
            self._in_flight += 1
            epoch = self._epoch
        outcome: list[bool] = []
        try:
            yield outcome.append
        finally:
            with self._cond:
                self._in_flight -= 1
                if outcome:
                    self._settle(epoch, timed_out=outcome[-1])
                self._cond.notify_all()

    def _settle(self, epoch: int, *, timed_out: bool) -> None:
        if not self.adaptive:
            return
        if timed_out:
            self._successes = 0
            if epoch == self._epoch and self._limit > 1:
                before = self._limit
                self._limit = max(1, self._limit // 2)
                self._epoch += 1
                self.lowered += 1
                self.lowest = min(self.lowest, self._limit)
                log.warning(
                    "calls timed out: %d in flight lowered to %d (the server seems to answer "
                    "fewer requests at once; its queue time counts against the timeout)",
                    before,
                    self._limit,
                )
            return
        self._successes += 1
        if self._limit < self.maximum and self._successes >= self.increase_after * self._limit:
            self._successes = 0
            self._limit += 1
            log.info("calls in flight raised to %d", self._limit)


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

    def cost_of(
        self, model: str, input_tokens: int, output_tokens: int, *, price_factor: float = 1.0
    ) -> float | None:
        """USD at the list price, times ``price_factor`` (a batch's discount)."""
        price = self._settings.price(model)
        if price is None:
            return None
        list_cost = (input_tokens * price.input + output_tokens * price.output) / 1_000_000
        return list_cost * price_factor

    def add(
        self, model: str, input_tokens: int, output_tokens: int, *, price_factor: float = 1.0
    ) -> float | None:
        cost = self.cost_of(model, input_tokens, output_tokens, price_factor=price_factor)
        self.record(model, input_tokens, output_tokens, cost)
        return cost

    def record(self, model: str, input_tokens: int, output_tokens: int, cost: float | None) -> None:
        """Count a call whose cost is already known (None: unpriced), e.g. from a saved row."""
        with self._lock:
            self._calls += 1
            self._in += input_tokens
            self._out += output_tokens
            if cost is None:
                self._unpriced.add(model)
            else:
                self._cost += cost

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


def truncate_to_tokens(text: str, budget: int | None) -> tuple[str, bool]:
    """``text`` cut to ``budget`` estimated tokens (4 characters each) at the last space
    before the limit, and whether it was cut; None: no limit."""
    if budget is None or len(text) <= budget * 4:
        return text, False
    limit = budget * 4
    cut = text.rfind(" ", 0, limit + 1)
    if cut < limit // 2:  # no space in the second half: cut inside the word
        cut = limit
    return text[:cut].rstrip(), True


__all__ = [
    "AdaptiveConcurrency",
    "RateLimiter",
    "UsageMeter",
    "UsageTotals",
    "estimate_tokens",
    "truncate_to_tokens",
]
