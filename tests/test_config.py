"""Settings read and checked once from the environment (rehabref.config)."""

from __future__ import annotations

import pytest

from rehabref.config import ConfigError, load_settings


def test_defaults_without_any_variable():
    settings = load_settings({})
    assert settings.database_url == "sqlite:///./rehabref.db"
    assert (settings.host, settings.port, settings.base_url) == (
        "127.0.0.1",
        8000,
        "http://127.0.0.1:8000",
    )
    assert settings.rate_limit == "100/second"
    assert settings.messaging == "sandbox"
    assert settings.log_level == "INFO"
    assert settings.webhook_lease_seconds == 120
    assert settings.trusted_proxies == ()
    assert settings.hot_path_connections == 10
    assert settings.console_idle_seconds == 15 * 60


def test_values_are_read_and_normalised():
    settings = load_settings(
        {
            "REHABREF_PORT": "9000",
            "REHABREF_RATE_LIMIT": "10/second;300/minute",
            "REHABREF_MESSAGING": " Console ",
            "REHABREF_LOG_LEVEL": "debug",
            "REHABREF_WEBHOOK_RETRY_BASE_SECONDS": "0.5",
            "REHABREF_PUBLIC_BASE_URL": "https://refer.example.com/",
            "REHABREF_HOT_PATH_CONNECTIONS": "12",
            "REHABREF_CONSOLE_IDLE_MINUTES": "5",
        }
    )
    assert settings.console_idle_seconds == 300
    assert settings.hot_path_connections == 12
    assert settings.port == 9000
    assert settings.rate_limit == "10/second;300/minute"
    assert settings.messaging == "console"
    assert settings.log_level == "DEBUG"
    assert settings.webhook_retry_base_seconds == 0.5
    assert settings.base_url == "https://refer.example.com"


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("REHABREF_PORT", "eighty", "is not a whole number"),
        ("REHABREF_PORT", "-1", "must be at least 0"),
        ("REHABREF_AUTH_CACHE_SECONDS", "nan", "must be at least 0"),
        ("REHABREF_WEBHOOK_RETRY_BASE_SECONDS", "soon", "is not a number"),
        ("REHABREF_WEBHOOK_LEASE_SECONDS", "5", "must be at least 20"),
        ("REHABREF_HOT_PATH_CONNECTIONS", "0", "must be at least 1"),
        ("REHABREF_HOT_PATH_CONNECTIONS", "four", "is not a whole number"),
        ("REHABREF_CONSOLE_IDLE_MINUTES", "0", "must be at least 1"),
        ("REHABREF_CONSOLE_IDLE_MINUTES", "soon", "is not a number"),
        ("REHABREF_RATE_LIMIT", "lots", "is not a rate limit"),
        ("REHABREF_RATE_LIMIT", "100/second junk", "is not a rate limit"),
        ("REHABREF_PDF_RATE_LIMIT_IP", "20 per fortnight", "is not a rate limit"),
        ("REHABREF_MESSAGING", "whatsapp", "is not one of sandbox, console"),
        ("REHABREF_LOG_LEVEL", "loud", "is not one of DEBUG"),
        ("REHABREF_TRUSTED_PROXIES", "proxy.internal", "is not an IP address"),
        ("REHABREF_PUBLIC_BASE_URL", "refer.example.com", "use a URL starting with http://"),
        ("REHABREF_PUBLIC_BASE_URL", "https://refer.example.com/?x=1", "no query"),
        ("REHABREF_DATABASE_URL", "mysql://rehabref@db/rehabref", "scheme 'mysql'"),
        ("REHABREF_REDIS_URL", "http://cache:6379", "scheme 'http'"),
    ],
)
def test_a_value_that_cannot_be_used_names_its_variable(variable, value, problem):
    with pytest.raises(ConfigError) as refused:
        load_settings({variable: value})
    assert str(refused.value).startswith(f"{variable}: ")
    assert problem in str(refused.value)


def test_a_refused_url_that_may_hold_a_password_is_not_echoed():
    for variable in ("REHABREF_DATABASE_URL", "REHABREF_REDIS_URL"):
        with pytest.raises(ConfigError) as refused:
            load_settings({variable: "mysql://admin:hunter2@db.internal/prod"})
        assert "hunter2" not in str(refused.value)
        assert "db.internal" not in str(refused.value)


def test_supported_database_and_redis_urls_are_accepted():
    for database_url in (
        "sqlite:///./rehabref.db",
        "sqlite:////var/lib/rehabref/rehabref.db",
        "postgresql://rehabref:secret@db:5432/rehabref",
        "postgresql+asyncpg://rehabref@db/rehabref",
    ):
        assert load_settings({"REHABREF_DATABASE_URL": database_url}).database_url == database_url
    for redis_url in ("redis://cache:6379/0", "rediss://:secret@cache:6380/0"):
        assert load_settings({"REHABREF_REDIS_URL": redis_url}).redis_url == redis_url
