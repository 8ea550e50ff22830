"""The recorded benchmark results (bench/*.md) name repository-relative paths only."""

from __future__ import annotations

import re
from pathlib import Path


def test_benchmark_records_name_no_absolute_paths() -> None:
    root = Path(__file__).resolve().parents[2]
    for record in sorted((root / "bench").glob("*.md")):
        found = re.findall(
            r"(?<![\w.~])/(?:work|home|root|tmp|Users|mnt|opt)/\S*", record.read_text()
        )
        assert not found, f"{record.name} names absolute paths: {found}"
