"""Qrels and runs: the value types and their readers and writers."""

from rankscope.data._source import DataWarning
from rankscope.data.qrels import Qrels
from rankscope.data.readers import read_qrels, read_run
from rankscope.data.run import Run
from rankscope.data.writers import write_qrels, write_run

__all__ = ["DataWarning", "Qrels", "Run", "read_qrels", "read_run", "write_qrels", "write_run"]
