import time
import uuid

from rankscope.ids import uuid7, uuid7s


def test_uuid7s_are_distinct_increasing_version_7_uuids_of_now() -> None:
    before = time.time_ns() // 1_000_000
    ids = uuid7s(5000)
    after = time.time_ns() // 1_000_000
    assert len(set(ids)) == 5000
    assert ids == sorted(ids)
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in ids)
    assert all(before <= u.int >> 80 <= after for u in ids)
    # the text forms (stored as hex on SQLite) order as the ids do
    assert [u.hex for u in ids] == sorted(u.hex for u in ids)


def test_later_ids_sort_after_earlier_ones() -> None:
    first = uuid7()
    time.sleep(0.002)
    assert uuid7s(3)[0] > first
    assert uuid7s(0) == []


def test_random_bits_vary_within_one_millisecond() -> None:
    ids = uuid7s(64)
    randoms = {(u.int >> 64 & 0xFFF) << 62 | (u.int & ((1 << 62) - 1)) for u in ids}
    assert len(randoms) == 64
