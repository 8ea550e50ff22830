"""The optional dependencies: what to run when one is missing, said the same way everywhere.

rankscope's extras (``pip install 'rankscope[faiss]'``) bring the packages of one feature: an
engine's client, the service, the report's figures. A feature imports them where it uses them,
through :func:`import_extra`, and a missing one is an error that names the feature, what it
needs and the command that installs it: ``engine 'faiss' needs the faiss-cpu package: pip
install 'rankscope[faiss]'``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from rankscope.errors import RankscopeError


def install_command(extra: str) -> str:
    """The command that installs an extra: ``pip install 'rankscope[EXTRA]'``."""
    return f"pip install 'rankscope[{extra}]'"


def needs_extra(what: str, needs: str, extra: str) -> str:
    """``WHAT needs NEEDS: pip install 'rankscope[EXTRA]'``, the message for a missing optional
    dependency (``what`` names the feature, ``needs`` the package)."""
    return f"{what} needs {needs}: {install_command(extra)}"


def import_extra(
    module: str, what: str, needs: str, extra: str, error: type[RankscopeError] = RankscopeError
) -> ModuleType:
    """``module`` imported, or ``error`` with :func:`needs_extra`'s message when it (or one of
    its own dependencies) is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise error(needs_extra(what, needs, extra)) from exc


__all__ = ["import_extra", "install_command", "needs_extra"]
