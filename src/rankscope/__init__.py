"""rankscope: measure, compare and judge the quality of search and retrieval systems."""

from rankscope.data import Qrels, Run
from rankscope.errors import RankscopeError
from rankscope.metrics import Measure, Results, evaluate

__version__ = "0.1.0"

__all__ = ["Measure", "Qrels", "RankscopeError", "Results", "Run", "__version__", "evaluate"]
