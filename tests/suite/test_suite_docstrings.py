"""The standard-library docstring corpus: ids, fields, de-duplication, order and errors."""

from __future__ import annotations

import importlib
import inspect
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankscope.engines import Document
from rankscope.errors import ConfigError, RankscopeError
from rankscope.suite.docstrings import DEFAULT_MODULES, load_corpus


@pytest.fixture(scope="module")
def default_corpus() -> list[Document]:
    return load_corpus(DEFAULT_MODULES)


def test_ids_are_unique_and_titles_are_the_ids(default_corpus: list[Document]) -> None:
    ids = [d.id for d in default_corpus]
    assert len(ids) == len(set(ids))
    assert all(d.title == d.id for d in default_corpus)


def test_corpus_size_is_a_few_thousand_at_most(default_corpus: list[Document]) -> None:
    assert 500 <= len(default_corpus) <= 5000


def test_known_ids_are_present(default_corpus: list[Document]) -> None:
    ids = {d.id for d in default_corpus}
    for known in (
        "json",
        "json.dumps",
        "os.path.join",
        "collections.OrderedDict.move_to_end",
        "shutil.rmtree",
        "pathlib.Path.read_text",
        "datetime.datetime.strptime",
        "concurrent.futures.ThreadPoolExecutor",  # documented only in its __init__
    ):
        assert known in ids, known


def test_no_private_names_and_no_empty_texts(default_corpus: list[Document]) -> None:
    for doc in default_corpus:
        assert not any(part.startswith("_") for part in doc.id.split(".")), doc.id
        assert doc.text.strip(), doc.id


def test_fields_module_and_kind(default_corpus: list[Document]) -> None:
    listed = set(DEFAULT_MODULES)
    kinds = {d.fields["kind"] for d in default_corpus}
    assert kinds <= {"module", "function", "class", "method", "property"}
    assert {"module", "function", "class", "method"} <= kinds
    for doc in default_corpus:
        module = doc.fields["module"]
        assert module in listed
        assert doc.id == module or doc.id.startswith(module + ".")
    by_id = {d.id: d for d in default_corpus}
    assert by_id["json"].fields == {"module": "json", "kind": "module"}
    assert by_id["json.dumps"].fields == {"module": "json", "kind": "function"}
    assert by_id["collections.OrderedDict.move_to_end"].fields["kind"] == "method"
    assert by_id["os.path.join"].fields["module"] == "os.path"


def test_text_is_signature_then_docstring(default_corpus: list[Document]) -> None:
    import json

    by_id = {d.id: d for d in default_corpus}
    text = by_id["json.dumps"].text
    first, _, rest = text.partition("\n")
    assert first.startswith("dumps(obj")
    assert json.dumps.__doc__ is not None
    assert rest == inspect.cleandoc(json.dumps.__doc__)
    # module documents carry the docstring only
    assert by_id["json"].text.startswith("JSON (JavaScript Object Notation)")


def test_loading_is_deterministic() -> None:
    first = load_corpus(DEFAULT_MODULES)
    second = load_corpus(DEFAULT_MODULES)
    assert [(d.id, d.text, dict(d.fields)) for d in first] == [
        (d.id, d.text, dict(d.fields)) for d in second
    ]


def test_order_follows_the_module_list() -> None:
    docs = load_corpus(["textwrap", "json"])
    modules = [d.fields["module"] for d in docs]
    assert modules == sorted(modules, key=["textwrap", "json"].index)
    assert docs[0].id == "textwrap"
    json_ids = [d.id for d in docs if d.fields["module"] == "json"]
    assert json_ids[0] == "json"


def test_builtin_objects_are_not_documented_as_module_api() -> None:
    ids = {d.id for d in load_corpus(["os"])}
    assert "os.error" not in ids  # an alias of the built-in OSError
    assert "os.listdir" in ids


def test_reexports_appear_once_under_the_defining_module_when_listed() -> None:
    ids = {d.id for d in load_corpus(["os.path"])}
    assert "os.path.join" in ids
    both = [d.id for d in load_corpus(["os.path", "posixpath"]) if d.id.endswith(".join")]
    # os.path is posixpath on POSIX (ntpath on Windows): the defining module's name wins
    defining = sys.modules["os.path"].__name__
    assert both == [f"{defining}.join"]
    modules = [d.id for d in load_corpus(["os.path", defining]) if d.fields["kind"] == "module"]
    assert modules == [defining]


def test_aliases_keep_the_canonical_name() -> None:
    ids = {d.id for d in load_corpus(["bisect"])}
    assert "bisect.bisect_right" in ids
    assert "bisect.bisect" not in ids  # bisect = bisect_right


def test_a_module_listed_twice_is_loaded_once() -> None:
    once = [d.id for d in load_corpus(["json"])]
    assert [d.id for d in load_corpus(["json", "json"])] == once


def test_unknown_module_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        load_corpus(["json", "no_such_module_for_rankscope"])
    message = str(info.value)
    assert "no_such_module_for_rankscope" in message
    assert "corpus.modules" in message
    assert isinstance(info.value, RankscopeError)


# -- a synthetic package pins the walking rules independently of the Python release -------------

_CORE = '''
"""Core module docstring."""

__all__ = ["Widget", "make_widget", "helper_alias", "undocumented", "CONSTANT", "Child", "collect"]

CONSTANT = 42


def make_widget(size, *, color=object()):
    """Make a widget of the given size."""


def undocumented():
    pass


def collect(item, into=[], *, sep=", ", flags=(1, 2), key=len):
    """Collect items into a shared default list."""
    into.append(item)


def _private():
    """Private helper."""


helper_alias = make_widget


class _Impl:
    def shared(self):
        """Implementation method inherited by Widget."""


class Widget(_Impl):
    """A widget."""

    def spin(self, times):
        """Spin the widget."""

    def _hidden(self):
        """Not public."""

    @property
    def weight(self):
        """The widget's weight."""
        return 1

    @classmethod
    def default(cls):
        """A default widget."""
        return cls()

    @staticmethod
    def version():
        """The widget version."""
        return 1

    def bare(self):
        pass

    colour = "red"


class Child(Widget):
    """A widget subclass."""

    def extra(self):
        """Only on the child."""
'''

_PLAIN = '''
"""No __all__: imported names are not this module's API."""

from {core} import make_widget


def mine():
    """Plain's own function."""
'''

_FACADE = '''
"""Facade re-exporting the core."""

from {core} import Widget, make_widget

__all__ = ["Widget", "make_widget", "own"]


def own():
    """Facade's own function."""
'''


@pytest.fixture()
def synthetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str, str]]:
    tag = uuid.uuid4().hex[:8]
    core, facade, plain = (f"rsdemo_{part}_{tag}" for part in ("core", "facade", "plain"))
    (tmp_path / f"{core}.py").write_text(_CORE)
    (tmp_path / f"{facade}.py").write_text(_FACADE.format(core=core))
    (tmp_path / f"{plain}.py").write_text(_PLAIN.format(core=core))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield core, facade, plain
    for name in (core, facade, plain):
        sys.modules.pop(name, None)


def test_synthetic_walk(synthetic: tuple[str, str, str]) -> None:
    core, _, _ = synthetic
    docs = {d.id: d for d in load_corpus([core])}
    rel = {key.removeprefix(core) or "<module>": doc for key, doc in docs.items()}
    assert set(rel) == {
        "<module>",
        ".Child",
        ".Child.extra",
        ".Widget",
        ".Widget.default",
        ".Widget.shared",  # from the undocumented private base
        ".Widget.spin",
        ".Widget.version",
        ".Widget.weight",
        ".collect",
        ".make_widget",
    }
    # helper_alias is make_widget under another name: kept once, under its own name
    assert rel[".Widget.weight"].fields["kind"] == "property"
    assert rel[".Widget.default"].fields["kind"] == "method"
    assert rel[".Widget"].fields["kind"] == "class"
    assert rel["<module>"].fields["kind"] == "module"
    # an object default shows as ... so the text is the same on every run
    assert rel[".make_widget"].text.startswith("make_widget(size, *, color=...)\n")
    assert rel[".make_widget"].text.endswith("Make a widget of the given size.")
    assert rel[".Widget.weight"].text == "The widget's weight."


def test_synthetic_reexport_goes_to_the_defining_module(
    synthetic: tuple[str, str, str],
) -> None:
    core, facade, _ = synthetic
    for order in ([core, facade], [facade, core]):
        ids = [d.id for d in load_corpus(order)]
        assert f"{core}.make_widget" in ids
        assert f"{facade}.make_widget" not in ids
        assert f"{core}.Widget.spin" in ids
        assert f"{facade}.Widget.spin" not in ids
        assert f"{facade}.own" in ids


def test_synthetic_reexport_first_seen_when_defining_module_not_listed(
    synthetic: tuple[str, str, str],
) -> None:
    _, facade, _ = synthetic
    ids = [d.id for d in load_corpus([facade])]
    assert ids == [
        facade,
        f"{facade}.Widget",
        f"{facade}.Widget.default",
        f"{facade}.Widget.shared",
        f"{facade}.Widget.spin",
        f"{facade}.Widget.version",
        f"{facade}.Widget.weight",
        f"{facade}.make_widget",
        f"{facade}.own",
    ]


def test_synthetic_module_without_all_keeps_only_its_own_names(
    synthetic: tuple[str, str, str],
) -> None:
    _, _, plain = synthetic
    assert [d.id for d in load_corpus([plain])] == [plain, f"{plain}.mine"]


def test_synthetic_defaults_render_the_same_after_state_changes(
    synthetic: tuple[str, str, str],
) -> None:
    core, _, _ = synthetic
    before = {d.id: d.text for d in load_corpus([core])}
    importlib.import_module(core).collect("x")  # mutates the shared default list
    after = {d.id: d.text for d in load_corpus([core])}
    assert before == after
    signature = before[f"{core}.collect"].partition("\n")[0]
    assert (
        signature
        == "collect(item, into=..., *, sep=', ', flags=(1, 2), key=<built-in function len>)"
    )


def test_synthetic_third_party_patches_are_ignored(
    synthetic: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    core, facade, _ = synthetic
    widget = importlib.import_module(core).Widget
    patch = importlib.import_module(facade).own  # a function of another, non-standard module
    monkeypatch.setattr(widget, "patched", patch, raising=False)
    ids = [d.id for d in load_corpus([core])]
    assert f"{core}.Widget.patched" not in ids
    assert f"{core}.Widget.spin" in ids
