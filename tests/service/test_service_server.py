"""Key administration in ``rankscope.service.server``: errors of an unmigrated database."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service needs: pip install 'rankscope[serve]'")

from rankscope.errors import ServiceError
from rankscope.service.admin import keys, new_key, remove_key
from rankscope.service.settings import ServiceSettings


@pytest.mark.parametrize(
    "action",
    [
        lambda s: keys(s),
        lambda s: new_key(s, "alice"),
        lambda s: remove_key(s, "rsk_0123456789ab"),
    ],
    ids=["list", "create", "revoke"],
)
def test_an_unmigrated_database_says_to_migrate(
    tmp_path: Path, action: Callable[[ServiceSettings], object]
) -> None:
    settings = ServiceSettings(
        database_url=f"sqlite:///{tmp_path / 'empty.sqlite'}", auto_migrate=False
    )
    with pytest.raises(ServiceError, match=r"Is it migrated \(`rankscope serve migrate`\)"):
        action(settings)
