"""Import User Behavior Insights (UBI) logs as events (``rankscope serve import-ubi FILE``).

UBI (the o19s specification 1.x, stored by OpenSearch in the ``ubi_queries`` and ``ubi_events``
indices) logs queries with the ids of the hits returned, and events (``action_name``) on
objects at positions. A file may hold, one JSON document per line (or as one JSON array):

- UBI query documents (``user_query``, ``query_id``, ``query_response_hit_ids``, ...),
- UBI event documents (``action_name``, ``query_id``, ``event_attributes``, ...),
- either wrapped as OpenSearch hits (``{"_index": ..., "_id": ..., "_source": {...}}``), a whole
  search response (``{"hits": {"hits": [...]}}``), or ``_bulk`` lines (the action lines are
  skipped).

Mapping to ``POST /api/events``:

- a query becomes a ``search`` event (``resultCount`` = the number of hit ids, ``query`` =
  ``user_query``) and, unless ``impressions_from_queries`` is off, one ``impression`` per hit id
  at positions 1, 2, ... (UBI's query log records the results returned to the page);
- an event keeps ``query_id``, ``session_id``, ``client_id``, ``application``, ``timestamp``;
  ``event_attributes.object.object_id`` is the ``documentId``;
  ``event_attributes.position.ordinal`` (a number, or ``{"index": n}`` as in UBI 1.1+) the
  position, 1-based as the specification's examples (``zero_based`` adds 1);
  ``event_attributes.dwell_time`` (seconds), when present, the dwell time;
- ``action_name``: ``click`` and ``click_through`` become ``click``, ``impression`` and
  ``view`` ``impression``; others (``add_to_cart``, ``purchase``, ...) are kept as they are;
- UBI's ``user_id`` (the end user) and every other field go to ``attributes``: the importing
  rankscope user owns the events (row-level security);
- ``eventId`` is ``ubi:`` + the OpenSearch ``_id`` when there is one, else a hash of the
  document, so importing the same file twice stores nothing new.

Documents that cannot become an event (a click without ``query_id``, an impression without a
position, ...) are skipped and counted by reason with their line numbers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rankscope.collect.wire import EventCreate
from rankscope.errors import FormatError

ACTIONS = {
    "click": "click",
    "click_through": "click",
    "impression": "impression",
    "view": "impression",
}
_BAD = re.compile(r"[^A-Za-z0-9_.:-]")
_EVENT_FIELDS = {
    "action_name",
    "query_id",
    "session_id",
    "client_id",
    "application",
    "timestamp",
    "event_attributes",
}
_QUERY_FIELDS = {
    "query_id",
    "user_query",
    "query_response_hit_ids",
    "client_id",
    "application",
    "timestamp",
    "query_attributes",
    "session_id",
}


@dataclass
class UbiImport:
    events: list[EventCreate] = field(default_factory=list)
    queries: int = 0
    ubi_events: int = 0
    skipped: dict[str, list[int]] = field(default_factory=dict)

    def skip(self, reason: str, line: int) -> None:
        self.skipped.setdefault(reason, []).append(line)


def _documents(path: Path) -> Iterator[tuple[int, dict[str, Any], str | None, str | None]]:
    """(line, document, OpenSearch index, OpenSearch id) of every document in the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"cannot read the UBI file: {exc}", path=path) from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
        for item in items:
            yield from _unwrap(item, 1, path)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(
                f"invalid JSON: {exc.msg}",
                path=path,
                line=number,
                value=line[:80],
                hint="UBI logs are JSON Lines (one document per line) or a JSON array",
            ) from None
        yield from _unwrap(item, number, path)


def _unwrap(
    item: Any, line: int, path: Path
) -> Iterator[tuple[int, dict[str, Any], str | None, str | None]]:
    if not isinstance(item, dict):
        raise FormatError("a UBI document must be a JSON object", path=path, line=line, value=item)
    hits = item.get("hits")
    if isinstance(hits, dict) and isinstance(hits.get("hits"), list):
        for hit in hits["hits"]:
            yield from _unwrap(hit, line, path)
        return
    if set(item) <= {"index", "create"} and item:  # a _bulk action line
        return
    if isinstance(item.get("_source"), dict):
        yield line, item["_source"], item.get("_index"), item.get("_id")
        return
    yield line, item, None, None


def _event_id(doc: dict[str, Any], os_id: str | None) -> str:
    if os_id is not None:
        return f"ubi:{os_id}"[:255]
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()
    return f"ubi:{digest[:32]}"


def _position(attributes: dict[str, Any]) -> int | None:
    position = attributes.get("position")
    if not isinstance(position, dict):
        return None
    ordinal = position.get("ordinal")
    if isinstance(ordinal, dict):
        ordinal = ordinal.get("index")
    if isinstance(ordinal, bool) or not isinstance(ordinal, int | float | str):
        return None
    try:
        return int(ordinal)
    except ValueError:
        return None


def _common(doc: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, name in (
        ("session_id", "sessionId"),
        ("client_id", "clientId"),
        ("application", "application"),
        ("timestamp", "timestamp"),
    ):
        if doc.get(key) not in (None, ""):
            out[name] = str(doc[key])[:255] if key != "timestamp" else doc[key]
    return out


def read_ubi(
    path: str | Path, *, zero_based: bool = False, impressions_from_queries: bool = True
) -> UbiImport:
    """The events of a UBI file (see the module for the mapping)."""
    p = Path(path)
    out = UbiImport()
    shift = 1 if zero_based else 0
    for line, doc, index, os_id in _documents(p):
        is_event = "action_name" in doc or (index or "").endswith("ubi_events")
        is_query = not is_event and (
            "user_query" in doc
            or "query_response_hit_ids" in doc
            or (index or "").endswith("ubi_queries")
        )
        if is_event:
            out.ubi_events += 1
            body = _event(doc, os_id, shift, out, line)
            candidates = [body] if body is not None else []
        elif is_query:
            out.queries += 1
            candidates = _query(doc, os_id, impressions_from_queries, out, line)
        else:
            out.skip("neither a UBI query (user_query) nor an event (action_name)", line)
            continue
        for candidate in candidates:
            try:
                out.events.append(EventCreate.model_validate(candidate))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(x) for x in first["loc"])
                out.skip(f"invalid {candidate['action']} event: {where} {first['msg']}", line)
    return out


def _event(
    doc: dict[str, Any], os_id: str | None, shift: int, out: UbiImport, line: int
) -> dict[str, Any] | None:
    raw = str(doc.get("action_name") or "").strip()
    if not raw:
        out.skip("an event without action_name", line)
        return None
    action = ACTIONS.get(raw.lower(), _BAD.sub("_", raw)[:100])
    attributes = (
        doc.get("event_attributes") if isinstance(doc.get("event_attributes"), dict) else {}
    )
    assert isinstance(attributes, dict)
    obj = attributes.get("object") if isinstance(attributes.get("object"), dict) else {}
    assert isinstance(obj, dict)
    body: dict[str, Any] = {"eventId": _event_id(doc, os_id), "action": action, **_common(doc)}
    if doc.get("query_id") not in (None, ""):
        body["queryId"] = str(doc["query_id"])[:255]
    if obj.get("object_id") not in (None, ""):
        body["documentId"] = str(obj["object_id"])[:255]
    position = _position(attributes)
    if position is not None:
        body["position"] = position + shift
    dwell = attributes.get("dwell_time")
    if isinstance(dwell, int | float) and not isinstance(dwell, bool):
        body["dwellTimeSeconds"] = float(dwell)
    extra = {k: v for k, v in doc.items() if k not in _EVENT_FIELDS}
    rest = {k: v for k, v in attributes.items() if k not in ("position", "dwell_time")}
    if rest:
        extra["event_attributes"] = rest
    if raw != action:
        extra["action_name"] = raw
    if extra:
        body["attributes"] = extra
    return body


def _query(
    doc: dict[str, Any], os_id: str | None, impressions: bool, out: UbiImport, line: int
) -> list[dict[str, Any]]:
    qid = doc.get("query_id")
    if qid in (None, ""):
        out.skip("a query without query_id", line)
        return []
    qid = str(qid)[:255]
    hits = doc.get("query_response_hit_ids") or []
    if not isinstance(hits, list):
        hits = [hits]
    base = _event_id(doc, os_id)
    common = _common(doc)
    search: dict[str, Any] = {
        "eventId": f"{base}:search"[:255],
        "action": "search",
        "queryId": qid,
        "resultCount": len(hits),
        **common,
    }
    if isinstance(doc.get("user_query"), str) and doc["user_query"].strip():
        search["query"] = doc["user_query"][:10_000]
    extra = {k: v for k, v in doc.items() if k not in _QUERY_FIELDS}
    if isinstance(doc.get("query_attributes"), dict):
        extra["query_attributes"] = doc["query_attributes"]
    if extra:
        search["attributes"] = extra
    events = [search]
    if impressions:
        for position, hit in enumerate(hits, start=1):
            body = {
                "eventId": f"{base}:impression:{position}"[:255],
                "action": "impression",
                "queryId": qid,
                "documentId": str(hit)[:255],
                "position": position,
                **common,
            }
            if "query" in search:
                body["query"] = search["query"]
            events.append(body)
    return events


__all__ = ["ACTIONS", "UbiImport", "read_ubi"]
