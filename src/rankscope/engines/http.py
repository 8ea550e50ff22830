"""A user's search API over HTTP (httpx).

Either ``GET`` a URL template, or ``POST`` a JSON body template. In a URL template ``{query}``
and ``{k}`` are replaced by the URL-encoded query text and depth; in a body template every string
that is exactly ``"{query}"`` or ``"{k}"`` becomes the query text (a string) or the depth (an
integer), and ``{query}`` inside longer strings is replaced as text. The response is JSON: a
dotted ``results_path`` (``[*]`` or ``[n]`` for list items, e.g. ``hits.hits``) leads to the list
of results, and ``id_field`` / ``score_field`` (dotted paths too, e.g. ``_source.doc_id``) pick
the id and score of each. An optional ``index_url`` receives the documents as a JSON POST
(``{"documents": [{"id", "title", "text", "fields"}]}``) when the engine indexes.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from rankscope.engines.base import (
    Document,
    Engine,
    Hit,
    Query,
    QueryKind,
    coerce_score,
    register_engine,
)
from rankscope.engines.python import best_first
from rankscope.errors import ConfigError, EngineError

# httpx (and all it loads) is imported when an engine is made, not when it is looked up.

_PLACEHOLDER = re.compile(r"\{(query|k)\}")
_STEP = re.compile(r"([^.\[\]]+)|\[(\*|\d+)\]")


def parse_path(path: str) -> list[str | int | None]:
    """``"hits.hits[*]"`` -> ``["hits", "hits", None]`` (``None``: every item, int: one item)."""
    steps: list[str | int | None] = []
    pos = 0
    text = path.strip()
    while pos < len(text):
        if text[pos] == "." and steps:
            pos += 1
        m = _STEP.match(text, pos)
        if m is None:
            raise ConfigError(
                "bad JSON path: use dotted keys with [*] or [n] for list items",
                value=path,
                hint="e.g. hits.hits[*] or data.results",
            )
        if m.group(1) is not None:
            steps.append(m.group(1))
        else:
            steps.append(None if m.group(2) == "*" else int(m.group(2)))
        pos = m.end()
    return steps


def follow(data: Any, steps: list[str | int | None], path: str, where: str) -> Any:
    """The value at ``steps`` in ``data``; ``[*]`` maps the rest of the path over a list."""
    for i, step in enumerate(steps):
        if step is None:
            if not isinstance(data, list):
                raise EngineError(f"{where}: {path!r} expects a list at [*], got {_kind(data)}")
            rest = steps[i + 1 :]
            return [follow(item, rest, path, where) for item in data] if rest else data
        if isinstance(step, int):
            if not isinstance(data, list) or not -len(data) <= step < len(data):
                raise EngineError(f"{where}: {path!r} has no item [{step}] in {_kind(data)}")
            data = data[step]
        else:
            if not isinstance(data, dict) or step not in data:
                keys = ", ".join(map(str, list(data)[:10])) if isinstance(data, dict) else ""
                raise EngineError(
                    f"{where}: no key {step!r} on the way to {path!r} (found "
                    f"{_kind(data)}{': ' + keys if keys else ''})"
                )
            data = data[step]
    return data


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else type(value).__name__


def _fill(template: Any, query: str, k: int) -> Any:
    if isinstance(template, str):
        if template == "{query}":
            return query
        if template == "{k}":
            return k
        return _PLACEHOLDER.sub(lambda m: query if m.group(1) == "query" else str(k), template)
    if isinstance(template, list):
        return [_fill(v, query, k) for v in template]
    if isinstance(template, dict):
        return {key: _fill(v, query, k) for key, v in template.items()}
    return template


@register_engine("http")
class HttpEngine(Engine):
    """A search API reached over HTTP.

    Options: ``url`` (URL template, ``{query}`` and ``{k}`` URL-encoded), ``method`` (``GET`` or
    ``POST``), ``body`` (JSON body template for POST), ``results_path`` (dotted path to the
    result list, ``""`` when the response is the list), ``id_field`` (``id``), ``score_field``
    (``score``), ``headers``, ``timeout`` (seconds, 10), ``index_url`` (optional).
    """

    name = "http"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})
    thread_safe = True

    def __init__(
        self,
        url: str,
        *,
        method: Literal["GET", "POST"] = "GET",
        body: Mapping[str, Any] | None = None,
        results_path: str = "",
        id_field: str = "id",
        score_field: str = "score",
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        index_url: str | None = None,
    ) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise EngineError(
                "engine 'http' needs the httpx package: pip install 'rankscope[http]'"
            ) from exc
        method_up = str(method).upper()
        if method_up not in ("GET", "POST"):
            raise ConfigError("http engine option 'method' must be GET or POST", value=method)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(
                "http engine option 'url' must be an http:// or https:// URL template",
                value=url,
                hint="e.g. url: 'http://localhost:9200/docs/_search?q={query}&size={k}'",
            )
        if method_up == "POST" and body is None:
            raise ConfigError(
                "http engine with method POST needs a 'body' template",
                hint='e.g. body: {"query": "{query}", "size": "{k}"}',
            )
        if timeout is None or float(timeout) <= 0:
            raise ConfigError("http engine option 'timeout' must be positive", value=timeout)
        self.url = url
        self.method = method_up
        self.body = body
        self.results_path = results_path
        self._results_steps = parse_path(results_path) if results_path else []
        self.id_field = id_field
        self.score_field = score_field
        self._id_steps = parse_path(id_field)
        self._score_steps = parse_path(score_field)
        self.index_url = index_url
        self._client = httpx.Client(timeout=float(timeout), headers=dict(headers or {}))
        self._httpx = httpx

    @classmethod
    def preflight(
        cls, options: Mapping[str, Any], *, base_dir: Path, query: Query
    ) -> list[tuple[str, str, str]]:
        """One probe: ``query`` sent as a benchmark would send it, its answer read as hits."""
        try:
            with cls(**options) as engine:
                engine.search(query, 1)
        except ConfigError as error:
            return [("url", error.problem, error.hint or "")]
        except EngineError as error:
            return [
                (
                    "url",
                    f"the probe query {query.text[:40]!r} failed ({error})",
                    "Start the service first, fix the options, or skip this check with --no-probe",
                )
            ]
        except TypeError as error:  # options the declaration check already names
            return [("url", str(error), "")]
        return []

    def _request(self, method: str, url: str, json_body: Any, what: str) -> Any:
        httpx = self._httpx
        try:
            resp = self._client.request(method, url, json=json_body)
        except httpx.ConnectError as exc:
            raise EngineError(
                f"{what}: cannot connect to {_origin(url)} ({exc}); is the search service "
                "running and the URL right?"
            ) from exc
        except httpx.TimeoutException as exc:
            raise EngineError(
                f"{what}: {_origin(url)} did not answer within {self._client.timeout.read}s; "
                "raise the 'timeout' option or check the service"
            ) from exc
        except httpx.HTTPError as exc:
            raise EngineError(f"{what}: request to {_origin(url)} failed: {exc}") from exc
        if not 200 <= resp.status_code < 300:
            raise EngineError(
                f"{what}: {method} {_origin(url)} returned HTTP {resp.status_code}: "
                f"{resp.text[:200]!r}"
            )
        if not resp.content:
            return None
        try:
            return resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise EngineError(
                f"{what}: {_origin(url)} returned a body that is not JSON: {resp.text[:200]!r}"
            ) from exc

    def index(self, docs: Iterable[Document]) -> None:
        if self.index_url is None:
            return
        payload = {
            "documents": [
                {"id": d.id, "title": d.title, "text": d.text, "fields": dict(d.fields)}
                for d in docs
            ]
        }
        self._request("POST", self.index_url, payload, "http engine indexing")

    def _search(self, query: Query, k: int) -> list[Hit]:
        what = f"http engine, query {query.id!r}"
        if self.method == "GET":
            quoted = urllib.parse.quote(query.text, safe="")
            url = _PLACEHOLDER.sub(lambda m: quoted if m.group(1) == "query" else str(k), self.url)
            data = self._request("GET", url, None, what)
        else:
            data = self._request("POST", self.url, _fill(self.body, query.text, k), what)
        results = follow(data, self._results_steps, self.results_path or "(root)", what)
        if not isinstance(results, list):
            raise EngineError(
                f"{what}: results_path {self.results_path!r} leads to {_kind(results)}, not a list"
            )
        hits = []
        for n, item in enumerate(results):
            where = f"{what}, result {n}"
            doc = follow(item, self._id_steps, self.id_field, where)
            score = follow(item, self._score_steps, self.score_field, where)
            if isinstance(doc, (dict, list)) or doc is None:
                raise EngineError(f"{where}: id field {self.id_field!r} is {_kind(doc)}")
            at = f"{where} (id {doc!r}), score field {self.score_field!r}"
            hits.append(Hit(doc_id=str(doc), score=coerce_score(score, at)))
        return best_first(hits, k)

    def close(self) -> None:
        self._client.close()


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"
