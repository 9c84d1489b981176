"""A real SMTP server (aiosmtpd) on a free loopback port that captures what it is sent.

Optionally requires AUTH (LOGIN/PLAIN over plain text, as test servers may) and answers a
chosen reply code for chosen recipients, so providers can be tested against real SMTP.
"""

from __future__ import annotations

import email
from dataclasses import dataclass, field
from email.message import Message
from email.policy import default
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.support.server import free_port


@dataclass
class Captured:
    mail_from: str
    rcpt_tos: list[str]
    raw: bytes

    def message(self) -> Message:
        return email.message_from_bytes(self.raw, policy=default)


@dataclass
class SmtpServer:
    username: str | None = None
    password: str | None = None
    # recipient -> SMTP reply given to RCPT TO (e.g. "550 5.1.1 No such user")
    refuse: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    captured: list[Captured] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._controller: Controller | None = None

    @property
    def url(self) -> str:
        auth = f"{self.username}:{self.password}@" if self.username else ""
        return f"smtp://{auth}127.0.0.1:{self.port}?starttls=false"

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.captured.append(
            Captured(envelope.mail_from, list(envelope.rcpt_tos), envelope.content)
        )
        return "250 Message accepted for delivery"

    def _authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        if isinstance(data, LoginPassword):
            ok = data.login.decode() == self.username and data.password.decode() == self.password
            if ok:
                self.logins.append(mechanism)
            # handled=False: aiosmtpd then answers 535 itself (its default is to stay silent)
            return AuthResult(success=ok, handled=False)
        return AuthResult(success=False, handled=False)

    def start(self) -> SmtpServer:
        options: dict[str, Any] = {}
        if self.username:
            options = {
                "authenticator": self._authenticate,
                "auth_required": True,
                "auth_require_tls": False,
            }
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port, **options)
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None
