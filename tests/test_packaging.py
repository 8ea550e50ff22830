"""What the wheel holds and what its core install needs (pyproject.toml): the core is what
``rankscope eval``, ``compare`` and ``trec_eval`` need; the internal simulations and the
reference data stay in the source tree."""

from __future__ import annotations

import re
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the core install (distribution names); everything else is behind an extra
CORE = {"numpy", "pyarrow", "pydantic", "typer", "rich", "pyyaml", "scipy"}

#: rankscope.testing's internal simulations: in the source tree, not in the wheel
INTERNAL = ("traffic", "online_sim", "click_study")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    builder = pytest.importorskip("hatchling.builders.wheel", reason="pip install hatchling")
    out = tmp_path_factory.mktemp("wheel")
    built = list(builder.WheelBuilder(str(ROOT)).build(directory=str(out), versions=["standard"]))
    return zipfile.ZipFile(built[0])


def _requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return match.group(0).lower()


def test_the_core_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {_requirement_name(r) for r in project["dependencies"]} == CORE
    extras = project["optional-dependencies"]
    for extra in ("collect", "http", "serve"):  # what talks HTTP brings httpx
        assert "httpx" in {_requirement_name(r) for r in extras[extra]}, extra


def test_the_wheel_leaves_out_the_simulations_and_the_data(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for module in INTERNAL:
        assert f"rankscope/testing/{module}.py" not in names
        assert (ROOT / "src" / "rankscope" / "testing" / f"{module}.py").is_file()
    for module in ("llm_server", "es_server", "pgcluster", "typesense", "webhooks"):
        assert f"rankscope/testing/{module}.py" in names  # the test servers are public
    assert not [n for n in names if n.startswith(("data/", "tests/", "bench/"))]


def test_nothing_in_the_wheel_imports_a_simulation(wheel: zipfile.ZipFile) -> None:
    pattern = re.compile(r"^\s*(from|import) rankscope\.testing\.(" + "|".join(INTERNAL) + ")")
    found = [
        name
        for name in wheel.namelist()
        if name.endswith(".py") and not name.startswith("rankscope/testing/")
        for line in wheel.read(name).decode("utf-8").splitlines()
        if pattern.match(line)
    ]
    assert found == []


def test_the_wheel_registers_the_local_sender(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode("utf-8")
    assert "[rankscope.local_senders]\nsqlite = rankscope.service.ingest.local:LocalSender" in text
