"""Local mode's sender is found through the entry point the service registers, never by a
module name in the client; without one, or without the serve extra, a clear error."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from pathlib import Path

import pytest

from rankscope.collect import senders
from rankscope.collect.senders import LOCAL_SENDER_GROUP, LOCAL_SENDER_NAME, local_sender
from rankscope.errors import ConfigError


def _registered(*points: EntryPoint) -> object:
    def entry_points(*, group: str, name: str) -> EntryPoints:
        assert (group, name) == (LOCAL_SENDER_GROUP, LOCAL_SENDER_NAME)
        return EntryPoints(points)

    return entry_points


def test_the_registered_sender_is_made(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    made: list[tuple[object, ...]] = []

    class Recorder:
        def __init__(self, *args: object) -> None:
            made.append(args)

    point = EntryPoint(LOCAL_SENDER_NAME, f"{__name__}:Recorder", LOCAL_SENDER_GROUP)
    monkeypatch.setattr(point.__class__, "load", lambda self: Recorder)
    monkeypatch.setattr(senders, "entry_points", _registered(point))
    local_sender(tmp_path / "m.sqlite", "me", 0.5)
    assert made == [(tmp_path / "m.sqlite", "me", 0.5)]


def test_no_registered_sender_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(senders, "entry_points", _registered())
    with pytest.raises(ConfigError, match=r"rankscope\.local_senders.*pip install"):
        local_sender("m.sqlite", "me")


def test_a_sender_that_cannot_load_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    point = EntryPoint(LOCAL_SENDER_NAME, "rankscope_no_such_module:Sender", LOCAL_SENDER_GROUP)
    monkeypatch.setattr(senders, "entry_points", _registered(point))
    with pytest.raises(ConfigError, match=r"needs the serve extra.*rankscope_no_such_module"):
        local_sender("m.sqlite", "me")


def test_the_installed_entry_point_is_the_services_sender() -> None:
    from rankscope.service.ingest.local import LocalSender

    (point,) = entry_points(group=LOCAL_SENDER_GROUP, name=LOCAL_SENDER_NAME)
    assert point.load() is LocalSender


def test_the_http_senders_name_the_extra_without_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)  # import httpx raises ImportError
    for sender in (senders.HttpSender, senders.AsyncHttpSender):
        with pytest.raises(ConfigError, match=r"pip install 'rankscope\[collect\]'"):
            sender("http://127.0.0.1:9", None, 1.0)
