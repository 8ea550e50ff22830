"""CONTRIBUTING.md's recipes hold: the measure recipe is followed, as written, on a copy of the
source (its code blocks inserted where its steps say), and the new measure then works from
``rankscope.evaluate`` and ``rankscope eval``; every file the three recipes name exists."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "CONTRIBUTING.md"
EXAMPLES = ROOT / "examples"

#: a step: an HTML comment naming the file and where, then the code block to put there
_STEP = re.compile(r"<!-- recipe: (\S+), ([^>]+?) -->\n```python\n(.*?)```", re.DOTALL)


def recipe_steps() -> list[tuple[str, str, str]]:
    """``(path, where, code)`` of each step of the measure recipe, in order."""
    return [(m[1], m[2], m[3]) for m in _STEP.finditer(GUIDE.read_text(encoding="utf-8"))]


def _insert(text: str, where: str, code: str) -> str:
    """``text`` with ``code`` put where a step says (the places the recipe names)."""
    lines = text.splitlines(keepends=True)
    if where == "at the end of FAMILIES":
        start = next(i for i, s in enumerate(lines) if s.startswith("FAMILIES:"))
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
        at = end - 1  # the line closing the tuple of entries, before the dict's "}"
        assert lines[at].strip() == ")", lines[at]
    elif where == "at the end of class ExtraKernel":
        start = next(i for i, s in enumerate(lines) if s.startswith("class ExtraKernel"))
        at = next(i for i in range(start + 1, len(lines)) if re.match(r"\S", lines[i]))
        while not lines[at - 1].strip():
            at -= 1
        code = "\n" + code
    elif where == "after the last _register line":
        at = max(i for i, s in enumerate(lines) if s.startswith("_register(")) + 1
    else:
        raise AssertionError(f"CONTRIBUTING.md names a place this test does not know: {where}")
    return "".join([*lines[:at], code, *lines[at:]])


def test_the_measure_recipe_has_its_three_steps() -> None:
    assert [(path, where) for path, where, _ in recipe_steps()] == [
        ("src/rankscope/metrics/names.py", "at the end of FAMILIES"),
        ("src/rankscope/metrics/extra.py", "at the end of class ExtraKernel"),
        ("src/rankscope/metrics/kernels.py", "after the last _register line"),
    ]


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of src/ with the measure recipe followed."""
    src = tmp_path_factory.mktemp("recipe") / "src"
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
    for path, where, code in recipe_steps():
        target = src / Path(path).relative_to("src")
        target.write_text(_insert(target.read_text(encoding="utf-8"), where, code), "utf-8")
    return src


def _run(src: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_new_measure_is_computed(followed: Path) -> None:
    # rel_ret@k is P@k times k for every query: checked against P@k, computed the old way
    code = (
        "import json, rankscope\n"
        f"r = rankscope.evaluate({str(EXAMPLES / 'qrels.txt')!r}, {str(EXAMPLES / 'bm25.run')!r},"
        " ['rel_ret@5', 'P@5', 'rel_ret@1000'])\n"
        "print(json.dumps(r.per_query(r.run_names[0])))"
    )
    per_query = json.loads(_run(followed, "-c", code).splitlines()[-1])
    assert len(per_query) == 10
    for values in per_query.values():
        assert values["rel_ret@5"] == pytest.approx(5 * values["P@5"], abs=1e-12)
        assert values["rel_ret@5"] == int(values["rel_ret@5"])
        assert values["rel_ret@1000"] >= values["rel_ret@5"]


def test_the_new_measure_works_from_the_command_line(followed: Path) -> None:
    out = _run(
        followed,
        "-m",
        "rankscope",
        "eval",
        str(EXAMPLES / "qrels.txt"),
        str(EXAMPLES / "bm25.run"),
        "-m",
        "rel_ret@5",
        "--format",
        "json",
    )
    assert "rel_ret@5" in json.loads(out)["runs"][0]["mean"]
    assert "rel_ret@10" in _run(followed, "-m", "rankscope", "measures")


def test_every_file_a_recipe_names_exists() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:src|tests|data|docs)/[^`<>*]+)`", text))
    named |= {f"docs/{m}" for m in re.findall(r"docs/([\w-]+\.md)", text)}
    assert len(named) > 20
    missing = sorted(p for p in named if not (ROOT / p.rstrip("/")).exists())
    assert missing == []
