"""The one loader of ``module:function`` references (python engine, needle pipelines)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rankscope.callables import load_function
from rankscope.errors import ConfigError


def test_loads_dotted_attributes_and_finds_modules_in_base_dir(tmp_path: Path) -> None:
    (tmp_path / "my_retriever_mod.py").write_text(
        "class R:\n    @staticmethod\n    def go(q, k):\n        return [q] * k\n"
    )
    fn = load_function("my_retriever_mod:R.go", "--pipeline", base_dir=tmp_path)
    assert fn("x", 2) == ["x", "x"]
    assert str(tmp_path.resolve()) not in sys.path  # the search path is restored
    sys.modules.pop("my_retriever_mod", None)
    with pytest.raises(ConfigError, match=r"--pipeline: cannot import module 'my_retriever_mod'"):
        load_function("my_retriever_mod:R.go", "--pipeline")


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no_colon", "--pipeline must be 'module:function'"),
        ("a:b:c", "must be 'module:function'"),
        (3, "must be 'module:function'"),
        ("json:nope", "--pipeline: module 'json' has no 'nope'"),
        ("json:__doc__", "--pipeline: 'json:__doc__' is not callable"),
    ],
)
def test_bad_references_are_config_errors(ref: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_function(ref, "--pipeline")
