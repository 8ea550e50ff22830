"""Engines and measures kept outside rankscope, found through package entry points.

A package adds an engine or a measure by declaring an entry point in its ``pyproject.toml``::

    [project.entry-points."rankscope.engines"]
    mysearch = "my_package.engine:MySearchEngine"    # an Engine subclass

    [project.entry-points."rankscope.measures"]
    my_measures = "my_package.measures:register"      # a function that registers measures

An engine entry point names an :class:`~rankscope.engines.base.Engine` subclass (registered
under the entry point's name) or a module whose ``@register_engine`` classes register
themselves. A measure entry point names a function called with no arguments that calls
:func:`rankscope.measures.register`, or a module that does so when imported. Entry points are
listed without importing anything; one is loaded when its name is first looked up (an engine)
or when a measure name is not otherwise known (every measure plugin).
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, entry_points

from rankscope.errors import ConfigError

ENGINE_GROUP = "rankscope.engines"
MEASURE_GROUP = "rankscope.measures"


@cache
def plugin_entry_points(group: str) -> dict[str, EntryPoint]:
    """The installed entry points of ``group`` by name (the first of a repeated name wins),
    read from the installed distributions' metadata once per process."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=group):
        found.setdefault(point.name, point)
    return found


def distribution_of(point: EntryPoint) -> str:
    """The distribution declaring ``point``, for messages (``"?"`` when unknown)."""
    dist = getattr(point, "dist", None)
    return str(getattr(dist, "name", None) or "?")


def load_entry_point(point: EntryPoint, group: str) -> object:
    """Import what ``point`` names; a failure is a ConfigError naming the plugin package."""
    try:
        return point.load()
    except Exception as exc:  # a broken plugin must not look like a rankscope bug
        raise ConfigError(
            f"plugin {point.name!r} ({group} entry point {point.value!r} of package "
            f"{distribution_of(point)!r}) failed to load: {type(exc).__name__}: {exc}",
            hint="fix or reinstall that package, or uninstall it",
        ) from exc


def reset() -> None:
    """Forget the entry points read so far (after installing a plugin in the same process)."""
    plugin_entry_points.cache_clear()


__all__ = [
    "ENGINE_GROUP",
    "MEASURE_GROUP",
    "distribution_of",
    "load_entry_point",
    "plugin_entry_points",
    "reset",
]
