"""Run the service with uvicorn (the address checked first, the settings handed to the worker
processes through the environment), and tune a serving process's garbage collector (the
application's workers and the bulk processes alike)."""

from __future__ import annotations

import errno
import gc
import json
import os
import socket
from collections.abc import Callable
from typing import Any

from rankscope.errors import ServiceError
from rankscope.service.settings import ENV_PREFIX, ServiceSettings
from rankscope.service.store.db import describe, is_postgres, make_engine, migrate

FACTORY = "rankscope.service.app:create_app_from_env"
#: uvicorn's HTTP protocol with the connection deadlines and cap (imported by uvicorn)
PROTOCOL = "rankscope.service.connections:LimitedProtocol"


#: the collector's generation-0 threshold (CPython's default is 700)
GC_GEN0_THRESHOLD = 50_000


def tune_gc() -> None:
    """Garbage collection for a serving process: what start-up allocated (modules, the app,
    the engine) moves to the permanent generation, and young collections run every 50,000
    allocations instead of 700. A batch of 1,000 records allocates tens of thousands of
    objects that reference counting frees; with the default threshold validating and building
    its rows alone ran some 50 young collections (bench/RESULTS.md has the effect). Cyclic
    garbage is still collected, only in larger steps."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


def export_settings(settings: ServiceSettings) -> None:
    """Put the settings into the environment, where uvicorn's worker processes read them."""
    data = settings.model_dump(mode="json", exclude_none=True)
    data.pop("config_file", None)
    for name, value in data.items():
        if isinstance(value, (dict, list)):
            text = json.dumps(value)
        elif isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = str(value)
        os.environ[ENV_PREFIX + name.upper()] = text
    if settings.jwt_secret is not None:
        os.environ[ENV_PREFIX + "JWT_SECRET"] = settings.jwt_secret.get_secret_value()


def run(settings: ServiceSettings, announce: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted (uvicorn; ``settings.workers`` processes). ``announce`` gets
    the line saying where it serves, once the address is known to be free."""
    import uvicorn

    check_address(settings.host, settings.port)
    engine = make_engine(settings.database_url, pool_size=1)
    try:
        if not is_postgres(engine) and settings.auto_migrate:
            migrate(engine)  # once, before the workers start
    finally:
        engine.dispose()
    export_settings(settings)
    if announce is not None:
        announce(
            f"rankscope serve: {describe(settings.database_url)} on "
            f"http://{settings.host}:{settings.port} (API docs at /docs)"
        )
    uvicorn.run(FACTORY, factory=True, **uvicorn_options(settings))


def uvicorn_options(settings: ServiceSettings) -> dict[str, Any]:
    """uvicorn's options for the settings: the address, the workers, and what a connection may
    hold (:mod:`rankscope.service.connections`: head and body deadlines, the connection cap)."""
    return {
        "host": settings.host,
        "port": settings.port,
        "workers": settings.workers,
        "log_level": settings.log_level,
        "proxy_headers": True,
        "http": PROTOCOL,
        "timeout_keep_alive": settings.keep_alive_timeout_seconds,
        "limit_concurrency": settings.max_connections,
        "h11_max_incomplete_event_size": settings.max_header_bytes,
    }


def check_address(host: str, port: int) -> None:
    """Bind ``host:port`` as uvicorn will (``SO_REUSEADDR``) and let go: a port in use, a
    privileged port or an address of another machine is a ServiceError saying what to change,
    before anything claims to serve."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ServiceError(
            f"cannot listen on {host!r}: {exc.strerror}; give --host an address of this "
            "machine (127.0.0.1, or 0.0.0.0 for every interface)"
        ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            where = f"http://{host}:{port}"
            if exc.errno == errno.EADDRINUSE:
                raise ServiceError(
                    f"cannot listen on {where}: the port is in use (another rankscope serve, "
                    f"or another program); choose a free one with --port, e.g. --port "
                    f"{_free_port(family, str(address[0]))}"
                ) from None
            if exc.errno == errno.EACCES:
                raise ServiceError(
                    f"cannot listen on {where}: ports below 1024 need privileges; choose one "
                    "above with --port (8000 is the default)"
                ) from None
            if exc.errno == errno.EADDRNOTAVAIL:
                raise ServiceError(
                    f"cannot listen on {where}: {host} is not an address of this machine; "
                    "use --host 127.0.0.1 (or 0.0.0.0 for every interface)"
                ) from None
            raise ServiceError(f"cannot listen on {where}: {exc.strerror}") from None


def _free_port(family: socket.AddressFamily, host: str) -> int:
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


__all__ = [
    "FACTORY",
    "GC_GEN0_THRESHOLD",
    "PROTOCOL",
    "check_address",
    "export_settings",
    "run",
    "tune_gc",
    "uvicorn_options",
]
