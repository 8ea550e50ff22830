"""Number parsing the way trec_eval does it (C ``atof`` / ``atol``), plus strict variants.

trec_eval reads scores with ``atof`` and grades, cutoffs and options with ``atol``: both skip
leading whitespace, take the longest valid prefix and silently give 0 when there is none
(``abc`` -> 0.0, ``1.5xyz`` -> 1.5, ``2x`` -> 2, ``0x1p3`` -> 8.0). The strict checks accept only
a plain decimal number (scores) or integer (grades). Every function takes ``bytes`` or ``str``
(text is read as its UTF-8 bytes, surrogate escapes included).
"""

from __future__ import annotations

import math
import re

_SPACE = rb"[ \t\n\v\f\r]*"  # C isspace
_DEC = rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_HEX = rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
_INF = rb"[+-]?(?:[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
_NAN = rb"[+-]?[nN][aA][nN](?:\([0-9A-Za-z_]*\))?"

# Longest-prefix matchers, tried in the order strtod resolves the ambiguity ("0x1" is hex).
_PREFIX = re.compile(
    _SPACE + rb"(?:(" + _HEX + rb")|(" + _DEC + rb")|(" + _INF + rb")|(" + _NAN + rb"))"
)
_STRICT_FLOAT = re.compile(_DEC)
_SPECIAL = re.compile(_INF + rb"|" + _NAN)
_INT = re.compile(rb"[+-]?[0-9]+")
_INT_PREFIX = re.compile(_SPACE + rb"([+-]?[0-9]+)")

_LONG_MAX = 2**63 - 1
_LONG_MIN = -(2**63)
#: relevance grades are C longs, as trec_eval reads them (no measure allocates by grade)
MAX_GRADE = _LONG_MAX
MIN_GRADE = _LONG_MIN
GRADE_RANGE_HINT = (
    f"Grades are integers from {MIN_GRADE} to {MAX_GRADE} (a C long, as trec_eval reads "
    "them); grades such as 0, 1, 2 are usual"
)


def _bytes(word: bytes | str) -> bytes:
    return word.encode("utf-8", "surrogateescape") if isinstance(word, str) else word


def c_atof(word: bytes | str) -> float:
    """What glibc ``atof`` returns for ``word``."""
    m = _PREFIX.match(_bytes(word))
    if m is None:
        return 0.0
    hexa, dec, inf, _nan = m.groups()
    if hexa is not None:
        return float.fromhex(hexa.decode("ascii"))
    if dec is not None:
        return float(dec)
    if inf is not None:
        return -math.inf if inf.startswith(b"-") else math.inf
    return math.nan


def c_atol(word: bytes | str) -> int:
    """What glibc ``atol`` (``strtol`` base 10, saturating) returns for ``word``."""
    m = _INT_PREFIX.match(_bytes(word))
    if m is None:
        return 0
    return max(_LONG_MIN, min(_LONG_MAX, int(m.group(1))))


def is_plain_float(word: bytes | str) -> bool:
    """True when ``word`` is entirely a finite decimal number such as ``-1.5e3``."""
    return _STRICT_FLOAT.fullmatch(_bytes(word)) is not None


def is_special_float(word: bytes | str) -> bool:
    """True when ``word`` spells NaN or infinity."""
    return _SPECIAL.fullmatch(_bytes(word)) is not None


def is_plain_int(word: bytes | str) -> bool:
    """True when ``word`` is entirely a decimal integer such as ``-3`` or ``+12``."""
    return _INT.fullmatch(_bytes(word)) is not None


__all__ = [
    "GRADE_RANGE_HINT",
    "MAX_GRADE",
    "MIN_GRADE",
    "c_atof",
    "c_atol",
    "is_plain_float",
    "is_plain_int",
    "is_special_float",
]
