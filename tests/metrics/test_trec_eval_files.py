"""Byte-for-byte agreement with trec_eval 10's own test outputs, through the library and the CLI."""

from __future__ import annotations

import pytest

from prerequisites import shared_data, shared_data_root
from rankscope.cli.app import main
from rankscope.data import read_qrels, read_run
from rankscope.metrics.trec_eval import read_zscores, trec_measures

DATA = shared_data_root() / "trec_eval_test"  # checked by the autouse fixture below


@pytest.fixture(autouse=True)
def _trec_eval_data() -> None:
    shared_data("trec_eval_test", "out.test")


# expected output, trec_eval flags, qrels, run  (from the README / Makefile of trec_eval)
CASES = [
    ("out.test", [], "qrels.test", "results.test"),
    ("out.test", [], "qrels.test.with-comments", "results.test"),
    ("out.comment.test", [], "qrels.comment.test", "results.comment.test"),
    ("out.test.a", ["-m", "all_trec"], "qrels.test", "results.test"),
    ("out.test.aq", ["-m", "all_trec", "-q"], "qrels.test", "results.test"),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c"], "qrels.test", "results.trunc"),
    ("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100"], "qrels.test", "results.trunc"),
    (
        "out.test.aql",
        ["-m", "all_trec", "-mrelstring.20", "-q", "-l2"],
        "qrels.rel_level",
        "results.test",
    ),
    (
        "out.test.meas_params",
        [
            "-q",
            "-m", "iprec_at_recall..10,.20,.25,.75,.50",
            "-m", "P.5,7,3",
            "-m", "recall.20,2000",
            "-m", "Rprec_mult.5.0,0.2,0.35",
            "-m", "utility.2,-1,0,0",
            "-m", "11pt_avg..25,.5,.75",
            "-m", "ndcg.1=3,2=9,4=4.5",
            "-m", "ndcg_cut.10,20,23.4",
            "-m", "success.2,5,20",
        ],
        "qrels.test",
        "results.test",
    ),
    ("out.test.aqZ", ["-q", "-m", "all_trec", "-Z", "zscores_file"], "qrels.test", "results.test"),
]  # fmt: skip
IDS = [f"{c[0]}:{c[2]}" for c in CASES]


def _library_args(flags: list[str]) -> tuple[list[str], dict[str, object], bool]:
    """Translate trec_eval flags into trec_measures() arguments (the cases above only)."""
    specs: list[str] = []
    kwargs: dict[str, object] = {}
    per_query = False
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag == "-m":
            specs.append(flags[i + 1])
            i += 1
        elif flag.startswith("-m"):
            specs.append(flag[2:])
        elif flag == "-q":
            per_query = True
        elif flag == "-c":
            kwargs["average_over_qrels"] = True
        elif flag.startswith("-M"):
            kwargs["depth"] = int(flag[2:])
        elif flag.startswith("-l"):
            kwargs["rel_level"] = int(flag[2:])
        elif flag == "-Z":
            kwargs["zscores"] = read_zscores(str(DATA / flags[i + 1]))
            i += 1
        i += 1
    return specs or ["official"], kwargs, per_query


@pytest.mark.parametrize(("expected", "flags", "qrels", "run"), CASES, ids=IDS)
def test_trec_library_matches_trec_eval(
    expected: str, flags: list[str], qrels: str, run: str
) -> None:
    specs, kwargs, per_query = _library_args(flags)
    q = read_qrels(DATA / qrels, format="trec", strict=False, on_warning=lambda m: None)
    r = read_run(DATA / run, format="trec", strict=False, on_warning=lambda m: None)
    evaluation = trec_measures(q, r, specs, **kwargs)  # type: ignore[arg-type]
    assert evaluation.format(per_query=per_query) == (DATA / expected).read_text()


@pytest.mark.parametrize(("expected", "flags", "qrels", "run"), CASES, ids=IDS)
def test_trec_cli_matches_trec_eval(
    expected: str,
    flags: list[str],
    qrels: str,
    run: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [str(DATA / a) if a == "zscores_file" else a for a in flags]
    status = main(["trec_eval", *args, str(DATA / qrels), str(DATA / run)])
    out = capsys.readouterr().out
    assert status == 0
    assert out == (DATA / expected).read_text()


def test_trec_cli_options_after_files_and_separate_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = [str(DATA / "qrels.test"), str(DATA / "results.trunc")]
    status = main(["trec_eval", *files, "-q", "-c", "-m", "all_trec", "-M", "100"])
    assert status == 0
    assert capsys.readouterr().out == (DATA / "out.test.aqcM").read_text()


def test_trec_cli_summary_off(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["trec_eval", "-q", "-n", "-m", "map", str(DATA / "qrels.test"), str(DATA / "results.test")]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert out.splitlines() == [
        line
        for line in (DATA / "out.test.aq").read_text().splitlines()
        if line.startswith("map ") and "\tall\t" not in line
    ]
