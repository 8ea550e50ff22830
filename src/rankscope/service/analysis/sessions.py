"""From stored events to click logs.

A *session* is one results page: one ``queryId``. Its query text is the first ``query`` any of
its events carries, else the text of a collected record with the same ``queryId``, else the
query id itself (such a session cannot be grouped with others). Within a session, a document's
impression gives its position; a click without an impression counts as shown at the click's
position (a click cannot happen unseen); a click with neither position is left out of the
click log and counted. Dwell time comes from ``dwell`` events or a click's
``dwellTimeSeconds`` (the longest when several). Thumbs and citations count per (normalised
query, document).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankscope.collect.wire import KNOWN_ACTIONS
from rankscope.online.clicks import ClickLog, Feedback, Shown
from rankscope.online.queries import normalise_query

#: the actions a click log reads: every action the service gives a meaning to
CLICK_LOG_ACTIONS = KNOWN_ACTIONS


@dataclass(frozen=True)
class Sessions:
    """Stored events arranged per session, ready for the click models."""

    log: ClickLog
    texts: dict[str, str]  # session (query id) -> normalised query
    clicks_without_position: int


def session_texts(
    rows: Sequence[Mapping[str, Any]], from_records: Mapping[str, str]
) -> dict[str, str]:
    """The normalised query of each session (see the module)."""
    texts: dict[str, str] = {}
    for row in rows:
        qid = row["query_id"]
        if qid is not None and row.get("query") and qid not in texts:
            texts[qid] = normalise_query(row["query"])
    for row in rows:
        qid = row["query_id"]
        if qid is not None and qid not in texts:
            texts[qid] = normalise_query(from_records.get(qid, qid))
    return texts


def missing_texts(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Session ids whose events carry no query text."""
    have = {r["query_id"] for r in rows if r.get("query")}
    return sorted({r["query_id"] for r in rows if r["query_id"] is not None} - have)


def sessions_of(
    rows: Sequence[Mapping[str, Any]], from_records: Mapping[str, str] | None = None
) -> Sessions:
    """The click log (and feedback) of stored events."""
    texts = session_texts(rows, from_records or {})
    shown: dict[tuple[str, str], int] = {}
    clicks: dict[tuple[str, str], int | None] = {}
    dwell: dict[tuple[str, str], float] = {}
    feedback: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        qid, doc, action = row["query_id"], row["document_id"], row["action"]
        if qid is None or doc is None:
            continue
        key = (qid, doc)
        position = row["position"]
        if action == "impression" and position is not None:
            shown[key] = min(shown.get(key, position), position)
        elif action == "click":
            old = clicks.get(key)
            clicks[key] = (
                position if old is None else old if position is None else min(old, position)
            )
            if row["dwell_seconds"] is not None:
                dwell[key] = max(dwell.get(key, 0.0), row["dwell_seconds"])
        elif action == "dwell" and row["dwell_seconds"] is not None:
            dwell[key] = max(dwell.get(key, 0.0), row["dwell_seconds"])
        elif action in ("thumbs_up", "thumbs_down", "cited"):
            counts = feedback.setdefault((texts[qid], doc), [0, 0, 0])
            counts[("thumbs_up", "thumbs_down", "cited").index(action)] += 1
    lost = 0
    out: list[Shown] = []
    for key, position in clicks.items():
        if key not in shown:
            if position is None:
                lost += 1
                continue
            shown[key] = position
    for (qid, doc), position in shown.items():
        clicked = (qid, doc) in clicks
        out.append(Shown(qid, texts[qid], doc, position, clicked, dwell.get((qid, doc))))
    signals = {k: Feedback(*v) for k, v in feedback.items()}
    return Sessions(ClickLog.from_shown(out, signals), texts, lost)


__all__ = [
    "CLICK_LOG_ACTIONS",
    "Sessions",
    "missing_texts",
    "session_texts",
    "sessions_of",
]
