"""Time-ordered identifiers: UUID version 7 (RFC 9562).

A version 7 UUID starts with the Unix time in milliseconds (48 bits), then the version and
variant bits and 74 random bits. Rows keyed by such ids are inserted at the end of the
primary-key index instead of at random places in it: with random (version 4) ids every batch
of 1,000 records rewrote about a thousand index pages once the table outgrew the cache, and
the insert cost grew with the table (bench/RESULTS.md, "Time-ordered ids"). The 74 random bits
keep ids unguessable enough for what they are (row keys; access is checked per user anyway)
and make a collision within one millisecond negligible.
"""

from __future__ import annotations

import os
import time
import uuid

_RAND_B_MASK = (1 << 62) - 1
_VERSION = 7 << 76
_VARIANT = 0b10 << 62  # RFC 9562 (and 4122) variant


def uuid7s(n: int) -> list[uuid.UUID]:
    """``n`` version 7 UUIDs of the current millisecond, in increasing order (so that one
    batch's rows are appended in order), from one read of the system's random source."""
    prefix = (time.time_ns() // 1_000_000) << 80 | _VERSION
    raw = os.urandom(10 * n)
    randoms = sorted(int.from_bytes(raw[10 * i : 10 * i + 10], "big") >> 6 for i in range(n))
    return [
        uuid.UUID(int=prefix | (r >> 62) << 64 | _VARIANT | (r & _RAND_B_MASK)) for r in randoms
    ]


def uuid7() -> uuid.UUID:
    """One version 7 UUID."""
    return uuid7s(1)[0]


__all__ = ["uuid7", "uuid7s"]
