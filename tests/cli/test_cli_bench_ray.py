"""``rankscope bench --ray`` without the ray extra: a clear error, and no ray in the core."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_bench import tiny_suite

from rankscope.cli.app import main


def test_the_core_does_not_import_ray() -> None:
    code = (
        "import sys; import rankscope.bench, rankscope.bench.ray_runner, rankscope.cli.app; "
        "print(json.dumps('ray' in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", f"import json; {code}"], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) is False


def test_ray_without_the_extra_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if importlib.util.find_spec("ray") is not None:
        # installed here: hide it (a None entry makes `import ray` raise ImportError)
        monkeypatch.setitem(sys.modules, "ray", None)
    suite = tmp_path / "suite.yaml"  # never read: the extra is checked first
    for args in (["--ray"], ["--ray-address", "auto"], ["--ray-cpus", "2"]):
        assert main(["bench", str(suite), "-o", str(tmp_path / "out"), *args]) == 2
        err = capsys.readouterr().err
        assert "needs the ray package" in err and "pip install 'rankscope[ray]'" in err
        assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_address_nothing_answers_at_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray", reason="needs the ray extra: pip install 'rankscope[ray]'")
    suite = tiny_suite(tmp_path)
    with socket.socket() as sock:  # a port nothing listens on once it is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        args = ["bench", str(suite), "-o", str(tmp_path / "out"), "--ray-address", address]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert f"nothing answers at the Ray cluster address {address}" in err
        assert "Traceback" not in err
