"""Settings read once from the environment (the operator contract in docs/operations.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from rehabref.client_address import Network, parse_trusted_proxies


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
    allow_private_webhook_targets: bool = False
    webhook_retry_base_seconds: float = 5.0
    secret_key: str | None = None
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

    @property
    def base_url(self) -> str:
        if self.public_base_url:
            return self.public_base_url.rstrip("/")
        return f"http://{self.host}:{self.port}"

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def load_settings(env: dict[str, str] | None = None) -> Settings:
    source = os.environ if env is None else env
    return Settings(
        database_url=source.get("REHABREF_DATABASE_URL") or "sqlite:///./rehabref.db",
        host=source.get("REHABREF_HOST") or "127.0.0.1",
        port=int(source.get("REHABREF_PORT") or 8000),
        public_base_url=source.get("REHABREF_PUBLIC_BASE_URL") or "",
        redis_url=source.get("REHABREF_REDIS_URL") or None,
        rate_limit=source.get("REHABREF_RATE_LIMIT") or "100/second",
        allow_private_webhook_targets=_flag(source.get("REHABREF_ALLOW_PRIVATE_WEBHOOK_TARGETS")),
        webhook_retry_base_seconds=float(source.get("REHABREF_WEBHOOK_RETRY_BASE_SECONDS") or 5),
        secret_key=source.get("REHABREF_SECRET_KEY") or None,
        log_level=(source.get("REHABREF_LOG_LEVEL") or "INFO").upper(),
        auth_cache_seconds=float(source.get("REHABREF_AUTH_CACHE_SECONDS") or 5),
        form_rate_limit_ip=source.get("REHABREF_FORM_RATE_LIMIT_IP") or "10/minute",
        link_rate_limit=source.get("REHABREF_LINK_RATE_LIMIT") or "100/hour",
        page_rate_limit_ip=source.get("REHABREF_PAGE_RATE_LIMIT_IP") or "120/minute",
        pdf_rate_limit_ip=source.get("REHABREF_PDF_RATE_LIMIT_IP") or "20/minute",
        trusted_proxies=parse_trusted_proxies(source.get("REHABREF_TRUSTED_PROXIES") or ""),
    )
