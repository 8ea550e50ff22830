"""Qrels and runs: the value types and their readers and writers."""

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run

__all__ = ["Qrels", "Run"]
