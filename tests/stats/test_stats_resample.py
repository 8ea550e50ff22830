"""The resampling kernels against numpy's own draws."""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.errors import InputError
from rankscope.stats._resample import STREAM_BOOTSTRAP, BootstrapCounts, generator


@pytest.mark.parametrize(
    ("n", "resamples"),
    [
        (1, 5),
        (2, 50),
        (3, 50),  # odd: resamples end inside a 64-bit word
        (1000, 40),
        (90_013, 25),  # odd, and about 1.8 rejected draws per resample
        (1_000_003, 3),  # about 230 rejected draws per resample
    ],
)
def test_bootstrap_counts_are_numpys_bounded_integers(n: int, resamples: int) -> None:
    drawn = generator(11, STREAM_BOOTSTRAP).integers(0, n, size=(resamples, n), dtype=np.int64)
    counts = BootstrapCounts(generator(11, STREAM_BOOTSTRAP), n)
    for row in drawn:
        assert np.array_equal(counts.next(), np.bincount(row, minlength=n))


def test_bootstrap_counts_cover_rejected_draws() -> None:
    # the rejections the cases above rely on do occur in the words they consume
    n = 90_013
    words = generator(11, STREAM_BOOTSTRAP).bit_generator.random_raw(25 * n // 2)
    low = words.astype("<u8").view("<u4").astype(np.uint64) * n % (1 << 32)
    assert np.count_nonzero(low < ((1 << 32) - n) % n) >= 10


def test_bootstrap_counts_refuse_a_bound_numpy_draws_otherwise() -> None:
    with pytest.raises(InputError, match="2\\*\\*32 - 1 queries"):
        BootstrapCounts(generator(0, STREAM_BOOTSTRAP), 1 << 32)
