"""Qrels and runs: the value types and their readers and writers."""

from rankscope.data._source import DataWarning
from rankscope.data.order import byte_key
from rankscope.data.qrels import Qrels
from rankscope.data.readers import read_qrels, read_run
from rankscope.data.run import Run, unique_run_names
from rankscope.data.writers import write_qrels, write_run

__all__ = [
    "DataWarning",
    "Qrels",
    "Run",
    "byte_key",
    "read_qrels",
    "read_run",
    "unique_run_names",
    "write_qrels",
    "write_run",
]
