"""One settings object for the environment (rankscope.config), documented in the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rankscope.config import VARIABLES, Environment, environment
from rankscope.engines.embeddings import EmbeddingCache
from rankscope.judge.cache import default_cache_path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rankscope"


def test_cache_dir_precedence() -> None:
    home = Path.home()
    assert Environment.read({}).cache_dir == home / ".cache" / "rankscope"
    assert Environment.read({"XDG_CACHE_HOME": "/x"}).cache_dir == Path("/x/rankscope")
    given = {"RANKSCOPE_CACHE_DIR": "~/c", "XDG_CACHE_HOME": "/x"}
    assert Environment.read(given).cache_dir == home / "c"
    # an empty variable counts as unset
    assert Environment.read({"RANKSCOPE_CACHE_DIR": "", "XDG_CACHE_HOME": ""}).cache_dir == (
        home / ".cache" / "rankscope"
    )


def test_values_and_unset() -> None:
    env = Environment.read(
        {
            "RANKSCOPE_PG_DSN": "dbname=x",
            "RANKSCOPE_JUDGE_CONFIG": "j.toml",
            "RANKSCOPE_PG_BINDIR": "/usr/lib/postgresql/16/bin",
        }
    )
    assert env.pg_dsn == "dbname=x" and env.judge_config == Path("j.toml")
    assert env.pg_bindir == Path("/usr/lib/postgresql/16/bin")
    empty = Environment.read({"RANKSCOPE_PG_DSN": ""})
    assert empty.pg_dsn is None and empty.judge_config is None and empty.pg_bindir is None


def test_embedding_and_judgment_caches_share_one_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # they used to fall back differently: $XDG_CACHE_HOME for judgments, ~/.cache for vectors
    monkeypatch.delenv("RANKSCOPE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "rankscope"
    assert environment().cache_dir == folder
    assert default_cache_path() == folder / "judgments.sqlite"
    assert EmbeddingCache().path == folder / "embeddings.sqlite"
    monkeypatch.setenv("RANKSCOPE_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_path().parent == EmbeddingCache().path.parent == tmp_path / "c"


def test_every_variable_src_reads_is_in_the_settings_object_and_the_readme() -> None:
    named: set[str] = set()
    for path in SRC.rglob("*.py"):
        if (SRC / "service") in path.parents:
            continue  # the service's own settings object: RANKSCOPE_SERVE_*
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r"RANKSCOPE_[A-Z_]*[A-Z]", text))
        if path.name != "config.py":
            reads = re.findall(r"(?:environ(?:\.get)?|getenv)\(\s*[\"']RANKSCOPE_", text)
            reads += re.findall(r"environ\[\s*[\"']RANKSCOPE_", text)
            assert not reads, f"{path} reads a RANKSCOPE_ variable itself: use rankscope.config"
    # the service's variables and those of the test suite (read in tests/) aside
    own = {n for n in named if not n.startswith(("RANKSCOPE_SERVE", "RANKSCOPE_TEST_"))}
    assert own <= set(VARIABLES)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in VARIABLES:
        assert f"| `{name}` |" in readme, f"{name} is missing from the README's table"
