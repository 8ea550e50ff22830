"""Property tests: generated runs and qrels survive TREC files; fast and exact paths agree."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankscope.data import Qrels, Run, read_run, write_run
from rankscope.data._source import Loaded, Warner, Where
from rankscope.data.trec import _fast_columns, read_trec_qrels, read_trec_run

ID_CHARS = st.characters(
    blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), blacklist_characters="\x85"
)
# a leading "#" makes a comment line, and a leading U+FEFF on a file's first line is read as a
# byte-order mark (skipped, with a warning), as trec_eval users expect
ids = st.text(ID_CHARS, min_size=1, max_size=6).filter(lambda s: not s.startswith(("#", "\ufeff")))
scores = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 1e-300]),
    st.floats(allow_nan=False, allow_infinity=False),
)
runs = st.dictionaries(ids, st.dictionaries(ids, scores, min_size=1, max_size=8), min_size=1)
grades = st.integers(min_value=-2, max_value=4)
qrels_dicts = st.dictionaries(ids, st.dictionaries(ids, grades, min_size=1, max_size=8), min_size=1)
SEPARATORS = [" ", "\t", "  ", " \t ", "\t\t"]


def _loaded(text: str) -> Loaded:
    return Loaded(Where("gen.txt"), text.encode("utf-8"), None)


def _run_text(data: dict[str, dict[str, float]], seed: int, junk: bool) -> str:
    rng = random.Random(seed)
    lines = []
    for q, docs in data.items():
        for rank, (d, s) in enumerate(docs.items(), 1):
            sep = rng.choice(SEPARATORS) if seed % 2 else " "
            fields = [q, "Q0", d, str(rank), repr(s), "gen"] + (["x", "y"] if junk else [])
            lines.append(sep.join(fields))
    if seed % 3 == 0:
        rng.shuffle(lines)  # interleaved queries, ranks out of order
    return "\n".join(lines) + ("\n" if seed % 5 else "")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=runs, seed=st.integers(0, 10_000), junk=st.booleans())
def test_trec_text_reads_back_as_the_dict_run(
    data: dict[str, dict[str, float]], seed: int, junk: bool, same_run: Callable[..., None]
) -> None:
    expected = Run.from_dict(data, name="gen")
    text = _run_text(data, seed, junk)
    exact = read_trec_run(_loaded(text), name=None, strict=True, warn=Warner(None), fast=False)
    fast = read_trec_run(_loaded(text), name=None, strict=True, warn=Warner(None), fast=True)
    same_run(exact, expected)
    same_run(fast, expected)
    if seed % 2 == 0 and not junk:  # single-space files must take the pyarrow path
        assert _fast_columns(_loaded(text), 6) is not None


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=qrels_dicts, seed=st.integers(0, 10_000))
def test_trec_qrels_read_back(
    data: dict[str, dict[str, int]], seed: int, same_qrels: Callable[..., None]
) -> None:
    rng = random.Random(seed)
    lines = [
        rng.choice(SEPARATORS).join([q, "0", d, str(g)])
        for q, docs in data.items()
        for d, g in docs.items()
    ]
    rng.shuffle(lines)
    text = "\n".join(lines) + "\n"
    expected = Qrels.from_dict(data)
    for fast in (False, True):
        got = read_trec_qrels(_loaded(text), strict=True, warn=Warner(None), fast=fast)
        same_qrels(got, expected)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=runs)
def test_written_files_read_back(
    data: dict[str, dict[str, float]], tmp_path: Path, same_run: Callable[..., None]
) -> None:
    run = Run.from_dict(data, name="gen")
    for name in ("r.txt", "r.parquet", "r.jsonl", "r.csv"):
        same_run(read_run(write_run(run, tmp_path / name)), run)
