"""Fast (query, doc id) keys: 64-bit fingerprints of strings and an open-addressing hash join.

Hashing ten million doc ids through pyarrow's dictionary kernels costs about a second.  Here the
string bytes are read eight at a time straight from the Arrow buffers and mixed with numpy, in
cache-sized blocks of whole queries spread over threads (numpy releases the GIL).  A fingerprint
can collide, so callers verify every match against the real strings and fall back to an exact
path when a collision shows up (with 64-bit keys that essentially never happens).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

U64 = NDArray[np.uint64]
Ints = NDArray[np.int64]

_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LEN = np.uint64(0xD6E8FEB86659FD93)
_S29 = np.uint64(29)
_S33 = np.uint64(33)
_MASKS = np.array(
    [0] + [(1 << (8 * k)) - 1 for k in range(1, 8)] + [(1 << 64) - 1], dtype=np.uint64
)
BLOCK_ROWS = 1 << 18


def mix(x: U64) -> U64:
    """A 64-bit finaliser (MurmurHash3's): every input bit affects every output bit."""
    x = x ^ (x >> _S33)
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


class StringBytes:
    """The bytes of an Arrow string array, readable as overlapping little-endian uint64 words."""

    def __init__(self, values: pa.Array) -> None:
        kind = values.type
        if pa.types.is_string(kind) or pa.types.is_binary(kind):
            width: type[np.integer] = np.int32  # type: ignore[type-arg]
        elif pa.types.is_large_string(kind) or pa.types.is_large_binary(kind):
            width = np.int64
        else:
            raise TypeError(f"not a string array: {kind}")
        n = len(values)
        buffers = values.buffers()
        offsets = np.frombuffer(buffers[1], dtype=width)[values.offset : values.offset + n + 1]
        lo, hi = int(offsets[0]), int(offsets[-1])
        self.padded = np.zeros(hi - lo + 8, dtype=np.uint8)
        if hi > lo:
            self.padded[: hi - lo] = np.frombuffer(buffers[2], dtype=np.uint8)[lo:hi]
        self.words = np.ndarray(shape=(hi - lo + 1,), dtype="<u8", buffer=self.padded, strides=(1,))
        self.starts = offsets[:-1].astype(np.int64) - lo
        self.lengths = np.diff(offsets).astype(np.int64)

    def keys(self, lo: int, hi: int, seed: Ints) -> U64:
        """Keys of rows ``lo:hi`` mixed with one seed per row (the query number)."""
        starts = self.starts[lo:hi]
        lengths = self.lengths[lo:hi]
        h = (seed.astype(np.uint64) + np.uint64(1)) * _GOLDEN
        h ^= lengths.astype(np.uint64) * _LEN
        longest = int(lengths.max()) if lengths.shape[0] else 0
        for j in range(0, max(longest, 1), 8):  # the first word always: "" included
            if j == 0:
                w = self.words[starts] & _MASKS[np.minimum(lengths, 8)]
                h ^= w
                h *= _C1
                h ^= h >> _S29
            else:
                rows = np.flatnonzero(lengths > j)
                w = self.words[starts[rows] + j] & _MASKS[np.minimum(lengths[rows] - j, 8)]
                part = (h[rows] ^ w) * _C1
                h[rows] = part ^ (part >> _S29)
        return mix(h)


def usable(values: pa.Array) -> bool:
    kind = values.type
    return bool(values.null_count == 0) and (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    )


class HashIndex:
    """Open-addressing (linear probing) index of uint64 keys, built and probed with vectorised
    rounds: each round settles most pending keys."""

    def __init__(self, keys: U64) -> None:
        self.keys = keys
        m = keys.shape[0]
        self.bits = max(4, int(np.ceil(np.log2(max(m, 1) * 4))))
        size = 1 << self.bits
        self.mask = size - 1
        self.table = np.full(size, -1, dtype=np.int64)
        slot = self._slots(keys)
        pending = np.arange(m, dtype=np.int64)
        while pending.shape[0]:
            s = slot[pending]
            free = self.table[s] == -1
            cand, cs = pending[free], s[free]
            self.table[cs] = cand  # several may claim one slot: the last write wins
            won = self.table[cs] == cand
            retry = np.concatenate([cand[~won], pending[~free]])
            slot[retry] = (slot[retry] + 1) & self.mask
            pending = retry

    def _slots(self, keys: U64) -> Ints:
        return (keys >> np.uint64(64 - self.bits)).astype(np.int64)

    def lookup(self, keys: U64) -> Ints:
        """Per key: the position of an equal indexed key, or -1."""
        n = keys.shape[0]
        slot = self._slots(keys)
        at = self.table[slot]
        found = np.full(n, -1, dtype=np.int64)
        occupied = at >= 0
        hit = occupied.copy()
        hit[occupied] = self.keys[at[occupied]] == keys[occupied]
        found[hit] = at[hit]
        pending = np.flatnonzero(occupied & ~hit)
        slot = slot[pending]
        while pending.shape[0]:
            slot = (slot + 1) & self.mask
            at = self.table[slot]
            occupied = at >= 0
            hit = np.zeros(pending.shape[0], dtype=np.bool_)
            hit[occupied] = self.keys[at[occupied]] == keys[pending[occupied]]
            found[pending[hit]] = at[hit]
            go_on = occupied & ~hit
            pending, slot = pending[go_on], slot[go_on]
        return found


class SpreadHashIndex(HashIndex):
    """A :class:`HashIndex` for keys whose top bits are not random (e.g. a query number over a
    doc hash): slots come from a multiplicative (Fibonacci) hash of the whole key."""

    def __init__(self, keys: U64) -> None:
        super().__init__(keys)
        # A byte per low-bits value of the indexed keys: most probes of a sparse join (a run
        # whose docs are mostly unjudged) are turned away by one gather from a small table.
        self.filter_mask = np.int64((1 << max(10, min(22, self.bits + 2))) - 1)
        self.present = np.zeros(int(self.filter_mask) + 1, dtype=np.bool_)
        self.present[keys.view(np.int64) & self.filter_mask] = True

    def _slots(self, keys: U64) -> Ints:
        return ((keys * _GOLDEN) >> np.uint64(64 - self.bits)).astype(np.int64)

    def lookup_candidates(self, keys: U64) -> tuple[Ints, Ints]:
        """:meth:`lookup` of the keys that pass the filter (the others are absent): returns
        their indices in ``keys`` and what :meth:`lookup` gives for them.  Faster than a plain
        lookup when few keys are indexed; the low bits of the keys must be hash bits."""
        maybe = np.flatnonzero(self.present[keys.view(np.int64) & self.filter_mask])
        return maybe, self.lookup(keys[maybe])


def blocks(offsets: Ints, rows: int = BLOCK_ROWS) -> list[tuple[int, int]]:
    """Row ranges of about ``rows`` rows that never split a query."""
    total = int(offsets[-1])
    if total == 0:
        return []
    targets = np.arange(rows, total, rows, dtype=np.int64)
    cuts = np.unique(offsets[np.searchsorted(offsets, targets)])
    edges = np.unique(np.concatenate([[0], cuts, [total]]))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def join(
    run_bytes: StringBytes,
    run_query: Ints,
    run_blocks: list[tuple[int, int]],
    index: HashIndex,
) -> tuple[Ints, list[int]]:
    """Probe every run row's key; returns the indexed position per row (-1: absent) and the
    keys that repeat within a block (candidate duplicate docs, to be checked by the caller)."""
    found = np.empty(run_query.shape[0], dtype=np.int64)
    repeated: list[int] = []

    def work(bounds: tuple[int, int]) -> list[int]:
        lo, hi = bounds
        keys = run_bytes.keys(lo, hi, run_query[lo:hi])
        found[lo:hi] = index.lookup(keys)
        ordered = np.sort(keys)
        same = ordered[1:][ordered[1:] == ordered[:-1]]
        return [int(x) for x in np.unique(same).tolist()]

    workers = min(len(run_blocks), os.cpu_count() or 1)
    if workers <= 1:
        results = [work(b) for b in run_blocks]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(work, run_blocks))
    for r in results:
        repeated.extend(r)
    return found, repeated
