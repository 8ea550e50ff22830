from __future__ import annotations

import pytest

from rankscope.errors import EngineError, RankscopeError
from rankscope.util.extras import import_extra, install_command, needs_extra


def test_the_message() -> None:
    assert install_command("faiss") == "pip install 'rankscope[faiss]'"
    assert needs_extra("engine 'faiss'", "the faiss-cpu package", "faiss") == (
        "engine 'faiss' needs the faiss-cpu package: pip install 'rankscope[faiss]'"
    )


def test_import_extra_returns_the_module_or_raises_the_error_asked_for() -> None:
    import json

    assert import_extra("json", "x", "y", "z") is json
    with pytest.raises(
        EngineError, match=r"^engine 'x' needs the x package: pip install 'rankscope\[x\]'$"
    ):
        import_extra("rankscope_no_such_module", "engine 'x'", "the x package", "x", EngineError)
    with pytest.raises(RankscopeError) as info:
        import_extra("rankscope_no_such_module.sub", "w", "n", "e")
    assert isinstance(info.value.__cause__, ImportError)


@pytest.mark.parametrize(
    ("engine", "package", "extra"),
    [
        ("faiss", "faiss-cpu", "faiss"),
        ("tantivy", "tantivy", "tantivy"),
        ("hnswlib", "hnswlib", "hnswlib"),
    ],
)
def test_engines_say_it_the_same_way(
    engine: str, package: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib
    import sys

    module = importlib.import_module(
        {"faiss": "rankscope.engines.faiss_index", "tantivy": "rankscope.engines.tantivy",
         "hnswlib": "rankscope.engines.hnswlib_index"}[engine]
    )  # fmt: skip
    monkeypatch.setitem(sys.modules, extra, None)  # an import of it raises ImportError
    loader = next(getattr(module, n) for n in dir(module) if n.startswith("_import_"))
    with pytest.raises(EngineError) as info:
        loader()
    assert str(info.value).startswith(
        f"engine '{engine}' needs the {package} package: pip install 'rankscope[{extra}]'"
    )
