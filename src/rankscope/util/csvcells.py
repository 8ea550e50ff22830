"""CSV that a spreadsheet opens without running anything (CSV formula injection).

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula (and a tab
or carriage return can hide one): a run name or a query id such as ``=cmd|' /C calc'!A0`` in a
CSV rankscope wrote would run when the file is opened. Every CSV rankscope writes goes through
:func:`neutralise`, as OWASP recommends: a text cell that starts with one of those characters
gets a leading apostrophe, which the spreadsheet shows as text. Numbers stay numbers: a cell
that is a plain number (``-0.5``, ``+3``, ``-inf``) is never changed, so the measures' values
and an id such as ``-1`` are written as they are.

The apostrophe is undone on the way back in (:func:`restore`, used by every CSV reader of
rankscope), so ids round-trip. To keep that exact, a text that already starts with apostrophes
before such a character gets one more: ``'=x`` is written ``''=x`` and read back as ``'=x``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

#: the characters that make a spreadsheet read a cell as a formula (OWASP's list)
FORMULA_START = "=+-@\t\r"
#: a text that :func:`neutralise` changes (apostrophes, then a formula character); the pattern
#: is also valid RE2, for pyarrow's vectorised readers and writers
NEEDS_APOSTROPHE = r"^'*[=+\-@\t\r]"
#: a text that :func:`restore` changes: what :func:`neutralise` wrote
NEUTRALISED = r"^'+[=+\-@\t\r]"
#: a cell that is a number (left as it is: a spreadsheet reads it as a number, not a formula)
NUMBER = r"^[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|(?i:inf|infinity|nan))$"

_NEEDS = re.compile(NEEDS_APOSTROPHE)
_NEUTRALISED = re.compile(NEUTRALISED)
_NUMBER = re.compile(NUMBER)

#: what one CSV cell may be: text (neutralised), a number (written in full), or empty
Cell = str | int | float | None


def neutralise(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text (see the module)."""
    if _NEEDS.match(text) and not _NUMBER.match(text):
        return "'" + text
    return text


def restore(text: str) -> str:
    """The text :func:`neutralise` was given for ``text``."""
    return text[1:] if _NEUTRALISED.match(text) else text


def cell(value: Cell) -> str:
    """A cell's text: a str neutralised; a float at full precision (``repr``: it reads back
    to the same double; ``inf``, ``-inf``, ``nan``); an int as it is; None empty."""
    if value is None:
        return ""
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return repr(value)
    return str(value)


def csv_table(
    header: Sequence[str], rows: Iterable[Sequence[Cell]], *, lineterminator: str = "\n"
) -> str:
    """A header and rows as CSV (quoted where needed), every cell through :func:`cell`."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator=lineterminator)
    writer.writerow([cell(h) for h in header])
    for row in rows:
        writer.writerow([cell(v) for v in row])
    return out.getvalue()


__all__ = [
    "FORMULA_START",
    "NEEDS_APOSTROPHE",
    "NEUTRALISED",
    "NUMBER",
    "Cell",
    "cell",
    "csv_table",
    "neutralise",
    "restore",
]
