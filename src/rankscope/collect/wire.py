"""What goes over the wire from an application to ``rankscope serve``: the JSON record of one
retrieval (:func:`make_record`, as ``POST /api/metrics/retrieval/collect`` takes it) and the
models the service validates records, batches, documents and events with (camelCase on the
wire; the service reads them, the client builds plain dicts).

Documents may be mappings (``documentId``/``document_id``/``doc_id``/``id``, ``score``,
``chunkIndex``/``chunk_index``, ``documentName``/``document_name``/``name``), objects with such
attributes (rankscope's own ``Hit``), or ``(document_id, score)`` pairs.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
    with_config,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from rankscope.ids import uuid7

_ID_NAMES = ("documentId", "document_id", "doc_id", "id")
_CHUNK_NAMES = ("chunkIndex", "chunk_index")
_NAME_NAMES = ("documentName", "document_name", "name", "title")
SEARCH_TYPES = ("semantic", "keyword", "hybrid", "web")


def _get(doc: Any, names: Sequence[str]) -> Any:
    for name in names:
        if isinstance(doc, Mapping):
            if name in doc:
                return doc[name]
        elif hasattr(doc, name):
            return getattr(doc, name)
    return None


def document(doc: Any) -> dict[str, Any]:
    """One retrieved document as the API's ``retrievedDocuments`` item."""
    if isinstance(doc, tuple) and len(doc) == 2:
        doc_id, score = doc
        chunk = name = None
    else:
        doc_id = _get(doc, _ID_NAMES)
        score = _get(doc, ("score",))
        chunk = _get(doc, _CHUNK_NAMES)
        name = _get(doc, _NAME_NAMES)
    if doc_id is None or score is None:
        raise ValueError(f"a retrieved document needs an id and a score, got {doc!r}")
    value = float(score)
    if not math.isfinite(value):
        raise ValueError(f"the score of document {doc_id!r} is not finite: {score!r}")
    out: dict[str, Any] = {"documentId": str(doc_id), "score": value}
    if chunk is not None:
        out["chunkIndex"] = int(chunk)
    if name is not None:
        out["documentName"] = str(name)
    return out


def make_record(
    query: str,
    documents: Iterable[Any],
    *,
    relevant_document_ids: Iterable[str] | None = None,
    judgments: Mapping[str, int] | None = None,
    query_id: str | None = None,
    topic_id: str | None = None,
    search_types: Iterable[str] | Mapping[str, bool] | None = None,
    web_results_count: int | None = None,
    document_ids: Iterable[str] | None = None,
    cutoff: int | None = None,
    arm: str | None = None,
    user_id: str | None = None,
    timestamp: dt.datetime | None = None,
    collect_id: str | None = None,
) -> dict[str, Any]:
    """The JSON body of one record; ``collectId`` defaults to a new time-ordered UUID (safe
    retries; the service's (user, collectId) index takes it at its end)."""
    record: dict[str, Any] = {
        "query": str(query),
        "retrievedDocuments": [document(d) for d in documents],
        "collectId": collect_id or uuid7().hex,
        "timestamp": (timestamp or dt.datetime.now(dt.UTC)).isoformat(),
    }
    if query_id is not None:
        record["queryId"] = str(query_id)
    if relevant_document_ids is not None:
        record["relevantDocumentIds"] = [str(d) for d in relevant_document_ids]
    if judgments is not None:
        record["judgments"] = {str(k): int(v) for k, v in judgments.items()}
    if user_id is not None:
        record["userId"] = str(user_id)
    options: dict[str, Any] = {}
    if topic_id is not None:
        options["topicId"] = str(topic_id)
    if search_types is not None:
        if isinstance(search_types, Mapping):
            chosen = {k for k, v in search_types.items() if v}
        else:
            chosen = set(search_types)
        unknown = chosen - set(SEARCH_TYPES)
        if unknown:
            raise ValueError(f"unknown search types {sorted(unknown)}; use {SEARCH_TYPES}")
        options["searchTypes"] = {t: t in chosen for t in SEARCH_TYPES}
    if web_results_count is not None:
        options["webResultsCount"] = int(web_results_count)
    if document_ids is not None:
        options["documentIds"] = [str(d) for d in document_ids]
    if cutoff is not None:
        options["cutoff"] = int(cutoff)
    if arm is not None:
        options["arm"] = str(arm)
    if options:
        record["options"] = options
    return record


# -- the models the service validates with ------------------------------------------------------

Id = Annotated[str, StringConstraints(min_length=1, max_length=255)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=10_000)]

# Numbers and flags are strict: "0.9" or true is refused, not read as 0.9 or 1 (a JSON integer
# is still a valid float).
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Count = Annotated[int, Field(strict=True)]
Flag = Annotated[bool, Field(strict=True)]
# trec_eval's nDCG builds a gain table with one entry per grade up to the largest: bounded so a
# request cannot make that table (and its cost) huge
Grade = Annotated[int, Field(strict=True, ge=-100, le=100)]

#: the most judgments one record or feedback may carry, as relevantDocumentIds or as judgments
MAX_JUDGMENTS = 100_000
#: the most documents a search may have been limited to (options.documentIds)
MAX_DOCUMENT_IDS = 10_000
#: entries of a dict validated at a time: a dict of bad entries stops at the first bad slice
_DICT_SLICE = 256


def bounded_dict(limit: int) -> WrapValidator:
    """A dict's size checked before its entries, which are then validated a slice at a time,
    stopping at the first slice with an error: a huge dict of bad entries costs no more than
    a small one (pydantic checks a dict's max_length only after every entry, and lists every
    bad entry)."""

    def check(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if not isinstance(value, dict):
            return handler(value)
        if len(value) > limit:
            raise PydanticCustomError(
                "too_long",
                "Dictionary should have at most {max_length} items, not {actual_length}",
                {"max_length": limit, "actual_length": len(value)},
            )
        if len(value) <= _DICT_SLICE:
            return handler(value)
        items = list(value.items())
        out: dict[Any, Any] = {}
        for start in range(0, len(items), _DICT_SLICE):
            out.update(handler(dict(items[start : start + _DICT_SLICE])))
        return out

    return WrapValidator(check)


class Camel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


@with_config(ConfigDict(extra="forbid"))
class RetrievedDocumentCreate(TypedDict):
    """One retrieved chunk or document, in the order the application used them. (A TypedDict:
    validating thousands of them per batch costs a fifth of what model instances cost.)"""

    documentId: Id
    documentName: NotRequired[Annotated[str, StringConstraints(max_length=1000)] | None]
    chunkIndex: NotRequired[Annotated[int, Field(strict=True, ge=0, le=2**31 - 1)] | None]
    content: NotRequired[Annotated[str | None, Field(description="accepted; not stored")]]
    score: Finite


class SearchTypes(Camel):
    semantic: Flag = False
    keyword: Flag = False
    hybrid: Flag = False
    web: Flag = False

    def names(self) -> list[str]:
        flags = (
            ("semantic", self.semantic),
            ("keyword", self.keyword),
            ("hybrid", self.hybrid),
            ("web", self.web),
        )
        return [name for name, on in flags if on]

    def flags(self) -> dict[str, bool]:
        return {
            "semantic": self.semantic,
            "keyword": self.keyword,
            "hybrid": self.hybrid,
            "web": self.web,
        }


class CollectOptions(Camel):
    topic_id: Id | None = None
    search_types: SearchTypes | None = None
    web_results_count: Annotated[Count, Field(ge=0, le=1_000_000)] | None = None
    document_ids: list[Id] | None = Field(
        None,
        max_length=MAX_DOCUMENT_IDS,
        fail_fast=True,
        description="documents the search was limited to",
    )
    cutoff: Annotated[Count, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="evaluate the first N distinct documents (default: all)"
    )
    arm: Id | None = Field(
        None, description="experiment arm or configuration this retrieval ran under"
    )


Judgments = Annotated[dict[Id, Grade], bounded_dict(MAX_JUDGMENTS)]


class MetricCreate(Camel):
    """``POST /api/metrics/retrieval/collect``: one retrieval.

    Lists stop at their first bad item (``fail_fast``), so that a huge list of bad items costs
    no more than one; the service checks each list's length before its items
    (:func:`collect_models`)."""

    query: Text
    query_id: Id | None = None
    retrieved_documents: list[RetrievedDocumentCreate] = Field(
        fail_fast=True, description="in the order shown (at most max_documents_per_record)"
    )
    relevant_document_ids: list[Id] | None = Field(
        None,
        max_length=MAX_JUDGMENTS,
        fail_fast=True,
        description="ground truth: every relevant document (at most 100,000)",
    )
    judgments: Judgments | None = Field(
        None,
        description="graded ground truth {documentId: grade}, at most 100,000; wins over "
        "relevantDocumentIds",
    )
    options: CollectOptions | None = None
    collect_id: Id | None = Field(
        None,
        description="client-chosen id that makes retries safe: a second request with the "
        "same collectId stores nothing and returns the first record",
    )
    timestamp: dt.datetime | None = Field(
        None,
        description="when the retrieval happened (default: when the request arrived); ISO 8601 "
        "or seconds since the Unix epoch, from 1970-01-01 to a day past the server's clock",
    )
    user_id: Id | None = Field(
        None, description="the user the record belongs to (service role only; default: caller)"
    )


class BatchCreate(Camel):
    """``POST /api/metrics/retrieval/collect/batch``: many records, one transaction.
    Validation stops at the first invalid record."""

    records: list[MetricCreate] = Field(fail_fast=True)


#: actions the service gives a meaning to; any other name (UBI allows custom ones such as
#: ``add_to_cart``) is stored and counted, not interpreted
KNOWN_ACTIONS = ("search", "impression", "click", "dwell", "thumbs_up", "thumbs_down", "cited")
#: actions about one document of a results page
DOCUMENT_ACTIONS = ("impression", "click", "dwell", "thumbs_up", "thumbs_down", "cited")

ActionName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,100}$")]
Label = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class EventCreate(Camel):
    """One impression or interaction, keyed by query id, document id and position."""

    event_id: Id | None = Field(
        None,
        description="client-chosen id that makes retries safe: an event whose eventId is "
        "already stored for this user is not stored again",
    )
    action: ActionName = Field(
        description="search, impression, click, dwell, thumbs_up, thumbs_down, cited (UBI's "
        "action_name); other names are stored and not interpreted"
    )
    query_id: Id | None = Field(
        None, description="one results page (UBI query_id); required for the known actions"
    )
    query: Text | None = Field(None, description="the query text (UBI user_query)")
    document_id: Id | None = Field(
        None, description="the result acted on (UBI object_id); required for document actions"
    )
    position: Annotated[Count, Field(ge=1, le=1_000_000)] | None = Field(
        None, description="1-based rank on the page; required for impressions"
    )
    dwell_time_seconds: Annotated[Finite, Field(ge=0, le=1e7)] | None = Field(
        None, description="seconds spent on the document (dwell events, or on a click)"
    )
    result_count: Annotated[Count, Field(ge=0, le=1_000_000_000)] | None = Field(
        None, description="results the search returned (search events; 0 = zero results)"
    )
    topic_id: Id | None = None
    search_type: Label | None = Field(None, description="e.g. semantic, keyword+semantic")
    arm: Id | None = Field(None, description="the A/B arm or configuration that served the page")
    experiment: Id | None = Field(None, description="an interleaving experiment's name")
    team: Id | None = Field(
        None, description="interleaving: the ranker (arm) that contributed this slot"
    )
    session_id: Id | None = None
    client_id: Id | None = None
    application: Id | None = None
    attributes: dict[str, Any] | None = Field(None, description="anything else (kept as is)")
    timestamp: dt.datetime | None = Field(
        None,
        description="default: when the request arrived; from 1970-01-01 to a day past the "
        "server's clock",
    )
    user_id: Id | None = Field(None, description="service role only: the event's user")

    @model_validator(mode="after")
    def _required_by_action(self) -> EventCreate:
        if self.action in KNOWN_ACTIONS and self.query_id is None:
            raise ValueError(f"a {self.action!r} event needs queryId")
        if self.action in DOCUMENT_ACTIONS and self.document_id is None:
            raise ValueError(f"a {self.action!r} event needs documentId")
        if self.action == "impression" and self.position is None:
            raise ValueError("an 'impression' event needs position (1 = top)")
        if self.action == "dwell" and self.dwell_time_seconds is None:
            raise ValueError("a 'dwell' event needs dwellTimeSeconds")
        return self


class EventsCreate(Camel):
    """``POST /api/events``: ``{"events": [...]}`` (a bare JSON list is accepted too).
    Validation stops at the first invalid event."""

    events: list[EventCreate] = Field(fail_fast=True)


__all__ = [
    "DOCUMENT_ACTIONS",
    "KNOWN_ACTIONS",
    "MAX_DOCUMENT_IDS",
    "MAX_JUDGMENTS",
    "SEARCH_TYPES",
    "BatchCreate",
    "Camel",
    "CollectOptions",
    "Count",
    "EventCreate",
    "EventsCreate",
    "Finite",
    "Flag",
    "Grade",
    "Id",
    "Judgments",
    "MetricCreate",
    "RetrievedDocumentCreate",
    "SearchTypes",
    "Text",
    "bounded_dict",
    "document",
    "make_record",
]
