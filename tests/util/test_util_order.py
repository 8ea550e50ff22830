from __future__ import annotations

from rankscope.util.order import natural_key


def test_numbers_by_value_then_text() -> None:
    ids = ["10", "q1", "2", "", "1", "q10", "02", "q2"]
    assert sorted(ids, key=natural_key) == ["1", "2", "02", "10", "", "q1", "q10", "q2"]


def test_digits_that_are_not_ascii_are_text() -> None:
    # "²".isdigit() is True but int("²") fails; "١٢" (Arabic-Indic) is not a number here either
    ids = ["3", "²", "١٢", "1"]
    assert sorted(ids, key=natural_key) == ["1", "3", "²", "١٢"]


def test_numbers_longer_than_int_reads() -> None:
    big, bigger = "9" * 10_000, "1" + "0" * 10_000  # int() refuses more than 4,300 digits
    assert sorted([bigger, "q", big, "1", "0", "00"], key=natural_key) == [
        "0", "00", "1", big, bigger, "q",
    ]  # fmt: skip
