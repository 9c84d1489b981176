"""Settings read once from the environment (the operator contract in docs/operations.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from limits import parse_many

from rehabref.client_address import Network, parse_trusted_proxies
from rehabref.crypto import KeyRingError, parse_key_ring


def _flag(value: str | None, default: bool = False) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    database_url: str = "sqlite:///./rehabref.db"
    host: str = "127.0.0.1"
    port: int = 8000
    public_base_url: str = ""
    redis_url: str | None = None
    rate_limit: str = "100/second"
    # Webhook targets on loopback (local development); every other non-public address stays
    # refused (events/targets.py).
    allow_loopback_webhook_targets: bool = False
    webhook_retry_base_seconds: float = 5.0
    # The instance key ring (crypto.py): REHABREF_SECRET_KEY, else the key file.
    secret_key: str | None = None
    secret_key_file: str = "rehabref.key"  # noqa: S105 (a file name, not a key)
    log_level: str = "INFO"
    max_body_bytes: int = 1024 * 1024
    # How long an API key lookup is cached in-process; revocation takes effect within this.
    auth_cache_seconds: float = 5.0
    assistant_session_ttl_seconds: int = 24 * 3600
    idempotency_ttl_seconds: int = 24 * 3600
    # Hosted link form + console login attempts per client IP; submissions per link; page views.
    form_rate_limit_ip: str = "10/minute"
    link_rate_limit: str = "100/hour"
    page_rate_limit_ip: str = "120/minute"
    # Discharge-summary PDFs per client IP: each one is rendered (chart and PDF) on request.
    pdf_rate_limit_ip: str = "20/minute"
    # Reverse proxies whose X-Forwarded-For names the client for the per-IP limits.
    trusted_proxies: tuple[Network, ...] = ()
    # Outbound patient messages: sandbox (records, sends nothing) or console (also prints).
    messaging: str = "sandbox"
    # How long a delivery worker's claim lasts (at least 20 s; see events/worker.py).
    webhook_lease_seconds: float = 120.0
    # PostgreSQL connections per server process for the hot paths (create, get, list): enough
    # statements in flight for commits to share WAL flushes (4 and 6 measured slower than 10).
    hot_path_connections: int = 10
    # Patient channels (docs/channels.md); a channel is live only when all its settings are set.
    whatsapp_api_base: str = "https://graph.facebook.com/v21.0"
    whatsapp_access_token: str | None = None
    whatsapp_phone_number_id: str | None = None
    whatsapp_app_secret: str | None = None
    whatsapp_verify_token: str | None = None
    twilio_api_base: str = "https://api.twilio.com"
    twilio_account_sid: str | None = None
    twilio_auth_token: str | None = None
    twilio_from: str | None = None
    smtp_url: str | None = None
    email_from: str | None = None
    message_retry_base_seconds: float = 5.0
    # How long a message worker's claim on a message lasts: a worker that dies mid-send
    # leaves it to others after this (a provider call never takes longer than 10 s).
    message_lease_seconds: float = 60.0
    # Sandbox webhook trigger: calls per sandbox key, and the origins (scheme://host[:port];
    # no port: any) it may send to besides the partner's registered test endpoints.
    sandbox_trigger_rate_limit: str = "10/minute"
    sandbox_trigger_origins: tuple[str, ...] = ()

    # A console session with no request for this long is signed out (server-side last seen).
    console_idle_seconds: float = 15 * 60.0

    # Retention (docs/security.md#retention): personal data of referrals closed or cancelled
    # this many days ago is scrubbed; assistant sessions whose link expired this many days
    # ago unused are deleted. Idempotent replies go when they expire (24 h).
    retention_closed_referral_days: int = 365
    retention_assistant_session_days: int = 30

    # Card payments (docs/payments.md): live payment requests need the secret key.
    paystack_api_base: str = "https://api.paystack.co"
    paystack_secret_key: str | None = None

    @property
    def base_url(self) -> str:
        if self.public_base_url:
            return self.public_base_url.rstrip("/")
        return f"http://{self.host}:{self.port}"

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def default_key_file(database_url: str) -> str:
    """``rehabref.key`` beside a SQLite database file, else in the working directory."""
    parts = urlsplit(database_url)
    if parts.scheme.startswith("sqlite") and parts.path.strip("/") and ":memory:" not in parts.path:
        database = Path(parts.path[1:] if parts.path.startswith("/") else parts.path)
        return str(database.parent / "rehabref.key")
    return "rehabref.key"


class ConfigError(ValueError):
    """A REHABREF_* variable that cannot be used; the message names it."""


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
DATABASE_SCHEMES = ("sqlite", "postgresql", "postgres")
MESSAGING_ADAPTERS = ("sandbox", "console")
REMOVED_PRIVATE_TARGETS_FLAG = "REHABREF_ALLOW_PRIVATE_WEBHOOK_TARGETS"


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Every setting read and checked at once: a typo stops start-up with a message naming the
    variable, instead of a traceback later or a silently different behaviour."""
    source = os.environ if env is None else env

    def text(name: str, default: str) -> str:
        return source.get(name) or default

    def number(name: str, default: float, convert: type[int] | type[float], minimum: float) -> Any:
        raw = source.get(name) or ""
        if not raw:
            return convert(default)
        try:
            value = convert(raw)
        except ValueError:
            kind = "whole number" if convert is int else "number"
            raise ConfigError(f"{name}: {raw!r} is not a {kind}") from None
        if value < minimum or value != value:  # NaN compares unequal to itself
            raise ConfigError(f"{name}: must be at least {minimum}, not {raw!r}")
        return value

    def limit(name: str, default: str) -> str:
        raw = text(name, default)
        try:
            parse_many(raw)
        except ValueError:
            raise ConfigError(
                f"{name}: {raw!r} is not a rate limit; write it like 100/second or 10/minute"
            ) from None
        return raw

    def choice(name: str, default: str, allowed: tuple[str, ...]) -> str:
        """One of ``allowed``, whatever the case and surrounding spaces of the value."""
        raw = text(name, default)
        for option in allowed:
            if raw.strip().lower() == option.lower():
                return option
        raise ConfigError(f"{name}: {raw!r} is not one of {', '.join(allowed)}")

    def url(name: str, default: str, schemes: tuple[str, ...], *, secret: bool) -> str:
        """A URL of one of ``schemes``; a URL that may hold a password is not echoed back."""
        raw = text(name, default)
        if not raw:
            return raw
        parts = urlsplit(raw)
        scheme = parts.scheme.lower().split("+", 1)[0]
        if scheme not in schemes or not (parts.netloc or parts.path):
            shown = f"scheme {parts.scheme!r}" if secret else repr(raw)
            raise ConfigError(
                f"{name}: {shown} is not supported; use a URL starting with "
                + " or ".join(f"{option}://" for option in schemes)
            )
        return raw

    def origin(raw: str) -> str:
        parts = urlsplit(raw)
        try:
            parts.port  # noqa: B018 (raises ValueError on a bad port)
        except ValueError:
            parts = urlsplit("")
        extra = parts.path.strip("/") or parts.query or parts.fragment or "@" in parts.netloc
        if parts.scheme not in ("http", "https") or not parts.hostname or extra:
            raise ConfigError(
                f"REHABREF_SANDBOX_TRIGGER_ORIGINS: {raw!r} is not an origin; write it like "
                "https://hooks.example.com or http://127.0.0.1:9000"
            )
        return f"{parts.scheme}://{parts.netloc.lower()}"

    database_url = url(
        "REHABREF_DATABASE_URL", "sqlite:///./rehabref.db", DATABASE_SCHEMES, secret=True
    )
    public_base_url = url("REHABREF_PUBLIC_BASE_URL", "", ("http", "https"), secret=False)
    if public_base_url and (not urlsplit(public_base_url).netloc or "?" in public_base_url):
        raise ConfigError(
            f"REHABREF_PUBLIC_BASE_URL: {public_base_url!r} must be an absolute http(s) address "
            "with a host and no query, e.g. https://refer.example.com"
        )
    if source.get(REMOVED_PRIVATE_TARGETS_FLAG):
        # It admitted every private and link-local address (cloud metadata included); an
        # operator relying on it must choose the loopback-only flag knowingly.
        raise ConfigError(
            f"{REMOVED_PRIVATE_TARGETS_FLAG} was removed: it opened private and metadata "
            "addresses. For local development use REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS=true "
            "(loopback only), and unset the old variable."
        )
    redis_url = url("REHABREF_REDIS_URL", "", ("redis", "rediss", "unix"), secret=True) or None
    trigger_origins = tuple(
        origin(name.strip())
        for name in text("REHABREF_SANDBOX_TRIGGER_ORIGINS", "").split(",")
        if name.strip()
    )
    secret_key = source.get("REHABREF_SECRET_KEY") or None
    if secret_key is not None:
        try:
            parse_key_ring(secret_key)
        except KeyRingError as exc:
            raise ConfigError(f"REHABREF_SECRET_KEY: {exc}") from None
    try:
        trusted_proxies = parse_trusted_proxies(text("REHABREF_TRUSTED_PROXIES", ""))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return Settings(
        database_url=database_url,
        host=text("REHABREF_HOST", "127.0.0.1"),
        port=number("REHABREF_PORT", 8000, int, 0),
        public_base_url=public_base_url,
        redis_url=redis_url,
        rate_limit=limit("REHABREF_RATE_LIMIT", "100/second"),
        allow_loopback_webhook_targets=_flag(source.get("REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS")),
        webhook_retry_base_seconds=number("REHABREF_WEBHOOK_RETRY_BASE_SECONDS", 5, float, 0),
        secret_key=secret_key,
        secret_key_file=text("REHABREF_SECRET_KEY_FILE", default_key_file(database_url)),
        log_level=choice("REHABREF_LOG_LEVEL", "INFO", LOG_LEVELS),
        auth_cache_seconds=number("REHABREF_AUTH_CACHE_SECONDS", 5, float, 0),
        form_rate_limit_ip=limit("REHABREF_FORM_RATE_LIMIT_IP", "10/minute"),
        link_rate_limit=limit("REHABREF_LINK_RATE_LIMIT", "100/hour"),
        page_rate_limit_ip=limit("REHABREF_PAGE_RATE_LIMIT_IP", "120/minute"),
        pdf_rate_limit_ip=limit("REHABREF_PDF_RATE_LIMIT_IP", "20/minute"),
        trusted_proxies=trusted_proxies,
        messaging=choice("REHABREF_MESSAGING", "sandbox", MESSAGING_ADAPTERS),
        webhook_lease_seconds=number("REHABREF_WEBHOOK_LEASE_SECONDS", 120, float, 20),
        hot_path_connections=number("REHABREF_HOT_PATH_CONNECTIONS", 10, int, 1),
        whatsapp_api_base=url(
            "REHABREF_WHATSAPP_API_BASE",
            "https://graph.facebook.com/v21.0",
            ("http", "https"),
            secret=False,
        ).rstrip("/"),
        whatsapp_access_token=source.get("REHABREF_WHATSAPP_ACCESS_TOKEN") or None,
        whatsapp_phone_number_id=source.get("REHABREF_WHATSAPP_PHONE_NUMBER_ID") or None,
        whatsapp_app_secret=source.get("REHABREF_WHATSAPP_APP_SECRET") or None,
        whatsapp_verify_token=source.get("REHABREF_WHATSAPP_VERIFY_TOKEN") or None,
        twilio_api_base=url(
            "REHABREF_TWILIO_API_BASE", "https://api.twilio.com", ("http", "https"), secret=False
        ).rstrip("/"),
        twilio_account_sid=source.get("REHABREF_TWILIO_ACCOUNT_SID") or None,
        twilio_auth_token=source.get("REHABREF_TWILIO_AUTH_TOKEN") or None,
        twilio_from=source.get("REHABREF_TWILIO_FROM") or None,
        smtp_url=url("REHABREF_SMTP_URL", "", ("smtp", "smtps"), secret=True) or None,
        email_from=source.get("REHABREF_EMAIL_FROM") or None,
        message_retry_base_seconds=number("REHABREF_MESSAGE_RETRY_BASE_SECONDS", 5, float, 0.1),
        message_lease_seconds=number("REHABREF_MESSAGE_LEASE_SECONDS", 60, float, 15),
        sandbox_trigger_rate_limit=limit("REHABREF_SANDBOX_TRIGGER_RATE_LIMIT", "10/minute"),
        sandbox_trigger_origins=trigger_origins,
        console_idle_seconds=60 * number("REHABREF_CONSOLE_IDLE_MINUTES", 15, float, 1),
        retention_closed_referral_days=number(
            "REHABREF_RETENTION_CLOSED_REFERRAL_DAYS", 365, int, 1
        ),
        retention_assistant_session_days=number(
            "REHABREF_RETENTION_ASSISTANT_SESSION_DAYS", 30, int, 1
        ),
        paystack_api_base=url(
            "REHABREF_PAYSTACK_API_BASE", "https://api.paystack.co", ("http", "https"), secret=False
        ).rstrip("/"),
        paystack_secret_key=source.get("REHABREF_PAYSTACK_SECRET_KEY") or None,
    )
