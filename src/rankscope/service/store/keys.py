"""API keys: made, listed and revoked on the owner's connection (the app role may only read
them); a key is stored as its SHA-256 and shown once, at creation."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Engine, select, update

from rankscope.errors import ServiceError
from rankscope.service.store.models import api_keys_table

KEY_PREFIX = "rsk_"


@dataclass(frozen=True)
class KeyInfo:
    id: str
    user_id: str
    role: Literal["user", "service"]
    name: str | None
    created_at: dt.datetime
    revoked_at: dt.datetime | None


def hash_key(key: str) -> str:
    """SHA-256 of a key: keys are 32 random bytes, so a fast hash is safe (no guessing)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_key(
    engine: Engine, user_id: str, role: Literal["user", "service"] = "user", name: str | None = None
) -> tuple[str, KeyInfo]:
    """A new API key (returned once, never stored) and its record."""
    if not user_id.strip():
        raise ServiceError("an API key needs a non-empty user id")
    key_id = secrets.token_hex(6)
    key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:
        conn.execute(
            api_keys_table.insert().values(
                id=key_id,
                key_hash=hash_key(key),
                user_id=user_id,
                role=role,
                name=name,
                created_at=now,
            )
        )
    return key, KeyInfo(key_id, user_id, role, name, now, None)


def key_id_of(key_or_id: str) -> str:
    """The id part of a key (``rsk_<id>_<secret>``), or the argument when it is an id."""
    if key_or_id.startswith(KEY_PREFIX) and key_or_id.count("_") >= 2:
        return key_or_id[len(KEY_PREFIX) :].split("_", 1)[0]
    return key_or_id


def revoke_key(engine: Engine, key_or_id: str) -> KeyInfo:
    key_id = key_id_of(key_or_id)
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:
        row = (
            conn.execute(select(api_keys_table).where(api_keys_table.c.id == key_id))
            .mappings()
            .first()
        )
        if row is None:
            raise ServiceError(
                f"no API key with id {key_id!r}; `rankscope serve list-keys` shows them"
            )
        revoked = row["revoked_at"] or now
        conn.execute(
            update(api_keys_table).where(api_keys_table.c.id == key_id).values(revoked_at=revoked)
        )
    return KeyInfo(row["id"], row["user_id"], row["role"], row["name"], row["created_at"], revoked)


def list_keys(engine: Engine) -> list[KeyInfo]:
    with engine.connect() as conn:
        rows = conn.execute(select(api_keys_table).order_by(api_keys_table.c.created_at))
        return [KeyInfo(r.id, r.user_id, r.role, r.name, r.created_at, r.revoked_at) for r in rows]


def lookup_key(engine: Engine, key: str) -> KeyInfo | None:
    """The live key with this value, or None (unknown or revoked)."""
    with engine.connect() as conn:
        row = conn.execute(
            select(api_keys_table).where(api_keys_table.c.key_hash == hash_key(key))
        ).first()
    if row is None or row.revoked_at is not None:
        return None
    return KeyInfo(row.id, row.user_id, row.role, row.name, row.created_at, row.revoked_at)


__all__ = [
    "KEY_PREFIX",
    "KeyInfo",
    "create_key",
    "hash_key",
    "key_id_of",
    "list_keys",
    "lookup_key",
    "revoke_key",
]
