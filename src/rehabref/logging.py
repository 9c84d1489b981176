"""Structured JSON logs with request context, and redaction of secrets and health data.

Log calls should never carry patient or secret values; the redacting formatter is the
second line of defence and scrubs anything that looks like an API key, webhook secret,
phone number, e-mail address or a patient link token from every line it writes.
"""

from __future__ import annotations

import contextvars
import logging
import re
import sys
import time
from typing import Any

import msgspec

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)
partner_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "partner_id", default=None
)

# (substrings without which the pattern cannot match, pattern, replacement). The substring
# check skips most regex scans: redaction runs on every log line, including each access line.
_PATTERNS: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    (
        ("_test_", "_live_"),
        re.compile(r"\b(sk|pk)_(test|live)_[A-Za-z0-9_\-]+"),
        r"\1_\2_[redacted]",
    ),
    (("whsec_",), re.compile(r"\bwhsec_(test|live)_[A-Za-z0-9_\-]+"), r"whsec_\1_[redacted]"),
    ((), re.compile(r"(?i)bearer\s+\S+"), "Bearer [redacted]"),
    # Bearer links: assistant sessions, discharge-summary PDFs, hosted referral forms,
    # physiotherapists' calendar feeds.
    (
        (),
        re.compile(r"/(a|intake|i|reports/pdf|r|calendar)/[A-Za-z0-9_\-.]{16,}"),
        r"/\1/[redacted]",
    ),
    (("op_",), re.compile(r"\bop_[A-Za-z0-9_\-]{20,}"), "op_[redacted]"),  # operator tokens
    (("pa_",), re.compile(r"\bpa_[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+"), "pa_[redacted]"),  # pre-auth
    (("@",), re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"), "[email]"),
    (("+",), re.compile(r"\+\d{7,15}\b"), "[phone]"),
]
# Nigerian local format (080..., 070..., 090...); its left word boundary is checked in Python
# because a leading \b makes the regex engine try every position (10x slower here).
_LOCAL_PHONE = re.compile(r"0[789]\d{9}\b")


def _redact_local_phones(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        start = match.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return match.group()
        return "[phone]"

    return _LOCAL_PHONE.sub(replace, text)


QUIET_LOGGERS = (
    "aiosqlite",
    "asyncpg",
    "sqlalchemy",
    "alembic",
    "httpx",
    "httpcore",
    "psycopg",
    "redis",
    "limits",
    "multipart",
)

# Attributes every LogRecord has; anything else passed through ``extra`` is emitted.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


def redact(text: str) -> str:
    for triggers, pattern, replacement in _PATTERNS:
        if not triggers or any(trigger in text for trigger in triggers):
            text = pattern.sub(replacement, text)
    return _redact_local_phones(text)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        partner_id = partner_id_var.get()
        if partner_id:
            entry["partner_id"] = partner_id
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info and record.exc_info[0] is not None:
            # The type only: tracebacks and messages can quote request data.
            entry["error_type"] = record.exc_info[0].__name__
        return redact(msgspec.json.encode(entry).decode())


class AccessLog:
    """The one line per request, written straight to the log handler's stream.

    The same JSON shape as every other line, at a fraction of the logging machinery's
    per-record cost (it was a tenth of a retrieve's CPU). Every field is the service's own
    except a partner's X-Request-ID, so that is the only value redacted. Before
    ``configure_logging`` (embedded uses, tests) lines go through the logger as usual.
    """

    def __init__(self) -> None:
        self.logger = logging.getLogger("rehabref.access")
        self.handler: logging.StreamHandler[Any] | None = None
        self._second = -1
        self._stamp = ""

    def write(
        self,
        *,
        request_id: str,
        partner_supplied_id: bool,
        partner_id: str | None,
        method: str | None,
        route: str,
        status: int,
        latency_ms: float,
    ) -> None:
        if not self.logger.isEnabledFor(logging.INFO):
            return
        handler = self.handler
        if handler is None:
            self.logger.info(
                "request",
                extra={
                    "method": method,
                    "route": route,
                    "status": status,
                    "latency_ms": latency_ms,
                    "partner_id": partner_id,
                },
            )
            return
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        entry = {
            "ts": f"{self._stamp}.{int((now - second) * 1000):03d}Z",
            "level": "info",
            "logger": "rehabref.access",
            "msg": "request",
            "request_id": redact(request_id) if partner_supplied_id else request_id,
            "partner_id": partner_id,
            "method": method,
            "route": route,
            "status": status,
            "latency_ms": latency_ms,
        }
        line = msgspec.json.encode(entry).decode() + "\n"
        handler.acquire()
        try:
            handler.stream.write(line)
            handler.flush()
        finally:
            handler.release()


access_log = AccessLog()


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    access_log.handler = handler
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The server's own access log prints raw paths (which can hold patient tokens).
    logging.getLogger("uvicorn.access").disabled = True
    # Drivers and HTTP clients log statement parameters and URLs at DEBUG (patient data,
    # webhook targets): keep them at WARNING whatever the service's own level is.
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
