"""The shipped demo: a documentation-search suite over the standard library's docstrings.

``SUITE_PATH`` is the suite file (``stdlib-docs.yaml``); its corpus is built at run time from the
running interpreter by :func:`rankscope.demo.stdlib.load_corpus`.
"""

from __future__ import annotations

from pathlib import Path

from rankscope.demo.stdlib import DEFAULT_MODULES, load_corpus

#: the demo suite shipped with the package
SUITE_PATH: Path = Path(__file__).with_name("stdlib-docs.yaml")

__all__ = ["DEFAULT_MODULES", "SUITE_PATH", "load_corpus"]
