"""The atof/atol emulation matches the C library's own functions."""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope.data.numbers import c_atof, c_atol, is_plain_float

if sys.platform != "linux":
    pytest.skip("compares with glibc", allow_module_level=True)

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.atof.restype = ctypes.c_double
_libc.atof.argtypes = [ctypes.c_char_p]
_libc.atol.restype = ctypes.c_long
_libc.atol.argtypes = [ctypes.c_char_p]

# leading blanks too: atof/atol skip them (trec_eval reads -M/-l/-N values with atol)
words = st.text(alphabet=" \t0123456789+-.eEpPxXabcdfinINAFTYty()_", min_size=1, max_size=12)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@settings(max_examples=1000, deadline=None)
@given(words)
def test_atof_matches_libc(word: str) -> None:
    raw = word.encode()
    assert _same(c_atof(raw), _libc.atof(raw)), word


@pytest.mark.parametrize(
    "word",
    [
        "1.5xyz",
        "abc",
        "nan",
        "-inf",
        "infinity",
        "0x1p3",
        "0x",
        "1e",
        "1e+",
        ".",
        "-.5e-3",
        "1e400",
        "-1e400",
        "1e-400",
        "0x1.8p1",
        "nan(123)",
        "+.e1",
        "00012",
        "4.9e-324",
    ],
)
def test_atof_known_cases(word: str) -> None:
    assert _same(c_atof(word.encode()), _libc.atof(word.encode()))


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="0123456789+- x.a", min_size=1, max_size=25))
def test_atol_matches_libc(word: str) -> None:
    raw = word.encode()
    assert c_atol(raw) == _libc.atol(raw), word
    assert c_atol(word) == c_atol(raw)  # text is read as its UTF-8 bytes


def test_plain_floats() -> None:
    assert is_plain_float(b"-1.5e3") and is_plain_float(b".5") and is_plain_float(b"5.")
    assert not any(is_plain_float(w) for w in (b"nan", b"inf", b"1.5x", b"0x10", b"", b"e5"))
