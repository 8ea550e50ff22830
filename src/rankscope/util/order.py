"""The natural order of ids: numbers by value, then the other ids as text."""

from __future__ import annotations


def natural_key(qid: str) -> tuple[int, int, str]:
    """A sort key: ids of ASCII digits in numeric order (2 before 10; ``02`` ties with ``2``),
    then the others as text. Other digits (``²``, Arabic-Indic ones) are text. The number is
    compared by its length and digits, not converted: ``int()`` refuses an id of more than
    4,300 digits."""
    if qid.isascii() and qid.isdigit():
        digits = qid.lstrip("0")
        return (0, len(digits), digits)
    return (1, 0, qid)


__all__ = ["natural_key"]
