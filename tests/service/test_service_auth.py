"""Authentication: API keys (hashed, revocable) and JWTs (HS256 secret, RS256 key or JWKS)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient

from rankscope.service.app import create_app
from rankscope.service.store.db import make_engine, migrate
from rankscope.service.store.keys import create_key, hash_key, revoke_key
from serve_helpers import COLLECT, METRICS, bearer, record, sqlite_settings

pytestmark = pytest.mark.service
SECRET = "a-long-test-secret-of-at-least-32-bytes!"


def claims(sub: str = "alice", **extra: Any) -> dict[str, Any]:
    return {"sub": sub, "exp": int(time.time()) + 600, **extra}


def status(client: TestClient, token: str) -> int:
    return client.get(METRICS, headers=bearer(token)).status_code


def test_keys_are_stored_hashed_and_revocable(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite", api_key_cache_seconds=0)
    engine = make_engine(settings.database_url)
    migrate(engine)
    key, info = create_key(engine, "alice")
    with engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT key_hash, user_id FROM api_keys").all()
    assert stored == [(hash_key(key), "alice")] and key not in str(stored)
    with TestClient(create_app(settings)) as client:
        assert status(client, key) == 200
        revoke_key(engine, key)
        assert status(client, key) == 401
        assert status(client, key[:-1] + ("A" if key[-1] != "A" else "B")) == 401
    engine.dispose()
    assert info.id in key


def test_hs256_jwts(tmp_path: Path) -> None:
    settings = sqlite_settings(
        tmp_path / "m.sqlite", jwt_secret=SECRET, jwt_audience="authenticated"
    )
    with TestClient(create_app(settings)) as client:
        good = jwt.encode(claims(aud="authenticated"), SECRET, algorithm="HS256")
        r = client.post(COLLECT, json=record(), headers=bearer(good))
        assert r.status_code == 201 and r.json()["data"]["userId"] == "alice"
        for token in (
            jwt.encode(claims(aud="authenticated", exp=int(time.time()) - 3600), SECRET, "HS256"),
            jwt.encode(claims(aud="other"), SECRET, algorithm="HS256"),
            jwt.encode(claims(aud="authenticated"), "another-secret-of-32-bytes-length!!", "HS256"),
            jwt.encode({"sub": "alice", "aud": "authenticated"}, SECRET, "HS256"),  # no exp
            jwt.encode({"exp": int(time.time()) + 60, "aud": "authenticated"}, SECRET, "HS256"),
            jwt.encode(claims(aud="authenticated"), None, algorithm="none"),  # type: ignore[arg-type]  # unsigned
            good[:-4] + "AAAA",
            "a.b.c",
        ):
            r = client.get(METRICS, headers=bearer(token))
            assert r.status_code == 401, token
            assert r.json()["error"]["code"] == "unauthorized"
            assert r.headers["WWW-Authenticate"] == "Bearer"


def _rsa() -> tuple[Any, bytes]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


def _hs256_with(secret: bytes, payload: dict[str, Any]) -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing = part(b'{"alg":"HS256","typ":"JWT"}') + "." + part(json.dumps(payload).encode())
    signature = hmac.new(secret, signing.encode(), hashlib.sha256).digest()
    return signing + "." + part(signature)


def test_rs256_public_key_and_jwks(tmp_path: Path) -> None:
    private, public = _rsa()
    other, _ = _rsa()
    pem = tmp_path / "public.pem"
    pem.write_bytes(public)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [{**jwk, "kid": "k1", "alg": "RS256", "use": "sig"}]}))
    for extra in ({"jwt_public_key_file": pem}, {"jwks_file": jwks}):
        settings = sqlite_settings(tmp_path / f"m{len(extra)}{next(iter(extra))}.sqlite", **extra)
        with TestClient(create_app(settings)) as client:
            headers = {"kid": "k1"}
            good = jwt.encode(claims(), private, algorithm="RS256", headers=headers)
            assert status(client, good) == 200
            forged = jwt.encode(claims(), other, algorithm="RS256", headers=headers)
            assert status(client, forged) == 401
            # an HS256 token signed with the public key as secret (algorithm confusion)
            assert status(client, _hs256_with(public, claims())) == 401
            hs = jwt.encode(claims(), "x" * 40, algorithm="HS256")
            assert status(client, hs) == 401
            if "jwks_file" in extra:
                wrong_kid = jwt.encode(claims(), private, algorithm="RS256", headers={"kid": "k9"})
                assert status(client, wrong_kid) == 401


def test_service_role_writes_for_users_and_reads_everything(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite", jwt_secret=SECRET)
    with TestClient(create_app(settings)) as client:
        service = jwt.encode(claims("backend", role="service_role"), SECRET, "HS256")
        alice = jwt.encode(claims("alice", role="authenticated"), SECRET, "HS256")
        r = client.post(COLLECT, json=record(userId="alice"), headers=bearer(service))
        assert r.status_code == 201 and r.json()["data"]["userId"] == "alice"
        client.post(COLLECT, json=record(), headers=bearer(service))  # its own row
        mine = client.get(METRICS, headers=bearer(alice)).json()["data"]["queries"]
        assert [q["userId"] for q in mine] == ["alice"]
        every = client.get(METRICS, headers=bearer(service)).json()["data"]["queries"]
        assert sorted(q["userId"] for q in every) == ["alice", "backend"]
        one = client.get(METRICS, params={"userId": "alice"}, headers=bearer(service))
        assert [q["userId"] for q in one.json()["data"]["queries"]] == ["alice"]
        rid = every[0]["id"]
        assert client.get(f"{METRICS}/{rid}", headers=bearer(service)).status_code == 200
        assert (
            client.post(COLLECT, json=record(userId="bob"), headers=bearer(alice)).status_code
            == 403
        )


def test_cross_user_reads_leak_nothing(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite")
    engine = make_engine(settings.database_url)
    migrate(engine)
    keys = {u: create_key(engine, u)[0] for u in ("alice", "bob")}
    engine.dispose()
    with TestClient(create_app(settings)) as client:
        ids: dict[str, list[str]] = {"alice": [], "bob": []}
        for i in range(20):
            user = "alice" if i % 2 else "bob"
            body = record(f"{user} {i}", options={"topicId": "shared"}, collectId=f"c{i % 4}")
            r = client.post(COLLECT, json=body, headers=bearer(keys[user]))
            ids[user].append(r.json()["data"]["id"])
        for user, other in (("alice", "bob"), ("bob", "alice")):
            h = bearer(keys[user])
            listed = client.get(METRICS, params={"topicId": "shared"}, headers=h).json()["data"]
            assert {q["userId"] for q in listed["queries"]} == {user}
            for rid in set(ids[other]):
                assert client.get(f"{METRICS}/{rid}", headers=h).status_code == 404
            export = client.get(
                f"{METRICS}/export", params={"judgments": "heuristic", "part": "queries"}, headers=h
            )
            assert other not in export.text
            series = client.get(f"{METRICS}/timeseries", headers=h).json()["data"]["points"]
            assert sum(p["stats"]["count"] for p in series) == len(set(ids[user]))


def test_cached_keys_and_jwts_need_no_database_read(tmp_path: Path) -> None:
    """The request's dependencies run on the event loop: only an API key missing from the
    cache is looked up (in a worker thread); the answers, 401s included, do not change."""
    from rankscope.service.auth import Authenticator
    from rankscope.service.errors import ApiError

    settings = sqlite_settings(tmp_path / "m.sqlite", jwt_secret=SECRET)
    engine = make_engine(settings.database_url)
    migrate(engine)
    key, _ = create_key(engine, "alice", role="service")
    auth = Authenticator(settings, engine)
    assert auth.principal_without_io(f"Bearer {key}") is None  # not looked up yet
    first = auth.principal(f"Bearer {key}")
    assert auth.principal_without_io(f"Bearer {key}") == first
    assert (first.user_id, first.role) == ("alice", "service")
    token = jwt.encode(claims(sub="bob"), SECRET, algorithm="HS256")
    found = auth.principal_without_io(f"Bearer {token}")
    assert found is not None and (found.user_id, found.role) == ("bob", "user")
    for header in (None, "Basic abc", "Bearer nonsense", "Bearer a.b.c"):
        with pytest.raises(ApiError) as caught:
            auth.principal_without_io(header)
        assert caught.value.status == 401
    engine.dispose()
