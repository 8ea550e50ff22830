"""``rankscope bench --ray`` without the ray extra: a clear error, and no ray in the core."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

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
