"""Checkpoints: one result file per finished configuration plus a manifest, written atomically.

The manifest maps each configuration name to the hash of everything that decides its results
(configuration, corpus, queries, retrieval settings). A rerun reuses a configuration only when
its hash still matches and its file is intact, so an interrupted benchmark resumes where it
stopped and a changed suite recomputes exactly what changed. Judgments are not part of the hash:
measures are always recomputed from the stored rankings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rankscope.bench.config_record import ConfigRecord
from rankscope.errors import ConfigError
from rankscope.util.files import atomic_write_json, atomic_write_text

MANIFEST = "manifest.json"
#: 2: typed records (:class:`~rankscope.bench.config_record.ConfigRecord`); older entries are redone
MANIFEST_VERSION = 2
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(name: str) -> str:
    """A file-name-safe form of a configuration name."""
    return _UNSAFE.sub("_", name).strip("._") or "config"


def check_file_names(names: Sequence[str]) -> None:
    """Refuse configuration names that would share files (``a b``, ``a/b`` and ``a_b`` all
    become ``a_b``; ``A`` and ``a`` are one file on case-insensitive file systems)."""
    seen: dict[str, str] = {}
    for name in names:
        key = safe_name(name).casefold()
        if key in seen:
            raise ConfigError(
                f"configurations {seen[key]!r} and {name!r} would write the same files "
                f"(runs/{safe_name(name)}.trec, configs/{safe_name(name)}.json)",
                hint="rename one of them; in file names, characters other than letters, digits "
                "and . _ + - become _, and case is ignored",
            )
        seen[key] = name


class Checkpoints:
    """The ``configs/`` folder and ``manifest.json`` of an output folder."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.folder = out_dir / "configs"
        self.manifest_path = out_dir / MANIFEST
        self.entries: dict[str, dict[str, Any]] = {}
        if self.manifest_path.is_file():
            try:
                data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
                if data.get("version") == MANIFEST_VERSION:
                    self.entries = dict(data.get("configs", {}))
            except (OSError, ValueError, AttributeError):
                self.entries = {}  # a damaged manifest only costs recomputation

    def path_for(self, name: str) -> Path:
        return self.folder / f"{safe_name(name)}.json"

    def load(self, name: str, key: str) -> ConfigRecord | None:
        """The stored record of a finished configuration when its key still matches."""
        entry = self.entries.get(name)
        if not entry or entry.get("key") != key or entry.get("status") != "ok":
            return None
        path = self.out_dir / str(entry.get("file", ""))
        try:
            record = ConfigRecord.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            return None  # damaged, or written by another version: recompute
        if record.key != key or record.name != name:
            return None
        return record

    def previous(self, name: str) -> ConfigRecord | None:
        """The stored record of a configuration, whatever its key (``None`` when absent)."""
        entry = self.entries.get(name)
        if not entry:
            return None
        try:
            return ConfigRecord.model_validate_json(
                (self.out_dir / str(entry["file"])).read_bytes()
            )
        except (OSError, KeyError, ValidationError):
            return None

    def save(self, record: ConfigRecord) -> None:
        """Store a configuration's record, then point the manifest at it."""
        path = self.path_for(record.name)
        atomic_write_text(path, record.model_dump_json() + "\n")
        self.entries[record.name] = {
            "key": record.key,
            "status": record.status,
            "file": path.relative_to(self.out_dir).as_posix(),
        }
        self._write_manifest()

    def clear(self) -> None:
        """Forget every checkpoint (the manifest first, so none is ever half there)."""
        self.entries = {}
        self._write_manifest()
        for path in self.folder.glob("*.json"):
            path.unlink(missing_ok=True)

    def _write_manifest(self) -> None:
        manifest = {"version": MANIFEST_VERSION, "configs": self.entries}
        atomic_write_json(self.manifest_path, manifest)
