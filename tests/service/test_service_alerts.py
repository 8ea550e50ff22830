"""Regression alerts end to end (records through the API, rules in the settings, the check
command, a webhook on a loopback receiver), webhook retries, retention and purge."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from online_traffic import send, simulate

from rankscope.cli.app import main
from rankscope.service.analysis.webhooks import deliver
from rankscope.service.app import create_app
from rankscope.testing.traffic import Universe
from rankscope.testing.webhooks import WebhookReceiver
from serve_helpers import Keys, bearer, make_keys, sqlite_settings

pytestmark = pytest.mark.service
NOW = dt.datetime(2024, 5, 9, tzinfo=dt.UTC)
BASELINE_START = NOW - dt.timedelta(days=8)
WINDOW_START = NOW - dt.timedelta(days=1)
UNIVERSE = Universe.make(20, 15, seed=8)


def rule(**extra: Any) -> dict[str, Any]:
    return {"name": "ndcg-drop", "measure": "ndcg", "min_n": 30, "min_delta": 0.03, **extra}


def traffic(current_noise: float, *, seed: int) -> tuple[Any, Any]:
    base = simulate(
        UNIVERSE,
        280,
        noise=1.0,
        seed=seed,
        judged=True,
        events=False,
        start=BASELINE_START,
        spacing=dt.timedelta(minutes=36),
        prefix="b",
    )
    current = simulate(
        UNIVERSE,
        60,
        noise=current_noise,
        seed=seed + 1,
        judged=True,
        events=False,
        start=WINDOW_START,
        spacing=dt.timedelta(minutes=20),
        prefix="c",
    )
    return base, current


def load(client: TestClient, keys: Keys, current_noise: float, *, seed: int = 1) -> None:
    """Alice: 7 baseline days of a good engine, then a day of ``current_noise``; bob: only the
    good engine."""
    base, current = traffic(current_noise, seed=seed)
    send(client, keys.alice, base)
    send(client, keys.alice, current)
    calm = simulate(
        UNIVERSE,
        340,
        noise=1.0,
        seed=seed + 2,
        judged=True,
        events=False,
        start=BASELINE_START,
        spacing=dt.timedelta(minutes=34),
        prefix="x",
    )
    send(client, keys.bob, calm)


def write_config(path: Path, url: str, rules: list[dict[str, Any]]) -> Path:
    lines = [f'alert_webhook_url = "{url}"', "webhook_backoff_seconds = 0.01"]
    for r in rules:
        lines.append("[[alert_rules]]")
        for k, v in r.items():
            lines.append(f"{k} = {v!r}".replace("'", '"'))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_alert_fires_on_an_injected_regression_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite")
    keys = make_keys(settings.database_url)
    with TestClient(create_app(settings)) as client:
        load(client, keys, current_noise=2.5)
    with WebhookReceiver(script=[503, (429, 0)]) as hook:
        # at least 10 values and 10 queries seen in both windows: paired over queries
        config = write_config(tmp_path / "s.toml", hook.url, [rule(min_n=10)])
        args = [
            "serve",
            "check-alerts",
            "--database-url",
            settings.database_url,
            "--config",
            str(config),
            "--now",
            NOW.isoformat(),
        ]
        assert main(args) == 1  # something fired
        out = capsys.readouterr().out
        assert "2 groups checked, 1 new alerts" in out and "alice\tdelivered" in out
        # two refusals, then delivered
        assert [r.status for r in hook.received] == [503, 429, 200]
        body = hook.delivered()[0].body
        alert = body["alert"]
        assert body["text"] == alert["message"] and "ndcg fell from" in alert["message"]
        assert alert["userId"] == "alice" and alert["method"] == "paired_t"
        assert alert["delta"] < -0.03 and alert["ciHigh"] < 0
        base, current = traffic(2.5, seed=1)
        common = {r["query"] for r in base.records} & {r["query"] for r in current.records}
        assert alert["pairedQueries"] == len(common) >= 10
        assert alert["nCurrent"] == 60 and alert["nBaseline"] == 280
        assert alert["deliveryStatus"] == "pending"  # as sent; stored as delivered below
        # the same day again: nothing new, nothing sent
        assert main(args) == 0
        assert "0 new alerts" in capsys.readouterr().out and len(hook.received) == 3
    with TestClient(create_app(settings)) as client:
        mine = client.get("/api/alerts", headers=bearer(keys.alice)).json()["data"]["alerts"]
        assert [(a["deliveryStatus"], a["deliveryAttempts"]) for a in mine] == [("delivered", 3)]
        assert client.get("/api/alerts", headers=bearer(keys.bob)).json()["data"]["alerts"] == []
        every = client.get(
            "/api/alerts", headers=bearer(keys.service), params={"status": "delivered"}
        ).json()["data"]["alerts"]
        assert len(every) == 1
        assert (
            client.get(
                "/api/alerts", headers=bearer(keys.alice), params={"userId": "bob"}
            ).status_code
            == 403
        )


def test_noise_fires_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite")
    keys = make_keys(settings.database_url)
    with TestClient(create_app(settings)) as client:
        load(client, keys, current_noise=1.0, seed=20)
    with WebhookReceiver() as hook:
        config = write_config(
            tmp_path / "s.toml", hook.url, [rule(), rule(name="ewma", method="ewma")]
        )
        assert (
            main(
                [
                    "serve",
                    "check-alerts",
                    "--database-url",
                    settings.database_url,
                    "--config",
                    str(config),
                    "--now",
                    NOW.isoformat(),
                ]
            )
            == 0
        )
        assert hook.received == []
    assert "4 groups checked, 0 new alerts" in capsys.readouterr().out


def test_ewma_rule_and_scopes(tmp_path: Path) -> None:
    from rankscope.service.admin import open_online
    from rankscope.service.analysis.alerts import check_alerts
    from rankscope.service.settings import load_settings

    settings = sqlite_settings(tmp_path / "m.sqlite")
    keys = make_keys(settings.database_url)
    with TestClient(create_app(settings)) as client:
        load(client, keys, current_noise=2.5, seed=3)
    rules = [
        rule(name="ewma", method="ewma"),
        rule(name="by-type", by="searchType"),
        rule(name="heuristic", judgments="heuristic"),
    ]
    configured = load_settings(database_url=settings.database_url, alert_rules=rules)
    with open_online(configured) as online:
        result = check_alerts(online, configured, NOW)
    fired = {(a["rule"], a["user_id"], a["scope"], a["scope_value"]) for a in result.fired}
    assert fired == {("ewma", "alice", "user", None), ("by-type", "alice", "searchType", "none")}
    ewma = next(a for a in result.fired if a["rule"] == "ewma")
    assert ewma["method"] == "ewma" and "lower control limit" in ewma["message"]
    assert ewma["delivery_status"] == "none"  # no webhook configured


def test_check_endpoint_and_the_in_server_interval(tmp_path: Path) -> None:
    with WebhookReceiver() as hook:
        settings = sqlite_settings(
            tmp_path / "m.sqlite",
            alert_rules=[rule(window_days=1, baseline_days=7)],
            alert_webhook_url=hook.url,
            alert_check_interval_seconds=0.2,
        )
        keys = make_keys(settings.database_url)
        now = dt.datetime.now(dt.UTC)
        base = simulate(
            UNIVERSE,
            200,
            noise=1.0,
            seed=5,
            judged=True,
            events=False,
            start=now - dt.timedelta(days=6),
            spacing=dt.timedelta(minutes=30),
        )
        current = simulate(
            UNIVERSE,
            60,
            noise=2.5,
            seed=6,
            judged=True,
            events=False,
            start=now - dt.timedelta(hours=10),
            spacing=dt.timedelta(minutes=5),
            prefix="c",
        )
        with TestClient(create_app(settings)) as client:
            assert client.post("/api/alerts/check", headers=bearer(keys.alice)).status_code == 403
            send(client, keys.alice, base)
            send(client, keys.alice, current)
            assert hook.wait_for(1, timeout=20), "the in-server check never delivered"
            r = client.post("/api/alerts/check", headers=bearer(keys.service))
            assert r.status_code == 200 and r.json()["data"]["fired"] == []  # already raised
        assert len(hook.delivered()) == 1


def test_deliver_retries_with_backoff_and_stops_on_a_refusal() -> None:
    waits: list[float] = []
    with WebhookReceiver(script=[500, (503, 3), 200]) as hook:
        done = deliver(hook.url, {"x": 1}, attempts=5, backoff=0.5, sleep=waits.append)
        assert (done.delivered, done.attempts, done.status) == (True, 3, 200)
        assert waits == [0.5, 3.0]  # backoff, then the receiver's Retry-After (longer)
        assert hook.received[0].body == {"x": 1}
        assert hook.received[0].headers["User-Agent"] == "rankscope-alerts"
    with WebhookReceiver(script=[400]) as hook:
        refused = deliver(hook.url, {}, attempts=5, sleep=waits.append)
        assert (refused.delivered, refused.attempts, refused.status) == (False, 1, 400)
    with WebhookReceiver(script=[500] * 9) as hook:
        failed = deliver(hook.url, {}, attempts=3, backoff=0.1, sleep=lambda s: None)
        assert (failed.delivered, failed.attempts) == (False, 3) and "HTTP 500" in str(failed.error)
    unreachable = deliver("http://127.0.0.1:9/hook", {}, attempts=2, sleep=lambda s: None)
    assert not unreachable.delivered and unreachable.status is None and unreachable.error


def test_retention_and_purge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite")
    keys = make_keys(settings.database_url)
    now = dt.datetime.now(dt.UTC)
    old = simulate(
        UNIVERSE,
        10,
        noise=1.0,
        seed=1,
        start=now - dt.timedelta(days=40),
        spacing=dt.timedelta(minutes=1),
        prefix="old",
    )
    new = simulate(
        UNIVERSE,
        5,
        noise=1.0,
        seed=2,
        start=now - dt.timedelta(days=1),
        spacing=dt.timedelta(minutes=1),
        prefix="new",
    )
    with TestClient(create_app(settings)) as client:
        for key in (keys.alice, keys.bob):
            send(client, key, old)
            send(client, key, new)
        put = client.put("/api/retention", json={"retentionDays": 30}, headers=bearer(keys.alice))
        assert put.json()["data"] == {
            "userId": "alice",
            "retentionDays": 30,
            "defaultRetentionDays": None,
            "effectiveRetentionDays": 30,
        }
        assert (
            client.put(
                "/api/retention", json={"retentionDays": 0}, headers=bearer(keys.alice)
            ).status_code
            == 422
        )
        assert (
            client.get(
                "/api/retention", params={"userId": "alice"}, headers=bearer(keys.bob)
            ).status_code
            == 403
        )
        n_old_events = len([e for e in old.events])
    url = settings.database_url
    assert main(["serve", "purge", "--database-url", url, "--dry-run"]) == 0
    assert f"alice: would delete 10 records, {n_old_events} events, 0 alerts" in (
        capsys.readouterr().out
    )
    assert main(["serve", "purge", "--database-url", url]) == 0
    out = capsys.readouterr().out
    assert f"alice: deleted 10 records, {n_old_events} events" in out and "bob" not in out
    with TestClient(create_app(settings)) as client:
        alice = client.get("/api/metrics/retrieval/summary", headers=bearer(keys.alice)).json()[
            "data"
        ]
        bob = client.get("/api/metrics/retrieval/summary", headers=bearer(keys.bob)).json()["data"]
        assert alice["byJudgmentSource"]["heuristic"]["count"] == 5
        assert bob["byJudgmentSource"]["heuristic"]["count"] == 15
    # a service-wide default covers bob too
    (tmp_path / "r.toml").write_text("retention_days = 7\n")
    assert (
        main(["serve", "purge", "--database-url", url, "--config", str(tmp_path / "r.toml")]) == 0
    )
    assert "bob: deleted 10 records" in capsys.readouterr().out
    time.sleep(0)  # nothing left running
