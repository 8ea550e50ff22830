"""One settings object for the service: environment variables and a configuration file.

Values come, highest priority first, from keyword arguments (the CLI's options), environment
variables ``RANKSCOPE_SERVE_<FIELD>`` (e.g. ``RANKSCOPE_SERVE_DATABASE_URL``), a TOML or YAML file
named by ``RANKSCOPE_SERVE_CONFIG`` (or ``config_file=``), and the defaults below. Nested values
(``thresholds``) take JSON in the environment: ``RANKSCOPE_SERVE_THRESHOLDS='{"semantic": 0.6}'``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
    YamlConfigSettingsSource,
)

from rankscope.collect.wire import SEARCH_TYPES
from rankscope.errors import ConfigError
from rankscope.service.stored_measures import MEASURE_COLUMNS

ENV_PREFIX = "RANKSCOPE_SERVE_"
CONFIG_ENV = ENV_PREFIX + "CONFIG"
DEFAULT_DATABASE_URL = "sqlite:///rankscope-metrics.sqlite"
DEFAULT_THRESHOLD = 0.7
#: the shortest HS256 secret accepted (256 bits, the size of the hash)
MIN_JWT_SECRET_BYTES = 32
#: settings whose values an error message must not repeat
_SECRET_FIELDS = frozenset({"jwt_secret"})

Unit = Annotated[float, Field(ge=0.0, le=1.0)]


#: a stored measure's column (rankscope.service.stored_measures)
if TYPE_CHECKING:
    MeasureColumn = str
else:
    MeasureColumn = Literal[MEASURE_COLUMNS]


class AlertRule(BaseModel):
    """One regression check, run per user (and per topic or search type with ``by``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$")]
    measure: MeasureColumn = "ndcg"
    by: Literal["user", "topic", "searchType"] = "user"
    judgments: Literal["judged", "heuristic"] = "judged"
    method: Literal["window", "ewma"] = "window"
    window_days: Annotated[float, Field(gt=0, le=365)] = 1.0
    baseline_days: Annotated[float, Field(gt=0, le=3650)] = 7.0
    min_n: Annotated[int, Field(ge=2)] = 30
    min_delta: Annotated[float, Field(ge=0)] = 0.02
    ewma_lambda: Annotated[float, Field(gt=0, le=1)] = 0.3
    ewma_width: Annotated[float, Field(gt=0)] = 3.0
    webhook_url: str | None = None


class ServiceSettings(BaseSettings):
    """Everything the service and its CLI commands read. See docs/service.md for each field."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="forbid", frozen=True, validate_default=True
    )

    # -- storage
    database_url: str = Field(
        DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL or libpq DSN the service connects with (on PostgreSQL: "
        "the application role, neither superuser nor BYPASSRLS)",
    )
    admin_database_url: str | None = Field(
        None,
        description="URL for `serve migrate`, `create-key` and `revoke-key` (the table owner); "
        "defaults to database_url",
    )
    pool_size: Annotated[int, Field(ge=1, le=200)] = 10
    sqlite_synchronous: Literal["NORMAL", "FULL"] = Field(
        "NORMAL",
        description="SQLite's synchronous pragma (WAL mode). NORMAL: an acknowledged record "
        "survives a crash of the service, but the last commits may roll back after a power "
        "loss or an operating-system crash. FULL: an fsync per commit, durable through those "
        "too (slower single collects)",
    )
    auto_migrate: bool = Field(
        True, description="on SQLite, create or upgrade the schema at start-up"
    )
    allow_privileged_role: bool = Field(
        False,
        description="start on PostgreSQL even when the role bypasses row-level security "
        "(superuser, BYPASSRLS, or inheriting rankscope_service's rights); for local "
        "experiments only",
    )

    # -- measures
    default_threshold: Unit = Field(
        DEFAULT_THRESHOLD,
        description="score at or above which a document counts as relevant "
        "when a record brings no judgments (heuristic rows)",
    )
    thresholds: dict[str, Unit] = Field(
        default_factory=dict,
        description="thresholds per search type (semantic, keyword, hybrid, web or a "
        "combination such as keyword+semantic); per-user values are set through the API",
    )

    # -- online loop (docs/service.md: events, implicit judgments, alerts, retention)
    max_batch_events: Annotated[int, Field(ge=1)] = Field(
        10_000, description="events in one POST /api/events"
    )
    max_event_attributes_bytes: Annotated[int, Field(ge=2, le=1 << 20)] = Field(
        16_384,
        description="the most an event's attributes may take, as compact JSON (a page of "
        "events holds them whole)",
    )
    click_model: Literal["ctr", "coec", "dbn"] = Field(
        "dbn", description="default click model of implicit judgments"
    )
    click_min_impressions: Annotated[int, Field(ge=1)] = Field(
        10, description="impressions a (query, document) pair needs for a click grade"
    )
    click_grade_thresholds: dict[Literal["ctr", "coec", "dbn"], tuple[float, float, float]] = Field(
        default_factory=dict,
        description="values at which a click grade rises to 1, 2, 3, per model (defaults in "
        "docs/service.md)",
    )
    click_satisfied_dwell_seconds: Annotated[float, Field(gt=0)] | None = Field(
        None,
        description="DBN: a click with at least this dwell time is satisfied (default: the "
        "session's last click is)",
    )
    min_sample: Annotated[int, Field(ge=2)] = Field(
        30, description="records per arm (or common queries, paired) before a winner is named"
    )
    interleaving_min_impressions: Annotated[int, Field(ge=1)] = Field(
        20, description="clicked impressions before an interleaving winner is named"
    )
    alert_rules: list[AlertRule] = Field(default_factory=list, description="regression checks")
    alert_webhook_url: str | None = Field(None, description="where alerts are POSTed")
    alert_check_interval_seconds: Annotated[float, Field(ge=0)] = Field(
        0.0, description="check the alert rules inside the server this often (0: never)"
    )
    webhook_max_attempts: Annotated[int, Field(ge=1, le=20)] = 5
    webhook_backoff_seconds: Annotated[float, Field(ge=0)] = 1.0
    webhook_timeout_seconds: Annotated[float, Field(gt=0)] = 5.0
    retention_days: Annotated[int, Field(ge=1)] | None = Field(
        None, description="days records, events and alerts are kept (users may set their own)"
    )

    # -- limits
    max_request_bytes: Annotated[int, Field(ge=1024)] = 8 * 1024 * 1024
    max_batch_records: Annotated[int, Field(ge=1)] = 1000
    max_documents_per_record: Annotated[int, Field(ge=1)] = 1000
    max_page_size: Annotated[int, Field(ge=1)] = 1000
    max_page_bytes: Annotated[int, Field(ge=1024)] = Field(
        4 * 1024 * 1024,
        description="a page of records or events ends once it holds about this many bytes of "
        "JSON (truncated: true, nextOffset), whatever its limit",
    )
    max_export_lines: Annotated[int, Field(ge=1)] = Field(
        500_000,
        description="an export ends before the record that would take it past this many qrels "
        "and run lines (X-Rankscope-Truncated: true, X-Rankscope-Next-Offset); a record is "
        "never split, so one larger than this comes alone. About 0.8-1.0 s of CPU for 500,000 "
        "lines (docs/service.md)",
    )
    rate_limit_per_second: Annotated[float, Field(ge=0)] = Field(
        0.0, description="requests per second per user (0: no limit); a burst of 2 s is allowed"
    )
    unknown_fields: Literal["ignore", "reject"] = Field(
        "ignore",
        description="fields of a collect body the service does not know (a document's "
        "metadata, say): ignore them (named in the X-Rankscope-Ignored-Fields response "
        "header) or reject the body with 422",
    )
    write_batch_size: Annotated[int, Field(ge=1)] = 512
    write_gather_ms: Annotated[float, Field(ge=0, le=100)] = Field(
        2.0,
        description="how long a lone single-record collect waits for others to share its "
        "evaluate() call and commit (0: never waits)",
    )

    # -- auth
    jwt_secret: SecretStr | None = Field(
        None, description=f"HS256 secret for JWTs (at least {MIN_JWT_SECRET_BYTES} bytes)"
    )
    jwt_public_key_file: Path | None = Field(None, description="PEM public key for RS256 JWTs")
    jwks_file: Path | None = Field(None, description="JWKS file with RS256 public keys")
    jwt_audience: str | None = None
    jwt_issuer: str | None = None
    jwt_service_roles: list[str] = Field(
        default_factory=lambda: ["service_role", "service"],
        description="values of the `role` claim that give the service role",
    )
    jwt_leeway_seconds: Annotated[float, Field(ge=0)] = Field(
        30.0, description="clock difference allowed when checking a JWT's exp, nbf and iat"
    )
    jwt_max_lifetime_seconds: Annotated[float, Field(ge=0)] = Field(
        86_400.0,
        description="a JWT whose exp is further than this from now (plus the leeway) is "
        "refused, so a leaked token stops working within this time (0: no limit)",
    )
    api_key_cache_seconds: Annotated[float, Field(ge=0)] = Field(
        5.0,
        description="how long a looked-up API key, or a user's own thresholds, are kept before "
        "the next lookup (a revoked key stops working, and another worker process sees a "
        "changed threshold, within this time)",
    )

    # -- server
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8000
    workers: Annotated[int, Field(ge=1, le=64)] = 1
    bulk_processes: Annotated[int, Field(ge=0, le=64)] = Field(
        0,
        description="processes that validate, score and store batch requests, shared by every "
        "connection (0: threads of each worker process). A batch costs about 0.1 ms of CPU "
        "per record: set it to the number of cores for heavy batch traffic",
    )
    request_header_timeout_seconds: Annotated[float, Field(gt=0, le=3600)] = Field(
        10.0,
        description="a request's line and headers must arrive within this time of the "
        "connection's start (or of the previous response); else the connection is closed",
    )
    request_body_timeout_seconds: Annotated[float, Field(gt=0, le=3600)] = Field(
        60.0,
        description="a request's whole body must arrive within this time of its headers; else "
        "the connection is closed",
    )
    keep_alive_timeout_seconds: Annotated[float, Field(gt=0, le=3600)] = Field(
        5.0, description="an idle keep-alive connection is closed after this time"
    )
    max_connections: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        1000,
        description="open connections per worker process: a new one past it is closed at "
        "once, and requests at it are answered 503",
    )
    max_header_bytes: Annotated[int, Field(ge=1024, le=1 << 20)] = Field(
        65536,
        description="the largest request head (line and headers) the h11 parser buffers; "
        "httptools, uvicorn's parser when installed, has its own limit (80 KiB)",
    )
    log_level: Literal["critical", "error", "warning", "info", "debug"] = "info"

    config_file: Path | None = Field(None, description="TOML or YAML file read for settings")

    @field_validator("jwt_secret")
    @classmethod
    def _strong_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            size = len(value.get_secret_value().encode())
            if size < MIN_JWT_SECRET_BYTES:
                raise ValueError(
                    f"the HS256 secret is {size} bytes; it needs at least "
                    f"{MIN_JWT_SECRET_BYTES} (a key as long as the SHA-256 hash, RFC 7518 "
                    "section 3.2), or it can be guessed from one token: make one with python "
                    "-c 'import secrets; print(secrets.token_urlsafe(32))'"
                )
        return value

    @field_validator("thresholds")
    @classmethod
    def _known_types(cls, value: dict[str, float]) -> dict[str, float]:
        for key in value:
            parts = key.split("+")
            if not all(p in SEARCH_TYPES for p in parts):
                raise ValueError(
                    f"unknown search type {key!r}: use {', '.join(SEARCH_TYPES)} or a "
                    "combination joined by '+'"
                )
        return {search_type_key(k.split("+")): v for k, v in value.items()}

    @property
    def admin_url(self) -> str:
        return self.admin_database_url or self.database_url

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = _config_path(init_settings)
        if path is not None:
            sources.append(_file_source(settings_cls, path))
        return tuple(sources)


def search_type_key(types: list[str] | tuple[str, ...]) -> str:
    """The label of a combination of search types: sorted, joined by '+'; 'none' for none."""
    chosen = sorted({t for t in types if t})
    return "+".join(chosen) if chosen else "none"


def _config_path(init_settings: PydanticBaseSettingsSource) -> Path | None:
    given: Any = init_settings().get("config_file")
    raw = given if given is not None else os.environ.get(CONFIG_ENV)
    if not raw:
        return None
    path = Path(raw)
    if not path.is_file():
        raise ConfigError(
            "settings file not found",
            path=path,
            hint=f"Give an existing TOML or YAML file (--config or {CONFIG_ENV})",
        )
    return path


def _file_source(settings_cls: type[BaseSettings], path: Path) -> PydanticBaseSettingsSource:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return TomlConfigSettingsSource(settings_cls, toml_file=path)
    if suffix in (".yaml", ".yml"):
        return YamlConfigSettingsSource(settings_cls, yaml_file=path)
    raise ConfigError("unknown settings file type", path=path, hint="Name it .toml, .yaml or .yml")


def load_settings(**overrides: Any) -> ServiceSettings:
    """Read the settings; a bad value raises ConfigError naming the field and the fix."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return ServiceSettings(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"invalid service setting {field}: {first['msg']}",
            value=None if field in _SECRET_FIELDS else first.get("input"),
            hint=f"Fix it in the options, the environment ({ENV_PREFIX}{field.upper()}) or "
            "the settings file",
        ) from exc


__all__ = [
    "DEFAULT_DATABASE_URL",
    "DEFAULT_THRESHOLD",
    "ENV_PREFIX",
    "MIN_JWT_SECRET_BYTES",
    "AlertRule",
    "ServiceSettings",
    "load_settings",
    "search_type_key",
]
