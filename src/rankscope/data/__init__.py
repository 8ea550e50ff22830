"""Qrels and runs: the value types and their readers and writers.

The names load on first use (:mod:`rankscope.lazy`): ``rankscope.data.order`` and the other
light modules are importable without numpy and pyarrow.
"""

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.data.order import byte_key
    from rankscope.data.qrels import Qrels
    from rankscope.data.readers import read_qrels, read_run
    from rankscope.data.run import Run, unique_run_names
    from rankscope.data.writers import write_qrels, write_run
    from rankscope.errors import DataWarning

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

__getattr__, __dir__ = lazy_exports(globals())
