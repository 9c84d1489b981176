"""SmtpEmail against a real SMTP server (aiosmtpd on loopback)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rehabref.channels.content import Choice, Reply, Template
from rehabref.channels.email import SmtpEmail, SmtpServer, parse_smtp_url
from rehabref.channels.outcome import Accepted, Refused, Retry
from tests.support.server import free_port
from tests.support.smtp_server import SmtpServer as SmtpStandIn

pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")

TO = "ada@patient.example"
FROM = "care@rehabref.example"


@pytest.fixture
def smtp() -> Iterator[SmtpStandIn]:
    server = SmtpStandIn().start()
    yield server
    server.stop()


async def test_multipart_alternative_with_escaped_html_and_a_link(smtp):
    reply = Reply(
        "Hello <Ada> & family,\nyour referral is ready.",
        (Choice("home", "Home visit"), Choice("clinic", 'Clinic "A"')),
        link="https://r.example/l/abc?x=1&y=2",
        subject="Your referral",
    )
    outcome = await SmtpEmail(smtp.url, FROM, timeout=2).send(
        to=TO, content=reply, message_id="msg_01H"
    )

    assert outcome == Accepted("<msg_01H@rehabref.example>")
    [captured] = smtp.captured
    assert (captured.mail_from, captured.rcpt_tos) == (FROM, [TO])
    message = captured.message()
    assert message["Subject"] == "Your referral"
    assert message["Message-ID"] == "<msg_01H@rehabref.example>"
    assert (message["From"], message["To"]) == (FROM, TO)
    assert message.get_content_type() == "multipart/alternative"
    plain, rich = message.iter_parts()  # type: ignore[attr-defined]
    assert plain.get_content_type() == "text/plain"
    assert plain.get_content().replace("\r\n", "\n") == (
        'Hello <Ada> & family,\nyour referral is ready.\n1. Home visit\n2. Clinic "A"\n'
        "https://r.example/l/abc?x=1&y=2\n"
    )
    assert rich.get_content_type() == "text/html"
    assert rich.get_content().replace("\r\n", "\n") == (
        "<!DOCTYPE html>\n<html><body>\n"
        "<p>Hello &lt;Ada&gt; &amp; family,<br>your referral is ready.</p>\n"
        "<ol><li>Home visit</li><li>Clinic &quot;A&quot;</li></ol>\n"
        '<p><a href="https://r.example/l/abc?x=1&amp;y=2">https://r.example/l/abc?x=1&amp;y=2</a>'
        "</p>\n</body></html>\n"
    )


async def test_a_non_http_link_is_not_made_clickable(smtp):
    reply = Reply("Hi", link="javascript:alert(1)")
    await SmtpEmail(smtp.url, FROM, timeout=2).send(to=TO, content=reply, message_id="m1")
    html_part = smtp.captured[0].message().get_body(("html",))
    assert "<a " not in html_part.get_content()
    assert "<p>javascript:alert(1)</p>" in html_part.get_content()


async def test_a_template_is_sent_as_its_text_with_the_default_subject(smtp):
    template = Template("t", "en", (), "Welcome, Ada.", link="https://r.example/l/1")
    await SmtpEmail(smtp.url, FROM, timeout=2).send(to=TO, content=template, message_id="m1")
    message = smtp.captured[0].message()
    assert message["Subject"] == "Your physiotherapy referral"
    assert (
        message.get_body(("plain",)).get_content().replace("\r\n", "\n")
        == "Welcome, Ada.\nhttps://r.example/l/1\n"
    )


async def test_login_when_the_server_requires_it():
    server = SmtpStandIn(username="mailer", password="p@ss:word").start()
    try:
        url = f"smtp://mailer:p%40ss%3Aword@127.0.0.1:{server.port}?starttls=false"
        outcome = await SmtpEmail(url, FROM, timeout=2).send(
            to=TO, content=Reply("hi"), message_id="m1"
        )
        assert isinstance(outcome, Accepted)
        assert len(server.captured) == 1 and len(server.logins) == 1
    finally:
        server.stop()


async def test_rejected_login_retries_without_leaking_anything():
    server = SmtpStandIn(username="mailer", password="right").start()
    try:
        url = f"smtp://mailer:wrong@127.0.0.1:{server.port}?starttls=false"
        outcome = await SmtpEmail(url, FROM, timeout=2).send(
            to=TO, content=Reply("hi"), message_id="m1"
        )
        assert outcome == Retry("smtp 535 login rejected (operator must fix credentials)")
        assert server.captured == []
    finally:
        server.stop()


async def test_unauthenticated_send_to_a_server_requiring_auth_is_not_delivered():
    server = SmtpStandIn(username="mailer", password="right").start()
    try:
        url = f"smtp://127.0.0.1:{server.port}?starttls=false"
        outcome = await SmtpEmail(url, FROM, timeout=2).send(
            to=TO, content=Reply("hi"), message_id="m1"
        )
        assert outcome == Retry("smtp 530 authentication required (operator must fix credentials)")
        assert server.captured == []
    finally:
        server.stop()


async def test_550_for_the_recipient_is_refused_without_the_address(smtp):
    smtp.refuse[TO] = f"550 5.1.1 <{TO}>: Recipient address rejected"
    outcome = await SmtpEmail(smtp.url, FROM, timeout=2).send(
        to=TO, content=Reply("hi"), message_id="m1"
    )
    assert outcome == Refused("smtp 550 recipient refused")
    assert smtp.captured == []


async def test_450_for_the_recipient_retries(smtp):
    smtp.refuse[TO] = "450 4.2.1 Mailbox busy"
    outcome = await SmtpEmail(smtp.url, FROM, timeout=2).send(
        to=TO, content=Reply("hi"), message_id="m1"
    )
    assert outcome == Retry("smtp 450 recipient refused")


@pytest.mark.parametrize(
    ("to", "subject"),
    [(TO + "\r\nBcc: eve@evil.example", "Hi"), (TO, "Hi\r\nBcc: eve@evil.example")],
)
async def test_header_injection_is_refused_before_connecting(smtp, to, subject):
    reply = Reply("hi", subject=subject)
    outcome = await SmtpEmail(smtp.url, FROM, timeout=2).send(to=to, content=reply, message_id="m")
    assert outcome == Refused("smtp message headers not usable")
    assert smtp.captured == []


async def test_server_down_retries():
    url = f"smtp://127.0.0.1:{free_port()}?starttls=false"
    outcome = await SmtpEmail(url, FROM, timeout=0.5).send(
        to=TO, content=Reply("hi"), message_id="m1"
    )
    assert isinstance(outcome, Retry) and outcome.reason.startswith("smtp connection error")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtp://mail.example:2525", SmtpServer("mail.example", 2525, None, None, False, None)),
        ("smtp://mail.example", SmtpServer("mail.example", 25, None, None, False, None)),
        (
            "smtp://u%40x:p%2Fw@mail.example:587?starttls=true",
            SmtpServer("mail.example", 587, "u@x", "p/w", False, True),
        ),
        (
            "smtp://mail.example:25?starttls=false",
            SmtpServer("mail.example", 25, None, None, False, False),
        ),
        ("smtps://u:p@mail.example", SmtpServer("mail.example", 465, "u", "p", True, False)),
    ],
)
def test_parse_smtp_url(url, expected):
    assert parse_smtp_url(url) == expected


@pytest.mark.parametrize("url", ["http://mail.example", "smtp://", "mail.example:25"])
def test_parse_smtp_url_rejects_other_urls(url):
    with pytest.raises(ValueError):
        parse_smtp_url(url)


def test_credentials_make_starttls_required_unless_the_url_says_otherwise():
    from rehabref.channels.email import parse_smtp_url

    assert parse_smtp_url("smtp://user:pass@mail.example:587").start_tls is True
    assert parse_smtp_url("smtp://user:pass@mail.example:587?starttls=false").start_tls is False
    assert parse_smtp_url("smtp://mail.example:25").start_tls is None
    assert parse_smtp_url("smtps://user:pass@mail.example").start_tls is False
