"""``rankscope trec_eval``: a drop-in for NIST's ``trec_eval`` 10 binary.

Takes trec_eval's own options (parsed the way its ``getopt_long`` does, so ``-M100`` and
``-M 100`` both work and options may follow the file names) and prints byte-identical output
for the standard qrels/results formats.  Input that trec_eval refuses (malformed lines, empty
files, duplicate documents in an evaluated query) is refused with a message naming file and
line, and the exit status trec_eval gives it (1: usage or unknown measure; 2: unreadable input
or measure parameters; 4: a duplicate document or no query to evaluate; 7: no query left by
``-D``; 255: unreadable ``-Z`` file).  Input it silently accepts (scores such as ``abc`` or
``nan``, read with C ``atof``; bytes that are not UTF-8 where it never looks) is accepted, the
odd scores with a warning on standard error.
"""

from __future__ import annotations

import getopt
import sys
from typing import IO, TYPE_CHECKING

from rankscope import __version__
from rankscope.errors import DuplicateError, InputError, RankscopeError

if TYPE_CHECKING:
    import typer

# What a command runs on is imported inside it, and typer only in register(): rankscope
# trec_eval runs without it (cli/app.py's main calls run_trec_eval directly).

TREC_EVAL_VERSION = "10.0-rc3"

_SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
_LONG = [
    "help",
    "version",
    "query_eval_wanted",
    "measure=",
    "complete_rel_info_wanted",
    "level_for_rel=",
    "nosummary",
    "Debug_level=",
    "Judged_docs_only",
    "Number_docs_in_coll=",
    "Max_retrieved_per_topic=",
    "Rel_info_format=",
    "Results_format=",
    "Output_old_results_format",
    "Zscore=",
]

USAGE = """Usage: rankscope trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_trec' prints all measures, '-m official' is default)
"""

HELP = """rankscope trec_eval [-h] [-v] [-q] [-m measure[.params]]* [-c] [-n] [-l <num>]
   [-D debug_level[.qid]] [-N <num>] [-M <num>] [-J] [-R qrels] [-T trec_results]
   [-Z zscore_file] rel_info_file results_file

Evaluates results_file against rel_info_file exactly as trec_eval 10 does (same
measures, options and output).  If results_file is '-', it is read from stdin.

 -h, --help: print this message.
 -v, --version: print the trec_eval version this command reproduces.
 -q, --query_eval_wanted: also print each query's values.
 -m, --measure name[.params]: add a measure (repeatable).  Names: any trec_eval
     measure (map, P.5,10, ndcg_cut.10, ndcg.1=3,2=9, iprec_at_recall..1,.5, ...)
     or a set: official (default), all_trec, set.
 -c, --complete_rel_info_wanted: average over every query of the qrels; queries
     missing from the results count as empty rankings.
 -l, --level_for_rel num: lowest judgment value counted relevant (default 1).
 -n, --nosummary: no summary ("all") lines.
 -D, --Debug_level num[.qid]: with .qid, evaluate only that query (debug traces
     themselves are not printed).
 -N, --Number_docs_in_coll num: collection size (used by utility).
 -M, --Max_retrieved_per_topic num: keep only the top num documents per query.
 -J, --Judged_docs_only: drop unjudged documents before evaluating.
 -R, --Rel_info_format qrels: only the standard qrels format is read.
 -T, --Results_format trec_results: only the standard results format is read.
 -Z, --Zscore file: print z-scores using 'qid measure mean stddev' lines of file.
 -o: accepted and ignored (obsolete in trec_eval too).
"""


def _parse_int(text: str) -> int:
    from rankscope.data.numbers import c_atol  # trec_eval reads numbers with atol

    return c_atol(text)


def run_trec_eval(argv: list[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Run with trec_eval's arguments; returns trec_eval's exit status for the outcome.

    Output goes to ``stdout.buffer`` when there is one (trec_eval's bytes, ids that are not
    UTF-8 included), else to ``stdout`` as text with surrogate escapes.
    """
    from rankscope.metrics.trec_eval import exit_status

    try:
        return _run(argv, stdout, stderr)
    except RankscopeError as error:
        stderr.write(f"rankscope trec_eval: error: {error}\n")
        return exit_status(error)


def _run(argv: list[str], stdout: IO[str], stderr: IO[str]) -> int:
    try:
        opts, args = getopt.gnu_getopt(argv, _SHORT, _LONG)
    except getopt.GetoptError as error:
        stderr.write(f"rankscope trec_eval: {error.msg}\n{USAGE}")
        return 1
    measures: list[str] = []
    per_query = False
    average_over_qrels = False
    summary = True
    judged_only = False
    rel_level = 1
    depth: int | None = None
    num_docs = 0
    zscore_file: str | None = None
    debug_query: str | None = None
    rel_format, results_format = "qrels", "trec_results"
    for opt, value in opts:
        if opt in ("-h", "--help"):
            stdout.write(HELP)
            return 0
        if opt in ("-v", "--version"):
            stderr.write(f"trec_eval version {TREC_EVAL_VERSION} (rankscope {__version__})\n")
            return 0
        if opt in ("-q", "--query_eval_wanted"):
            per_query = True
        elif opt in ("-m", "--measure"):
            measures.append(value)
        elif opt in ("-c", "--complete_rel_info_wanted"):
            average_over_qrels = True
        elif opt in ("-l", "--level_for_rel"):
            rel_level = _parse_int(value)
        elif opt in ("-n", "--nosummary"):
            summary = False
        elif opt in ("-D", "--Debug_level"):
            level, dot, qid = value.partition(".")
            debug_query = qid if dot else None
            if _parse_int(level) > 0:
                stderr.write("rankscope trec_eval: warning: debug traces are not printed\n")
        elif opt in ("-J", "--Judged_docs_only"):
            judged_only = True
        elif opt in ("-N", "--Number_docs_in_coll"):
            num_docs = _parse_int(value)
        elif opt in ("-M", "--Max_retrieved_per_topic"):
            depth = _parse_int(value)
        elif opt in ("-R", "--Rel_info_format"):
            rel_format = value
        elif opt in ("-T", "--Results_format"):
            results_format = value
        elif opt in ("-Z", "--Zscore"):
            zscore_file = value
        # -o / --Output_old_results_format: obsolete, no effect (as in trec_eval 10)
    if len(args) != 2:
        stderr.write(USAGE)
        return 1
    qrels_path, run_path = args

    from rankscope.data.trec import read_trec_qrels, read_trec_run
    from rankscope.metrics.trec_eval import (
        needs_judgments,
        parse_trec_measures,
        read_zscores,
        trec_measures,
    )

    columns = parse_trec_measures(measures)  # an unknown name exits 1 before reading files
    if rel_format not in ("qrels", "trec"):
        raise InputError(
            f"rel_info format {rel_format!r} is not supported",
            hint="Only standard qrels files are read ('-R qrels', the default); "
            "preference and multi-judgment formats are not",
        )
    if results_format not in ("trec_results", "trec"):
        raise InputError(
            f"results format {results_format!r} is not supported",
            hint="Only standard TREC results files are read ('-T trec_results')",
        )

    def warn(message: str) -> None:
        stderr.write(f"rankscope trec_eval: warning: {message}\n")

    # trec_eval reads both files before it evaluates: a judgment repeated in the qrels
    # (status 4, found while evaluating) comes after a malformed results file (status 2)
    # (and notices it only for measures that read the judgments: not runid or num_q)
    repeated = not needs_judgments(columns)
    try:
        qrels = read_trec_qrels(qrels_path, strict=False, warn=warn, keep_first=repeated)
    except DuplicateError as error:
        qrels_error: DuplicateError | None = error
    else:
        qrels_error = None
    source = sys.stdin.buffer if run_path == "-" else run_path
    run = read_trec_run(source, name=None, strict=False, warn=warn, keep_duplicates=True)
    if qrels_error is not None:
        raise qrels_error
    evaluation = trec_measures(
        qrels,
        run,
        columns,
        depth=depth,
        rel_level=rel_level,
        judged_only=judged_only,
        average_over_qrels=average_over_qrels,
        num_docs_in_coll=num_docs,
        zscores=read_zscores(zscore_file) if zscore_file is not None else None,
        only_query=debug_query,
    )
    text = evaluation.format(per_query=per_query, summary=summary)
    raw = getattr(stdout, "buffer", None)
    if raw is not None:
        stdout.flush()
        raw.write(text.encode("utf-8", "surrogateescape"))
        raw.flush()
    else:
        stdout.write(text)
    stdout.flush()
    return 0


def register(app: typer.Typer) -> None:
    import typer

    def trec_eval_command(ctx: typer.Context) -> None:
        status = run_trec_eval(list(ctx.args), sys.stdout, sys.stderr)
        if status:
            raise typer.Exit(status)

    # typer reads the annotation to pass the context; typer is no global of this module
    trec_eval_command.__annotations__ = {"ctx": typer.Context, "return": None}
    app.command(
        "trec_eval",
        context_settings={
            "allow_extra_args": True,
            "ignore_unknown_options": True,
            "allow_interspersed_args": False,
            "help_option_names": [],
        },
        add_help_option=False,
        help="A drop-in for trec_eval 10: same options, byte-identical output (-h for help).",
    )(trec_eval_command)
