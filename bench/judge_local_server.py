"""Judging against a server that answers one request at a time (llama.cpp with one slot).

The loopback LLM server (rankscope.testing.llm_server) is started with ``slots=1`` and answers
every request after ``--answer-s`` seconds; the other requests wait in its queue, and that wait
counts against the client's timeout, as with llama.cpp. ``rankscope judge`` runs over a pool of
``--pairs`` pairs three ways, each in its own process and with its own cache: ``--concurrency
4`` with adaptive concurrency off (the behaviour before), the same with it on (the default),
and ``--concurrency 1``. Printed: wall time, requests the server received, answers thrown away
(the client had given up), pairs that failed, and the lowest concurrency reached.

    python bench/judge_local_server.py --pairs 40 --answer-s 0.5 --timeout-s 1.5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rankscope.testing.llm_server import Hang, Reply, ScriptedLLMServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--answer-s", type=float, default=0.5)
    parser.add_argument("--timeout-s", type=float, default=1.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pool = root / "pool.jsonl"
        with pool.open("w") as f:
            for i in range(args.pairs):
                rec = {"query_id": str(i % 5), "query": f"q{i % 5}", "doc_id": f"d{i}",
                       "text": f"passage {i}"}  # fmt: skip
                f.write(json.dumps(rec) + "\n")
        print(f"nproc={os.cpu_count()} pairs={args.pairs} answer={args.answer_s}s "
              f"timeout={args.timeout_s}s, server slots=1")  # fmt: skip
        print("| run | wall s | requests | answers thrown away | failed pairs | lowest |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, concurrency, adaptive in (
            ("concurrency 4, fixed", 4, False),
            ("concurrency 4, adaptive", 4, True),
            ("concurrency 1", 1, True),
        ):
            config = root / f"{name}.yaml"
            config.write_text(
                f"timeout_s: {args.timeout_s}\nmax_retries: 5\nbackoff_base_s: 0.05\n"
                f"backoff_max_s: 0.2\nadaptive_concurrency: {str(adaptive).lower()}\n"
            )
            out = root / name.replace(" ", "_").replace(",", "")
            reply = Hang(args.answer_s, Reply("##final score: 1"))
            # r=reply binds this iteration's reply (mypy cannot infer a lambda with a default)
            with ScriptedLLMServer(lambda req, r=reply: r, slots=1) as server:  # type: ignore[misc]
                started = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "rankscope", "judge", str(pool), "--provider",
                     "openai", "--model", "local", "--base-url", server.openai_base_url,
                     "--config", str(config), "--concurrency", str(concurrency),
                     "--cache-path", str(out / "cache.sqlite"), "--out", str(out)],
                    env={**os.environ, "OPENAI_API_KEY": "x"}, capture_output=True, check=False,
                )  # fmt: skip
                wall = time.perf_counter() - started
                requests = server.request_count
                lost = sum(1 for r in server.requests if r.outcome != "answered")
            summary = json.loads((out / "summary.json").read_text())
            print(f"| {name} | {wall:.1f} | {requests} | {lost} | {len(summary['failed'])} | "
                  f"{summary['concurrency_lowest']} |")  # fmt: skip


if __name__ == "__main__":
    main()
