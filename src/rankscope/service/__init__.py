"""``rankscope serve``: collect retrieval metrics from production traffic, per user.

Needs the ``serve`` extra (``pip install 'rankscope[serve]'``). By layer, each importing only
those below it: ``store/`` (SQLAlchemy models, Alembic migrations, row-level security, one
store per table), ``schemas/`` (bodies by resource), ``ingest/`` (the write path: validation,
per-query measures through ``rankscope.evaluate``, group commit, bulk processes),
``analysis/`` (summaries, click judgments, experiments, exports, alerts), ``api/`` (one router
per resource, dependencies) and ``app`` (FastAPI); ``admin`` is what the CLI calls. Beside
them: ``settings``, ``auth``, ``errors``, ``nul``, ``server`` (uvicorn) and ``stored_measures``
(the one table of stored measures). See docs/service.md.
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
