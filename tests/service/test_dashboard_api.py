"""What the dashboard reads besides the existing endpoints (``GET /api/me``, ``zeroResults``,
``sort``, ``judgmentSource=judged``, ``breakdown?by=user``), and how its files are served: from
the package, offline, with a strict Content-Security-Policy; ``/docs`` without a CDN."""

from __future__ import annotations

import re
import typing
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from rankscope.service.api.routes.records import SORT_COLUMNS, SortChoice
from rankscope.service.app import create_app
from rankscope.service.dashboard import STATIC
from serve_helpers import COLLECT, METRICS, PgDatabase, Service, bearer, doc, make_keys, record


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> Iterator[Service]:
    """The service on SQLite, and on PostgreSQL as the row-level-secured app role."""
    if request.param == "sqlite":
        yield request.getfixturevalue("service")
        return
    database: PgDatabase = request.getfixturevalue("pg_database")
    keys = make_keys(database.admin_dsn)
    settings = database.settings()
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield Service(client, keys, settings)


def _collect(service: Service, key: str, body: dict[str, typing.Any]) -> str:
    response = service.client.post(COLLECT, json=body, headers=bearer(key))
    assert response.status_code == 201, response.text
    return str(response.json()["data"]["id"])


def _seed(service: Service) -> dict[str, str]:
    k = service.keys
    ids = {
        "judged_good": _collect(
            service, k.alice, record("good", [doc("a", 0.9)], relevantDocumentIds=["a"])
        ),
        "judged_bad": _collect(
            service, k.alice, record("bad", [doc("x", 0.9), doc("a", 0.2)], judgments={"a": 1})
        ),
        "judged_empty": _collect(service, k.alice, record("empty", [], relevantDocumentIds=["a"])),
        "heuristic_empty": _collect(service, k.alice, record("nothing", [])),
        "heuristic": _collect(service, k.alice, record("guess", [doc("a", 0.95)])),
        "bob": _collect(service, k.bob, record("bob's", [], relevantDocumentIds=["z"])),
    }
    response = service.client.post(
        f"{METRICS}/{ids['heuristic']}/feedback",
        json={"relevantDocumentIds": ["b"]},
        headers=bearer(k.alice),
    )
    assert response.status_code == 200
    return ids


def test_me_names_user_and_role(backend: Service) -> None:
    service = backend
    me = service.client.get("/api/me", headers=bearer(service.keys.alice)).json()["data"]
    assert me == {"userId": "alice", "role": "user"}
    me = service.client.get("/api/me", headers=bearer(service.keys.service)).json()["data"]
    assert me == {"userId": "svc", "role": "service"}
    assert service.client.get("/api/me").status_code == 401


def test_zero_results_counted_per_kind(backend: Service) -> None:
    service = backend
    _seed(service)
    key = bearer(service.keys.alice)
    groups = service.client.get(f"{METRICS}/summary", headers=key).json()["data"]
    judged, heuristic = (groups["byJudgmentSource"][k] for k in ("judged", "heuristic"))
    # judged: good, bad, empty, and the heuristic row turned feedback; heuristic: nothing
    assert (judged["count"], judged["zeroResults"]) == (4, 1)
    assert (heuristic["count"], heuristic["zeroResults"]) == (1, 1)
    points = service.client.get(f"{METRICS}/timeseries", headers=key).json()["data"]["points"]
    assert sum(p["stats"]["zeroResults"] for p in points) == 2
    groups = service.client.get(f"{METRICS}/breakdown", headers=key).json()["data"]["groups"]
    assert sum(g["stats"]["zeroResults"] for g in groups) == 2


def test_sort_lists_worst_first(backend: Service) -> None:
    service = backend
    _seed(service)
    key = bearer(service.keys.alice)
    page = service.client.get(METRICS, params={"sort": "ndcg"}, headers=key).json()["data"]
    values = [q["ndcg"] for q in page["queries"]]
    assert values == sorted(values) and values[0] == 0.0 and values[-1] == 1.0
    page = service.client.get(METRICS, params={"sort": "-recall"}, headers=key).json()["data"]
    values = [q["recall"] for q in page["queries"]]
    assert values == sorted(values, reverse=True)
    # ties newest first, as without sort
    newest = service.client.get(METRICS, headers=key).json()["data"]["queries"]
    zeros = [q["id"] for q in newest if q["averagePrecision"] == 0.0]
    page = service.client.get(METRICS, params={"sort": "averagePrecision"}, headers=key).json()
    assert [q["id"] for q in page["data"]["queries"][: len(zeros)]] == zeros
    bad = service.client.get(METRICS, params={"sort": "query"}, headers=key)
    assert bad.status_code == 422
    assert bad.json()["error"]["details"][0]["path"] == "query.sort"


def test_sort_choices_are_the_sortable_columns() -> None:
    names = set(typing.get_args(SortChoice))
    assert names == set(SORT_COLUMNS) | {f"-{n}" for n in SORT_COLUMNS}


def test_judged_filter_is_provided_and_feedback(backend: Service) -> None:
    service = backend
    ids = _seed(service)
    key = bearer(service.keys.alice)
    page = service.client.get(METRICS, params={"judgmentSource": "judged"}, headers=key).json()
    got = {q["id"]: q["judgmentSource"] for q in page["data"]["queries"]}
    assert set(got) == {ids[k] for k in ("judged_good", "judged_bad", "judged_empty", "heuristic")}
    assert set(got.values()) == {"provided", "feedback"}
    summary = service.client.get(
        f"{METRICS}/summary", params={"judgmentSource": "judged"}, headers=key
    ).json()["data"]
    assert summary["byJudgmentSource"]["heuristic"]["count"] == 0


def test_breakdown_by_user_keeps_users_apart(backend: Service) -> None:
    service = backend
    _seed(service)
    by_user = {"by": "user"}
    mine = service.client.get(
        f"{METRICS}/breakdown", params=by_user, headers=bearer(service.keys.alice)
    ).json()["data"]
    assert {g["key"] for g in mine["groups"]} == {"alice"}
    every = service.client.get(
        f"{METRICS}/breakdown", params=by_user, headers=bearer(service.keys.service)
    ).json()["data"]
    counts: dict[str, int] = {}
    for g in every["groups"]:
        counts[g["key"]] = counts.get(g["key"], 0) + g["stats"]["count"]
    assert counts == {"alice": 5, "bob": 1}


def test_dashboard_shell_is_served_with_a_strict_policy(service: Service) -> None:
    response = service.client.get("/dashboard")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    assert response.headers["x-frame-options"] == "DENY"
    assert service.client.get("/dashboard/", follow_redirects=False).status_code == 308


def test_docs_are_served_with_a_strict_policy(service: Service) -> None:
    """/docs had neither a policy nor X-Frame-Options: any site could frame it. Its one inline
    script (Swagger UI's start) is allowed by its hash, nothing else inline."""
    import base64
    import hashlib

    response = service.client.get("/docs")
    assert response.status_code == 200
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    policy = response.headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["connect-src"] == "'self'" and directives["style-src"] == "'self'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    (inline,) = re.findall(r"<script>(.*?)</script>", response.text, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
    assert directives["script-src"] == f"'self' 'sha256-{digest}'"


def _local_references(text: str) -> set[str]:
    found = set(re.findall(r'(?:src|href)="(/[^"]+)"', text))
    return found


def test_every_file_the_page_loads_is_served(service: Service) -> None:
    """The shell's scripts and styles, and every module they import, answer 200."""
    shell = service.client.get("/dashboard").text
    wanted = {u for u in _local_references(shell) if u.startswith("/static/")}
    assert "/static/dashboard/js/main.js" in wanted
    assert "/static/vendor/uplot/uPlot.iife.min.js" in wanted
    seen: set[str] = set()
    while wanted:
        url = wanted.pop()
        seen.add(url)
        response = service.client.get(url)
        assert response.status_code == 200, url
        # revalidated on each load: no old module beside a new one after an upgrade
        assert response.headers["cache-control"] == "no-cache"
        etag = response.headers["etag"]
        again = service.client.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304
        if url.endswith(".js") and "/vendor/" not in url:
            assert "javascript" in response.headers["content-type"]
            base = url.rsplit("/", 1)[0]
            for name in re.findall(r'from "\./([^"]+)"', response.text):
                wanted.add(f"{base}/{name}")
            for name in re.findall(r'from "\.\./([^"]+)"', response.text):
                wanted.add(f"{base.rsplit('/', 1)[0]}/{name}")
    assert {"/static/dashboard/js/panels/index.js", "/static/dashboard/js/api.js"} <= seen


def test_dashboard_files_name_no_other_host() -> None:
    """Nothing in the dashboard's own files points at another host (the vendored libraries'
    comments name their home pages; they fetch nothing)."""
    for path in (STATIC / "dashboard").rglob("*"):
        if path.is_file() and path.suffix in {".js", ".css", ".html", ".svg"}:
            text = path.read_text(encoding="utf-8")
            hosts = re.findall(r"https?://[^\s\"')]+", text)
            assert hosts == [] or all(h == "http://www.w3.org/2000/svg" for h in hosts), path


def test_docs_use_the_packaged_swagger_ui(service: Service) -> None:
    page = service.client.get("/docs")
    assert page.status_code == 200
    refs = _local_references(page.text)
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in refs
    assert "/static/vendor/swagger-ui/swagger-ui.css" in refs
    assert not re.search(r"(?:src|href)=\"https?:", page.text)
    assert '"validatorUrl": null' in page.text
    for url in refs:
        assert service.client.get(url).status_code == 200, url
    assert service.client.get("/openapi.json").status_code == 200


def test_wheel_ships_the_dashboard_files(tmp_path: Path) -> None:
    wheel = pytest.importorskip("hatchling.builders.wheel", reason="pip install hatchling")
    root = Path(__file__).resolve().parents[2]
    builder = wheel.WheelBuilder(str(root))
    built = list(builder.build(directory=str(tmp_path), versions=["standard"]))
    names = set(zipfile.ZipFile(built[0]).namelist())
    for path in STATIC.rglob("*"):
        if path.is_file():
            inside = "rankscope/" + path.relative_to(root / "src" / "rankscope").as_posix()
            assert inside in names, inside
