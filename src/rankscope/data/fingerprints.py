"""64-bit fingerprints of ids and of (query, doc) pairs, computed without a Python object per row.

The readers fingerprint every (query, doc) row of a run once, to find repeated documents; they
keep those fingerprints (:func:`remember`) so that evaluation can join the run to its qrels
without hashing the doc ids again (:func:`recall`).  The cache is held beside the run, not on
it: a :class:`~rankscope.data.Run` is a plain value, and a copy with other rows simply has no
fingerprints.  A fingerprint can collide, so every user compares the strings of the matches.
"""

from __future__ import annotations

import weakref
from collections.abc import Sized
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankscope.data import compute as pc  # np.unique imports numpy.ma
from rankscope.data.arrow import numpy_array

StrArray = Any  # a pyarrow string Array or ChunkedArray

# keyed by the Run itself (by identity: a Run compares by identity), typed loosely so that this
# module, which the run module uses, does not import it
_CACHE: weakref.WeakKeyDictionary[Sized, npt.NDArray[np.uint64]] = weakref.WeakKeyDictionary()


def remember(run: Sized, keys: npt.NDArray[np.uint64]) -> None:
    """Keep ``keys`` (:func:`pair_keys` of ``run``'s rows, no repeats) for :func:`recall`."""
    if keys.shape[0] != len(run):
        raise ValueError("one fingerprint per run row is needed")
    keys.setflags(write=False)
    _CACHE[run] = keys


def recall(run: Sized) -> npt.NDArray[np.uint64] | None:
    """The fingerprints a reader kept for ``run``: read-only, one per row, every (query, doc)
    pair distinct; ``None`` when the run was built another way."""
    return _CACHE.get(run)


_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xBF58476D1CE4E5B9)
_K3 = np.uint64(0x94D049BB133111EB)
_CHUNK = 1 << 14  # rows per step: every temporary stays small enough to be reused (and in cache)
_WORD_MASKS = np.array(
    [0] + [(1 << (8 * k)) - 1 for k in range(1, 8)] + [(1 << 64) - 1], dtype=np.uint64
)


def _mix(h: npt.NDArray[np.uint64]) -> None:
    """Scramble ``h`` in place (splitmix64's finaliser); in place saves a temporary per step."""
    tmp = h >> np.uint64(30)
    h ^= tmp
    h *= _K2
    np.right_shift(h, np.uint64(27), out=tmp)
    h ^= tmp
    h *= _K3
    np.right_shift(h, np.uint64(31), out=tmp)
    h ^= tmp


def _hash_words(mat: npt.NDArray[np.uint8], lens: npt.NDArray[Any]) -> npt.NDArray[np.uint64]:
    rows, width = mat.shape
    pad = (-width) % 8
    if pad:
        padded = np.zeros((rows, width + pad), dtype=np.uint8)
        padded[:, :width] = mat
        mat = padded
    words = np.ascontiguousarray(mat).view("<u8")
    h = lens.astype(np.uint64)
    h *= _K1
    for j in range(words.shape[1]):
        # Only words a string reaches: its hash must not depend on the other rows' widths, so
        # that equal strings hash equal across chunks (and across run and qrels).
        longer = lens > 8 * j if j else None
        if longer is None or bool(longer.all()):
            h ^= words[:, j]
            _mix(h)
        else:
            part = h[longer] ^ words[longer, j]
            _mix(part)
            h[longer] = part
    return h


def hash_strings(values: StrArray) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each string, computed without Python objects per row."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    out = np.empty(len(values), dtype=np.uint64)  # one allocation: fresh pages are costly
    at = 0
    for chunk in chunks:
        _hash_chunk(chunk, out[at : at + len(chunk)])
        at += len(chunk)
    return out


def _hash_chunk(values: pa.Array, out: npt.NDArray[np.uint64]) -> None:
    n = len(values)
    if n == 0:
        return
    if values.type != pa.string():
        values = values.cast(pa.string())
    bufs = values.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int32)[values.offset : values.offset + n + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    scratch = np.zeros(0, dtype=np.uint8)
    for a in range(0, n, _CHUNK):  # in pieces: no temporaries as long as the column
        b = min(n, a + _CHUNK)
        need = int(offs[b]) - int(offs[a]) + 8
        if scratch.shape[0] < need:
            scratch = np.zeros(max(need, 2 * scratch.shape[0]), dtype=np.uint8)
        out[a:b] = _hash_rows(data, offs[a : b + 1], scratch)


def _hash_rows(
    data: npt.NDArray[np.uint8], offs: npt.NDArray[np.int32], scratch: npt.NDArray[np.uint8]
) -> npt.NDArray[np.uint64]:
    """The hashes of the strings between consecutive offsets ``offs`` into ``data``;
    ``scratch``: room for their bytes and 8 more."""
    lens = np.diff(offs)
    lo, hi = int(lens.min()), int(lens.max())
    first, stop = int(offs[0]), int(offs[-1])
    if lo == hi:
        return _hash_words(data[first:stop].reshape(lens.shape[0], lo), lens)
    # Mixed lengths: read each string's 8-byte words straight from the buffer (overlapping
    # little-endian loads, masked to the string's end), which gives exactly the words of the
    # zero-padded rows above, without building a padded matrix.
    padded = scratch[: stop - first + 8]
    padded[: stop - first] = data[first:stop]
    padded[stop - first :] = 0
    words = np.ndarray(shape=(stop - first + 1,), dtype="<u8", buffer=padded, strides=(1,))
    st = offs[:-1].astype(np.int64) - first
    ln = lens.astype(np.int64)
    h = ln.astype(np.uint64)
    h *= _K1
    for j in range(0, max(hi, 1), 8):
        if j == 0:
            h ^= words[st] & _WORD_MASKS[np.minimum(ln, 8)]
            _mix(h)
        else:
            rows = np.flatnonzero(ln > j)
            part = h[rows] ^ (words[st[rows] + j] & _WORD_MASKS[np.minimum(ln[rows] - j, 8)])
            _mix(part)
            h[rows] = part
    return h


def pair_key_bits(num_queries: int) -> int:
    """High bits of a :func:`pair_keys` key that hold the query number."""
    return max(1, int(num_queries).bit_length())


def pair_keys(
    row_query: npt.NDArray[np.integer] | None,
    docs: StrArray,
    num_queries: int,
    *,
    offsets: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.uint64]:
    """Per row, a 64-bit (query, doc) fingerprint: the query number in the top
    :func:`pair_key_bits` bits, the doc id's :func:`hash_strings` below.  Equal pairs give equal
    keys; unequal pairs almost never do (callers compare the strings of matches).

    The query of each row is ``row_query``, or, for rows grouped by query in order, read from
    the groups' ``offsets`` a piece at a time (no array of query numbers per row)."""
    qbits = pair_key_bits(num_queries)
    k = hash_strings(docs)
    k >>= np.uint64(qbits)
    for a in range(0, len(k), _CHUNK):  # in pieces: no 10M-row temporaries
        if row_query is not None:
            part = row_query[a : a + _CHUNK].astype(np.uint64)
        else:
            assert offsets is not None
            rows = np.arange(a, min(a + _CHUNK, len(k)))
            part = (np.searchsorted(offsets, rows, side="right") - 1).astype(np.uint64)
        part <<= np.uint64(64 - qbits)
        k[a : a + _CHUNK] |= part
    return k


def find_duplicate(
    row_query: npt.NDArray[np.integer],
    docs: StrArray,
    num_queries: int,
    pair_keys_: npt.NDArray[np.uint64] | None = None,
    *,
    scratch: npt.NDArray[np.uint64] | None = None,
) -> tuple[int, int] | None:
    """``(first_row, repeat_row)`` of the earliest repeated (query, doc) pair, else ``None``.

    ``pair_keys_`` are the rows' :func:`pair_keys` when the caller already has them (left
    intact); they are sorted in ``scratch`` (as long as they) when given, which the caller can
    reuse afterwards.
    """
    n = len(docs)
    if n < 2:
        return None

    def keys() -> npt.NDArray[np.uint64]:
        if pair_keys_ is not None:
            if scratch is None:
                return pair_keys_.copy()
            np.copyto(scratch, pair_keys_)
            return scratch
        return pair_keys(row_query, docs, num_queries)

    ks = keys()
    ks.sort()  # in place: at 10M rows every copy costs 80 MB
    repeats = [np.zeros(0, dtype=np.uint64)]
    for a in range(0, n - 1, _CHUNK):  # in steps: no mask as long as the keys
        b = min(n - 1, a + _CHUNK)
        later = ks[a + 1 : b + 1]
        repeats.append(later[later == ks[a:b]])
    suspects = pc.distinct(np.concatenate(repeats))
    if not suspects.shape[0]:
        return None
    del ks, repeats
    rows = np.flatnonzero(np.isin(pair_keys_ if pair_keys_ is not None else keys(), suspects))
    names = docs.take(numpy_array(rows)).to_pylist()
    seen: dict[tuple[int, str], int] = {}
    best: tuple[int, int] | None = None
    for r, name in zip(rows.tolist(), names, strict=True):
        key = (int(row_query[r]), name)
        first = seen.setdefault(key, r)
        if first != r and (best is None or r < best[1]):
            best = (first, r)
    return best


__all__ = ["find_duplicate", "hash_strings", "pair_key_bits", "pair_keys", "recall", "remember"]
