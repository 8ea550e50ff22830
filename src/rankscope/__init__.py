"""rankscope: measure, compare and judge the quality of search and retrieval systems."""

from rankscope.data import Qrels, Run
from rankscope.errors import RankscopeError

__version__ = "0.1.0"

__all__ = ["Qrels", "RankscopeError", "Run", "__version__"]
