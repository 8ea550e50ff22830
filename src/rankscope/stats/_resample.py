"""Seeded resampling kernels: sign flips, bootstrap weights, within-query permutations.

Determinism: every procedure draws from its own stream, ``PCG64(SeedSequence(seed,
spawn_key=(stream,)))``, and consumes it in an order that does not depend on how the work is
split into chunks (raw 64-bit words for sign flips, 64-bit bounded integers for bootstrap
indices, ``Generator.permuted`` along one axis for permutations: numpy continues each of these
streams identically whether it is asked for one large block or several small ones). Chunks only
bound memory, so a p-value depends on the data, the seed and the number of draws, never on the
machine's thread count or memory. The one floating-point step that BLAS may thread (sums of
sign-flipped differences) is compared with a tolerance far above its rounding error.

Sign flips for several pairs of systems share the same draws: the p-value of A vs B is the same
whether A and B are compared alone or among many systems.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError

STREAM_SIGNS = 1
STREAM_BOOTSTRAP = 2
STREAM_PERMUTE = 3

# Elements of float64 scratch per chunk (8 MiB): bounds memory whatever B and n are.
_CHUNK_ELEMENTS = 1 << 20


def generator(seed: int, stream: int) -> np.random.Generator:
    """The generator of one procedure (``stream``) for ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError("seed must be a non-negative integer", value=seed)
    sequence = np.random.SeedSequence(int(seed), spawn_key=(stream,))
    return np.random.Generator(np.random.PCG64(sequence))


def _rows_per_chunk(width: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(1, width))


def all_sign_sums(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sum(s_i * values_i)`` for every one of the ``2**len(values)`` sign vectors."""
    sums = np.zeros(1, dtype=np.float64)
    for v in values.tolist():
        sums = np.concatenate((sums + v, sums - v))
    return sums


def exact_sign_flip_count(d: NDArray[np.float64], threshold: float) -> int:
    """How many of the ``2**n`` sign vectors give ``|sum(s_i d_i)| >= threshold``.

    Meet in the middle: the sums of each half are enumerated (``2**(n/2)`` each) and the pairs
    reaching the threshold are counted by binary search, so n = 30 costs milliseconds.
    """
    n = d.size
    if threshold <= 0.0:
        return 1 << n
    half = n // 2
    left = all_sign_sums(d[:half])
    right = np.sort(all_sign_sums(d[half:]))
    upper = right.size - np.searchsorted(right, threshold - left, side="left")
    lower = np.searchsorted(right, -threshold - left, side="right")
    return int(upper.sum() + lower.sum())


def sign_flip_counts(
    d: NDArray[np.float64], thresholds: NDArray[np.float64], resamples: int, seed: int
) -> NDArray[np.int64]:
    """For each column ``k`` of ``d`` (queries × pairs): how many of ``resamples`` random sign
    vectors give ``|sum(s_i d_ik)| >= thresholds[k]``. Every column sees the same signs."""
    n, k = d.shape
    rng = generator(seed, STREAM_SIGNS)
    words = (n + 63) // 64
    counts = np.zeros(k, dtype=np.int64)
    step = _rows_per_chunk(n)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        raw = rng.bit_generator.random_raw(rows * words).astype("<u8", copy=False)
        bits = np.unpackbits(
            raw.view(np.uint8).reshape(rows, words * 8), axis=1, count=n, bitorder="little"
        )
        signs = bits.astype(np.float64)
        signs *= 2.0
        signs -= 1.0
        sums = signs @ d
        counts += (np.abs(sums) >= thresholds).sum(axis=0)
    return counts


def bootstrap_moments(
    y: NDArray[np.float64], resamples: int, seed: int, *, variances: bool = False
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Bootstrap means of each column of ``y`` (queries × k), one row per resample
    (``resamples × k``), and with ``variances`` each resample's variance around its own mean
    (divided by n). A resample draws n queries with replacement; every column sees the same
    resamples (queries stay paired across systems).

    Each resample is a row of weights (how often each query was drawn, counted row by row so
    the counts stay in cache), and matrix products give the weighted sums of ``y`` and of
    ``y²``: the variance is ``(Σ w y² - n m²) / n``. That difference cancels when the mean
    dominates the spread (``n m² > Σ w y² / 2``; it left about 1e-18 instead of 0 for a
    resample whose values are all equal): such rows are summed again from squared deviations
    (two passes). Elsewhere it is within a few ``eps`` of the two-pass value; the test
    statistics are compared with a tolerance of ``100 eps``.
    """
    n, k = y.shape
    rng = generator(seed, STREAM_BOOTSTRAP)
    means = np.empty((resamples, k), dtype=np.float64)
    spread = np.empty((resamples, k), dtype=np.float64) if variances else None
    y2 = y * y
    step = _rows_per_chunk(n)
    weights = np.empty((min(step, resamples), n), dtype=np.float64)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        picks = rng.integers(0, n, size=(rows, n), dtype=np.int64)
        w = weights[:rows]
        for r in range(rows):
            w[r] = np.bincount(picks[r], minlength=n)
        block = (w @ y) / n
        means[start : start + rows] = block
        if spread is None:
            continue
        squares = w @ y2
        deviations_sum = squares - n * block * block
        rough = n * block * block > squares / 2.0
        spread[start : start + rows] = np.maximum(deviations_sum, 0.0) / n
        for r, j in zip(*np.nonzero(rough), strict=True):
            deviations = y[:, j] - block[r, j]
            deviations *= deviations
            deviations *= w[r]
            spread[start + r, j] = deviations.sum() / n
    return means, spread


def permuted_ranges(x: NDArray[np.float64], resamples: int, seed: int) -> NDArray[np.float64]:
    """Randomised Tukey HSD's null distribution: for each draw, every query's column of ``x``
    (systems × queries) is permuted across systems independently, and the statistic is the
    largest minus the smallest system total (``n`` times max mean - min mean)."""
    m, n = x.shape
    rng = generator(seed, STREAM_PERMUTE)
    step = _rows_per_chunk(m * n)
    out = np.empty(resamples, dtype=np.float64)
    scratch = np.empty((m, min(step, resamples), n), dtype=np.float64)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        block = scratch[:, :rows]
        block[...] = x[:, None, :]
        rng.permuted(block, axis=0, out=block)
        totals = block.sum(axis=2)
        out[start : start + rows] = totals.max(axis=0) - totals.min(axis=0)
    return out
