"""rankscope: measure, compare and judge the quality of search and retrieval systems.

The public names load on first use (:mod:`rankscope.lazy`): ``import rankscope`` costs no numpy
or pyarrow, so a command that needs neither starts without them.
"""

from typing import TYPE_CHECKING

from rankscope.errors import RankscopeError
from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.data import Qrels, Run
    from rankscope.metrics import Measure, Results, evaluate

#: the version of rankscope
__version__ = "0.1.0"

__all__ = ["Measure", "Qrels", "RankscopeError", "Results", "Run", "__version__", "evaluate"]

__getattr__, __dir__ = lazy_exports(globals())
