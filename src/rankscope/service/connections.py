"""What one connection may hold: deadlines for a request's head and body, and a cap on open
connections, for the uvicorn server ``rankscope serve`` runs.

uvicorn's only timer is the keep-alive one, armed after a response and cancelled by the first
byte of the next request: a client that opens a connection and sends nothing, or sends a header
a byte at a time, or a body slower than it reads, holds the connection (and a file
descriptor) for ever. The protocols here wrap uvicorn's own (httptools when installed, as
uvicorn's ``auto`` picks, else h11) and add

- a **head deadline**: the request line and headers must arrive within
  ``request_header_timeout_seconds`` of the connection's start (or of the previous response);
- a **body deadline**: the whole body within ``request_body_timeout_seconds`` of its head;
- a **connection cap**: a worker process past ``max_connections`` open connections closes a
  new one at once (and uvicorn answers 503 to requests at the cap, ``limit_concurrency``).

A connection past a deadline is closed. While the application works on a request no deadline
runs (its time is the application's). The values come from the service's settings, read from
the environment :func:`rankscope.service.server.export_settings` fills for the worker
processes; tests set them with :func:`set_limits`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from rankscope.service.settings import ServiceSettings

log = logging.getLogger("rankscope.service")

Phase = Literal["head", "body", "app"]


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    body_timeout: float
    max_connections: int

    @classmethod
    def of(cls, settings: ServiceSettings) -> ConnectionLimits:
        return cls(
            settings.request_header_timeout_seconds,
            settings.request_body_timeout_seconds,
            settings.max_connections,
        )


_override: ConnectionLimits | None = None


@functools.cache
def _from_settings() -> ConnectionLimits:
    from rankscope.service.settings import load_settings

    return ConnectionLimits.of(load_settings())


def current_limits() -> ConnectionLimits:
    return _override if _override is not None else _from_settings()


def set_limits(limits: ConnectionLimits | None) -> None:
    """Use ``limits`` in this process (None: the settings' again)."""
    global _override
    _override = limits


class _Deadlines(asyncio.Protocol):
    """The deadlines and the cap, over a uvicorn HTTP protocol (the class it is mixed into,
    after this one: its ``connection_made`` and ``connection_lost`` run inside these).
    Each phase is told apart by the protocol's own state after the bytes it parsed: a new
    request cycle means its head is in, ``more_body`` false means its body is."""

    # the uvicorn protocol's attributes this mixin reads
    transport: asyncio.Transport
    connections: set[Any]
    cycle: Any
    loop: asyncio.AbstractEventLoop

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._start_deadlines()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _start_deadlines(self) -> None:
        self._limits = current_limits()
        self._timer: asyncio.TimerHandle | None = None
        self._seen: Any = None
        self._phase: Phase = "head"
        if len(self.connections) > self._limits.max_connections:
            log.warning(
                "rankscope serve: %d connections open (max_connections %d); closing a new one",
                len(self.connections) - 1,
                self._limits.max_connections,
            )
            self.transport.close()
            return
        self._arm(self._limits.header_timeout)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        if not self.transport.is_closing():
            log.info(
                "rankscope serve: closed a connection whose request %s did not arrive in time",
                "head" if self._phase == "head" else "body",
            )
            self.transport.close()

    def _after_bytes(self) -> None:
        """After the protocol parsed what came: move to the phase it reached."""
        cycle = self.cycle
        if cycle is None or self.transport.is_closing():
            return
        if cycle is not self._seen and not cycle.response_complete:
            self._seen = cycle  # a new request's head is in
            if cycle.more_body:
                self._phase = "body"
                self._arm(self._limits.body_timeout)
            else:
                self._phase = "app"
                self._disarm()
        elif self._phase == "body" and not cycle.more_body:
            self._phase = "app"
            self._disarm()

    def _next_request(self, pipelined: bool) -> None:
        """A response went out: the next request's head has its deadline (unless a pipelined
        request is already under way)."""
        if self.transport.is_closing():
            self._disarm()
            return
        if pipelined:
            self._seen = self.cycle
            self._phase = "app"
            self._disarm()
            return
        self._phase = "head"
        self._arm(self._limits.header_timeout)


class LimitedH11Protocol(_Deadlines, H11Protocol):
    def handle_events(self) -> None:
        super().handle_events()
        self._after_bytes()

    def on_response_complete(self) -> None:
        done = self.cycle
        super().on_response_complete()  # runs a pipelined request's events (handle_events)
        if self.cycle is done:
            self._next_request(pipelined=False)


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools is optional in uvicorn
    LimitedProtocol: type[asyncio.Protocol] = LimitedH11Protocol
else:

    class LimitedHttpToolsProtocol(_Deadlines, HttpToolsProtocol):
        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._after_bytes()

        def on_response_complete(self) -> None:
            pipelined = bool(self.pipeline)
            super().on_response_complete()
            self._next_request(pipelined)

    LimitedProtocol = LimitedHttpToolsProtocol

__all__ = [
    "ConnectionLimits",
    "LimitedH11Protocol",
    "LimitedProtocol",
    "current_limits",
    "set_limits",
]
