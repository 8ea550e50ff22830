"""An open-addressing hash index of 64-bit (query, doc) fingerprints, built and probed with numpy.

Joining ten million ranked rows to their qrels through pyarrow's dictionary kernels costs about
a second; probing an index of the qrels fingerprints (:mod:`rankscope.data.fingerprints`) in
cache-sized blocks spread over threads (numpy releases the GIL) costs a fraction of that.  A
fingerprint can collide, so callers verify every match against the real strings and fall back
to an exact path when a collision shows up (with 64-bit keys that essentially never happens).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

U64 = NDArray[np.uint64]
Ints = NDArray[np.int64]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
BLOCK_ROWS = 1 << 18


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
