"""The SMTP e-mail provider: sends one multipart/alternative message (text and HTML).

Threats: message text reaches HTML, so every piece is escaped and only an http(s) link
becomes an ``<a>`` (no ``javascript:``); SMTP replies often quote the address, so reasons
carry only the reply code. ``send`` never raises for the server's or the network's failures:
5xx refuses (fall back), 4xx and connection trouble retry, a rejected login retries (the
operator fixes the credentials).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from urllib.parse import parse_qs, unquote, urlsplit

import aiosmtplib

from rehabref.channels.content import Channel, Content, Reply, as_reply, plain_text
from rehabref.channels.outcome import Accepted, Outcome, Refused, Retry


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    username: str | None
    password: str | None
    implicit_tls: bool
    # True: require STARTTLS; False: never; None: upgrade when the server offers it.
    start_tls: bool | None


def parse_smtp_url(url: str) -> SmtpServer:
    """``smtp://[user:pass@]host[:port][?starttls=true|false]`` or ``smtps://`` (TLS from
    the first byte). Without ``starttls``: required when there are credentials, else used
    when offered. ValueError on anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError("SMTP URL must be smtp://host:port or smtps://host:port")
    implicit = parts.scheme == "smtps"
    flag = parse_qs(parts.query).get("starttls", [""])[-1].lower()
    start_tls = {"true": True, "1": True, "false": False, "0": False}.get(flag)
    if start_tls is None and parts.username:
        # A password never crosses the network in the clear unless the URL says so
        # (?starttls=false): with credentials, STARTTLS is required, not just tried.
        start_tls = True
    return SmtpServer(
        host=parts.hostname,
        port=parts.port or (465 if implicit else 25),
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        implicit_tls=implicit,
        start_tls=False if implicit else start_tls,
    )


def text_part(reply: Reply) -> str:
    return plain_text(reply) + "\n"


def html_part(reply: Reply) -> str:
    paragraphs = [
        f"<p>{html.escape(block).replace(chr(10), '<br>')}</p>"
        for block in reply.text.split("\n\n")
    ]
    if reply.choices:
        items = "".join(f"<li>{html.escape(choice.title)}</li>" for choice in reply.choices)
        paragraphs.append(f"<ol>{items}</ol>")
    if reply.link:
        link = html.escape(reply.link, quote=True)
        safe = reply.link.lower().startswith(("https://", "http://"))
        paragraphs.append(f'<p><a href="{link}">{link}</a></p>' if safe else f"<p>{link}</p>")
    body = "\n".join(paragraphs)
    return f"<!DOCTYPE html>\n<html><body>\n{body}\n</body></html>\n"


def build_message(*, from_address: str, to: str, content: Content, message_id: str) -> EmailMessage:
    reply = as_reply(content)
    domain = from_address.rpartition("@")[2] or "localhost"
    message = EmailMessage()
    message["From"] = from_address
    message["To"] = to
    message["Subject"] = reply.subject
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = f"<{message_id}@{domain}>"
    message.set_content(text_part(reply))
    message.add_alternative(html_part(reply), subtype="html")
    return message


class SmtpEmail:
    channel: Channel = "email"
    name = "smtp"

    def __init__(self, smtp_url: str, from_address: str, timeout: float) -> None:
        self._server = parse_smtp_url(smtp_url)
        self._from = from_address
        self._timeout = timeout

    async def send(self, *, to: str, content: Content, message_id: str) -> Outcome:
        try:
            message = build_message(
                from_address=self._from, to=to, content=content, message_id=message_id
            )
        except ValueError:  # a line break in the address or subject: header injection
            return Refused("smtp message headers not usable")
        server = self._server
        try:
            errors, _ = await aiosmtplib.send(
                message,
                hostname=server.host,
                port=server.port,
                username=server.username,
                password=server.password,
                use_tls=server.implicit_tls,
                start_tls=server.start_tls,
                timeout=self._timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused as error:
            codes = [refusal.code for refusal in error.recipients]
            return _by_code(min(codes) if codes else 550, "recipient refused")
        except aiosmtplib.SMTPAuthenticationError as error:
            return Retry(f"smtp {error.code} login rejected (operator must fix credentials)")
        except aiosmtplib.SMTPResponseException as error:
            return _by_code(error.code, "rejected")
        except aiosmtplib.SMTPTimeoutError:
            return Retry("smtp timeout")
        except (aiosmtplib.SMTPException, OSError) as error:
            return Retry(f"smtp connection error ({type(error).__name__})")
        if errors:  # some recipients refused; we send to one, so this is that one
            return _by_code(min(code for code, _ in errors.values()), "recipient refused")
        return Accepted(str(message["Message-ID"]))

    async def aclose(self) -> None:
        return None


# Replies about our login, not the recipient: the operator fixes them, so retry.
LOGIN_CODES = frozenset({530, 534, 535, 538})


def _by_code(code: int, words: str) -> Outcome:
    if code in LOGIN_CODES:
        return Retry(f"smtp {code} authentication required (operator must fix credentials)")
    if 500 <= code < 600:
        return Refused(f"smtp {code} {words}")
    return Retry(f"smtp {code} {words}")
