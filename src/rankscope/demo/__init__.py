"""The shipped demo: a documentation-search suite over the standard library's docstrings.

The demo is data: ``SUITE_PATH`` is the suite file (``stdlib-docs.yaml``); its corpus is built at
run time from the running interpreter by :func:`rankscope.suite.docstrings.load_corpus` (the
suite's ``docstrings`` corpus), re-exported here.
"""

from __future__ import annotations

from pathlib import Path

from rankscope.suite.docstrings import DEFAULT_MODULES, load_corpus

#: the demo suite shipped with the package
SUITE_PATH: Path = Path(__file__).with_name("stdlib-docs.yaml")

__all__ = ["DEFAULT_MODULES", "SUITE_PATH", "load_corpus"]
