"""``rankscope serve``: collect retrieval metrics from production traffic, per user.

Needs the ``serve`` extra (``pip install 'rankscope[serve]'``). The parts: ``app`` (FastAPI),
``api/`` (routes and dependencies), ``schemas`` (bodies), ``store/`` (SQLAlchemy models, Alembic
migrations, row-level security), ``auth``, ``settings``, ``measures`` (per-query measures through
``rankscope.evaluate``). See docs/service.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.service.app import create_app
    from rankscope.service.settings import ServiceSettings, load_settings

__all__ = ["ServiceSettings", "create_app", "load_settings"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from rankscope.service.app import create_app

        return create_app
    if name in ("ServiceSettings", "load_settings"):
        from rankscope.service import settings

        return getattr(settings, name)
    raise AttributeError(name)
