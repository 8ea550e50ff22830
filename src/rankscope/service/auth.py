"""Who is calling: ``Authorization: Bearer <token>`` with an API key or a JWT.

- API keys (``rsk_<id>_<secret>``, made by ``rankscope serve create-key``) are looked up by
  their SHA-256; a key carries its user and role (``user`` or ``service``).
- JWTs are verified with the HS256 secret, or with the RS256 public key / JWKS file of the
  settings (never ``alg: none``); ``exp`` (a number, at most ``jwt_max_lifetime_seconds``
  ahead) and ``sub`` are required, ``aud`` and ``iss`` checked when configured; times allow
  ``jwt_leeway_seconds`` of clock difference. ``sub`` is the user; a ``role`` claim listed in
  ``jwt_service_roles`` (Supabase's ``service_role``) gives the service role.

Anything missing, malformed, expired, revoked or badly signed is a 401.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import jwt
from sqlalchemy import Engine

from rankscope.errors import ConfigError
from rankscope.service.errors import unauthorized
from rankscope.service.settings import ServiceSettings
from rankscope.service.store.db import Principal
from rankscope.service.store.keys import KEY_PREFIX, KeyInfo, hash_key, lookup_key


class Authenticator:
    def __init__(self, settings: ServiceSettings, engine: Engine) -> None:
        self._settings = settings
        self._engine = engine
        self._cache: dict[str, tuple[KeyInfo, float]] = {}
        self._lock = threading.Lock()
        self._secret = settings.jwt_secret.get_secret_value() if settings.jwt_secret else None
        self._public_key = (
            _read(settings.jwt_public_key_file) if settings.jwt_public_key_file else None
        )
        self._jwks = _jwks(settings.jwks_file) if settings.jwks_file else None

    def principal(self, authorization: str | None) -> Principal:
        """The caller; may read the database (an API key not in the cache)."""
        found = self.principal_without_io(authorization)
        if found is not None:
            return found
        return self._api_key(self._token(authorization))

    def principal_without_io(self, authorization: str | None) -> Principal | None:
        """The caller when no database read is needed (a JWT, a cached API key), else None;
        the same 401s as :meth:`principal`. Lets the event loop answer most requests without
        a hand-off to a thread."""
        token = self._token(authorization)
        if token.startswith(KEY_PREFIX):
            return self._cached_key(hash_key(token))
        return self._jwt(token)

    def _token(self, authorization: str | None) -> str:
        if not authorization:
            raise unauthorized("missing Authorization header: send 'Authorization: Bearer <token>'")
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise unauthorized("the Authorization header must be 'Bearer <token>'")
        if token.startswith(KEY_PREFIX) or token.count(".") == 2:
            return token
        raise unauthorized("the token is neither an API key nor a JWT")

    # -- API keys ----------------------------------------------------------------------------

    def _cached_key(self, digest: str) -> Principal | None:
        with self._lock:
            hit = self._cache.get(digest)
        if hit is not None and hit[1] > time.monotonic():
            return Principal(hit[0].user_id, hit[0].role)
        return None

    def _api_key(self, key: str) -> Principal:
        digest = hash_key(key)
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(digest)
        if hit is not None and hit[1] > now:
            info = hit[0]
        else:
            found = lookup_key(self._engine, key)
            if found is None:
                with self._lock:
                    self._cache.pop(digest, None)
                raise unauthorized("unknown or revoked API key")
            info = found
            if self._settings.api_key_cache_seconds > 0:
                with self._lock:
                    if len(self._cache) > 10_000:
                        self._cache.clear()
                    self._cache[digest] = (info, now + self._settings.api_key_cache_seconds)
        return Principal(info.user_id, info.role)

    # -- JWTs --------------------------------------------------------------------------------

    def _jwt(self, token: str) -> Principal:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise unauthorized(f"malformed JWT: {exc}") from None
        alg = header.get("alg")
        key: Any
        if alg == "HS256" and self._secret is not None:
            key = self._secret
        elif alg == "RS256" and self._jwks is not None:
            key = self._jwks_key(header.get("kid"))
        elif alg == "RS256" and self._public_key is not None:
            key = self._public_key
        else:
            raise unauthorized(f"JWTs signed with {alg!r} are not accepted by this service")
        s = self._settings
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=s.jwt_audience,
                issuer=s.jwt_issuer,
                leeway=s.jwt_leeway_seconds,
                options={"require": ["exp", "sub"], "verify_aud": s.jwt_audience is not None},
            )
        except jwt.PyJWTError as exc:
            raise unauthorized(f"invalid JWT: {exc}") from None
        self._check_times(claims)
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub.strip() or len(sub) > 255 or "\x00" in sub:
            raise unauthorized(
                "the JWT's sub claim must name the user (1-255 characters, no U+0000)"
            )
        if claims.get("role") in s.jwt_service_roles:
            return Principal(sub, "service")
        return Principal(sub, "user")

    def _check_times(self, claims: dict[str, Any]) -> None:
        """Numeric times (PyJWT also takes "exp": "9999999999"), and an ``exp`` no further
        than ``jwt_max_lifetime_seconds`` from now."""
        for name in ("exp", "nbf", "iat"):
            value = claims.get(name)
            if name in claims and (isinstance(value, bool) or not isinstance(value, int | float)):
                raise unauthorized(
                    f"the JWT's {name} claim must be a number (seconds since 1970-01-01 UTC), "
                    f"not {type(value).__name__}"
                )
        s = self._settings
        limit = s.jwt_max_lifetime_seconds
        if limit > 0 and claims["exp"] > time.time() + limit + s.jwt_leeway_seconds:
            raise unauthorized(
                f"the JWT expires more than {limit:g} s from now (jwt_max_lifetime_seconds): "
                "issue shorter-lived tokens, or use an API key for a long-lived service"
            )

    def _jwks_key(self, kid: object) -> Any:
        assert self._jwks is not None
        keys = self._jwks.keys
        if kid is None and len(keys) == 1:
            return keys[0].key
        for k in keys:
            if k.key_id == kid:
                return k.key
        raise unauthorized(f"no key with kid {kid!r} in the JWKS file")


def _read(path: Any) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except OSError as exc:
        raise ConfigError(f"cannot read the JWT public key: {exc}", path=path) from exc


def _jwks(path: Any) -> jwt.PyJWKSet:
    text = _read(path)
    try:
        return jwt.PyJWKSet.from_dict(json.loads(text))
    except (ValueError, jwt.PyJWTError) as exc:
        raise ConfigError(
            f"cannot read the JWKS file: {exc}", path=path, hint='Give {"keys": [...]} JSON'
        ) from exc


__all__ = ["Authenticator"]
