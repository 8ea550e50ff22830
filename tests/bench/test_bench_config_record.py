"""A configuration as its record stores it: the JSON of checkpoints and results already on
disk must read back, and records written now must be the same bytes."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rankscope.bench import ConfigRecord
from rankscope.bench.runner import search_key
from rankscope.suite import BenchConfig, ChunkingSpec

#: a configuration as a checkpoint (configs/<name>.json) holds it: options that JSON cannot
#: hold are kept as their repr
CONFIG_JSON = (
    '{"name":"dense","engine":"vector","options":{"fields":["title","text"],'
    '"ratio":"Fraction(1, 3)","7":null},"chunking":{"size":256,"overlap":32,"unit":"tokens"},'
    '"embedding_model":"m","reranker":null}'
)
#: what search_key makes of it (records store it to find duplicate configurations)
SEARCH_KEY = (
    '{"chunking": {"overlap": 32, "size": 256, "unit": "tokens"}, "embedding_model": "m", '
    '"engine": "vector", "options": {"7": null, "fields": ["title", "text"], '
    '"ratio": "Fraction(1, 3)"}, "reranker": null}'
)


def _config() -> BenchConfig:
    return BenchConfig(
        name="dense",
        engine="vector",
        options={"fields": ("title", "text"), "ratio": Fraction(1, 3), "7": None},
        chunking=ChunkingSpec(size=256, overlap=32),
        embedding_model="m",
    )


def test_a_record_stores_the_configuration_with_json_safe_options() -> None:
    record = ConfigRecord(name="dense", config=_config().json_safe(), host="h")
    assert record.config.model_dump_json() == CONFIG_JSON
    assert record.model_dump_json().startswith(f'{{"name":"dense","config":{CONFIG_JSON},')


def test_a_stored_record_reads_back_to_the_same_bytes() -> None:
    stored = f'{{"name":"dense","config":{CONFIG_JSON},"status":"ok","host":"h"}}'
    record = ConfigRecord.model_validate_json(stored)
    assert record.config.model_dump_json() == CONFIG_JSON
    assert record.config.chunking is not None and record.config.chunking.size == 256
    assert search_key(record.config, object(), {}) == SEARCH_KEY  # type: ignore[arg-type]


def test_a_record_holds_the_configuration_model_itself() -> None:
    config = BenchConfig(name="lite", engine="sqlite", options={"path": "/x"})
    record = ConfigRecord(name="lite", config=config.json_safe())
    assert record.config == config and type(record.config) is BenchConfig


def test_the_old_name_of_the_stored_configuration_still_reads() -> None:
    import rankscope.bench

    with pytest.warns(DeprecationWarning, match=r"ConfigSpec is deprecated; use rankscope\.suite"):
        assert rankscope.bench.ConfigSpec is BenchConfig
    with pytest.raises(AttributeError, match="no attribute 'ConfigSpecs'"):
        rankscope.bench.ConfigSpecs  # noqa: B018
