"""schemathesis against the OpenAPI document: generated requests (valid and invalid) to every
operation of a live server never get a 5xx, and every answer matches the document.
Bounded: a few examples per operation (RANKSCOPE_FUZZ_EXAMPLES to raise it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from serve_helpers import bearer, live_server, make_keys, sqlite_settings  # noqa: E402

pytestmark = pytest.mark.service
EXAMPLES = int(os.environ.get("RANKSCOPE_FUZZ_EXAMPLES", "12"))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "metrics.sqlite"
    settings = sqlite_settings(path, max_request_bytes=256 * 1024)
    keys = make_keys(settings.database_url)
    with live_server(settings) as url:
        yield url, keys.alice


def test_api_matches_its_document(live: tuple[str, str]) -> None:
    import httpx
    from hypothesis import given

    url, key = live
    document = httpx.get(url + "/openapi.json").json()
    api = schemathesis.openapi.from_dict(document)
    # schemathesis' own pytest plugin does not run on this pytest; drive each operation's
    # hypothesis strategy directly (valid and invalid data)
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) >= 12
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]
    for operation in operations:

        @given(
            case=operation.as_strategy(GenerationMode.POSITIVE)
            | operation.as_strategy(GenerationMode.NEGATIVE)
        )
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
            # no shrinking: a failure is reported at once with its curl line, instead of
            # minutes of requests against the live server
            phases=[Phase.explicit, Phase.generate],
        )
        def check(case: Any) -> None:
            case.call_and_validate(base_url=url, headers=bearer(key), timeout=30, checks=checks)

        check()
