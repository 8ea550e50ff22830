"""The alerts (``alerts``): stored once per (user, dedup key), read back as pages, and their
webhook deliveries recorded."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from rankscope.service.store.base import Database, owner_filter
from rankscope.service.store.db import Principal
from rankscope.service.store.models import alerts_table

A = alerts_table.c


class AlertStore:
    """Reads and writes of the alerts."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def insert(self, principal: Principal, row: dict[str, Any]) -> bool:
        """Store an alert unless one with its (user, dedup key) exists; True when stored."""
        insert = pg_insert if self.db.postgres else sqlite_insert
        stmt = (
            insert(alerts_table)
            .on_conflict_do_nothing(index_elements=["user_id", "dedup_key"])
            .returning(A.id)
        )
        with self.db.transaction(principal, write=True) as conn:
            # RETURNING, not rowcount: the driver's rowcount of a skipped conflict differs
            return conn.execute(stmt, row).first() is not None

    def get(self, principal: Principal, alert_id: uuid.UUID) -> dict[str, Any] | None:
        with self.db.transaction(principal) as conn:
            conds = [A.id == alert_id, *owner_filter(alerts_table, principal)]
            found = conn.execute(select(alerts_table).where(*conds)).mappings().first()
            return dict(found) if found is not None else None

    def page(
        self,
        principal: Principal,
        *,
        start: dt.datetime | None,
        end: dt.datetime | None,
        user_id: str | None,
        status: str | None,
        limit: int,
        offset: int,
    ) -> list[dict[str, Any]]:
        conds = owner_filter(alerts_table, principal, user_id)
        if start is not None:
            conds.append(A.created_at >= start)
        if end is not None:
            conds.append(A.created_at <= end)
        if status is not None:
            conds.append(A.delivery_status == status)
        query = select(alerts_table).where(*conds).order_by(A.created_at.desc(), A.id)
        return self.db.fetch_page(principal, query, limit, offset)

    def set_delivery(
        self,
        principal: Principal,
        alert_id: uuid.UUID,
        *,
        status: str,
        attempts: int,
        delivered_at: dt.datetime | None,
        error: str | None,
    ) -> None:
        with self.db.transaction(principal, write=True) as conn:
            conn.execute(
                update(alerts_table)
                .where(A.id == alert_id)
                .values(
                    delivery_status=status,
                    delivery_attempts=attempts,
                    delivered_at=delivered_at,
                    last_error=error,
                )
            )


__all__ = ["AlertStore"]
