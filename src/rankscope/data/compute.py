"""The Arrow compute functions that reading and scoring call, without importing pyarrow.compute
(and numpy's ``unique`` without numpy.ma).

``pyarrow.compute`` wraps each of Arrow's ~290 functions in a Python function, with a signature
and a docstring scraped from Arrow's, when it is imported: about 50 ms of CPU, a sixth of
``rankscope trec_eval`` on a small file. Each function here calls Arrow's function registry as
that wrapper does (``call_function``, with the same options class), so the results are the same.

An array's own ``take``, ``filter``, ``is_valid``... import ``pyarrow.compute`` when called:
the modules on the path of ``rankscope eval`` and ``trec_eval`` call :func:`take` here instead
(tests/cli/test_cli_startup.py checks that a fresh interpreter never imports it there).
``np.unique`` imports numpy.ma (20 ms) to check for a masked array: :func:`distinct` is the
same for the plain arrays these modules hold.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

try:  # the registry and the options: pyarrow.compute re-exports them from pyarrow._compute
    from pyarrow._compute import (
        MatchSubstringOptions,
        SetLookupOptions,
        SliceOptions,
        SortOptions,
        call_function,
    )
except ImportError:  # pragma: no cover - a pyarrow laid out otherwise: the public module
    from pyarrow.compute import (
        MatchSubstringOptions,
        SetLookupOptions,
        SliceOptions,
        SortOptions,
        call_function,
    )


def _call(name: str, *args: Any, options: Any = None) -> Any:
    return call_function(name, list(args), options)


def all(values: Any) -> Any:
    return _call("all", values)


def any(values: Any) -> Any:
    return _call("any", values)


def min(values: Any) -> Any:
    return _call("min", values)


def and_kleene(left: Any, right: Any) -> Any:
    return _call("and_kleene", left, right)


def invert(values: Any) -> Any:
    return _call("invert", values)


def equal(left: Any, right: Any) -> Any:
    return _call("equal", left, right)


def less(left: Any, right: Any) -> Any:
    return _call("less", left, right)


def if_else(cond: Any, left: Any, right: Any) -> Any:
    return _call("if_else", cond, left, right)


def binary_length(strings: Any) -> Any:
    return _call("binary_length", strings)


def binary_join_element_wise(*strings: Any) -> Any:
    """The strings joined element-wise by the last argument (nulls give null)."""
    return _call("binary_join_element_wise", *strings)


def match_substring_regex(strings: Any, pattern: str) -> Any:
    return _call("match_substring_regex", strings, options=MatchSubstringOptions(pattern))


def starts_with(strings: Any, pattern: str) -> Any:
    return _call("starts_with", strings, options=MatchSubstringOptions(pattern))


def utf8_slice_codeunits(strings: Any, start: int) -> Any:
    return _call("utf8_slice_codeunits", strings, options=SliceOptions(start))


def dictionary_encode(values: Any) -> Any:
    return _call("dictionary_encode", values)


def run_end_encode(values: Any) -> Any:
    return _call("run_end_encode", values)


def index_in(values: Any, *, value_set: Any) -> Any:
    return _call("index_in", values, options=SetLookupOptions(value_set))


def sort_indices(table: Any, *, sort_keys: list[tuple[str, str]]) -> Any:
    return _call("sort_indices", table, options=SortOptions(sort_keys))


def take(values: Any, indices: Any) -> Any:
    """``values.take(indices)`` (the method imports pyarrow.compute)."""
    return _call("take", values, indices)


def filter(values: Any, mask: Any) -> Any:
    """``values.filter(mask)`` (nulls in the mask drop their rows, as the method's default)."""
    return _call("filter", values, mask)


def is_valid(values: Any) -> Any:
    return _call("is_valid", values)


def drop_null(values: Any) -> Any:
    return _call("drop_null", values)


def distinct(values: npt.ArrayLike) -> npt.NDArray[Any]:
    """``np.unique(values)``: the distinct values, sorted (flattened, as np.unique); several NaNs
    stay several (np.unique keeps one): the callers' values are integers."""
    ordered = np.sort(np.asarray(values), axis=None)
    first = np.ones(ordered.shape[0], dtype=np.bool_)
    first[1:] = ordered[1:] != ordered[:-1]
    return ordered[first]
