"""docs/judging.md's offline example of judging with your own model: it runs as written, from a
copy of examples/, and a local server's cost is unknown, not a provider's list price."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "judging.md"


def test_the_local_model_example_runs_and_reports_no_list_price(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("#### Your own model, step by step") :]
    [code] = re.findall(r"^```python\n(.*?)^```", section, re.M | re.S)[:1]
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "RANKSCOPE_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("RANKSCOPE_JUDGE_CONFIG", None)
    env.pop("OPENAI_API_KEY", None)  # a local server needs none
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "labels: 2: 20\n" in done.stdout
    assert (
        "tokens: 6379 in + 80 out; cost unknown (no price for this model: "
        "--price-in/--price-out, or the judge config)\n" in done.stdout
    )
    assert (tmp_path / "rankscope-out/local/judged/qrels.txt").read_text().count("\n") == 20
