"""CSRF protection for server-rendered forms: a signed token bound to a browser cookie.

The page sets a random, HttpOnly, SameSite=Strict cookie and embeds
``<issued epoch s>.<nonce>.<HMAC(purpose, cookie value, issued, nonce)>`` in a hidden field.
A POST is accepted only when the cookie arrives and the field's signature matches it, for the same
purpose (a link's public code, or a console session), within ``max_age`` seconds. Another
site can neither read the cookie nor forge the signature. The nonce names one rendering of
the form: the hosted link uses it to recognise a double submission of the same form.
"""

from __future__ import annotations

import secrets
import time

from litestar.datastructures import Cookie

from rehabref.instance_secret import SecretBox

FIELD = "csrf_token"


def new_binding() -> str:
    return secrets.token_urlsafe(24)


def issue(box: SecretBox, *, purpose: str, binding: str) -> str:
    issued = int(time.time())
    nonce = secrets.token_hex(8)
    return f"{issued}.{nonce}.{box.sign(f'csrf:{purpose}:{binding}:{issued}:{nonce}')}"


def check(
    box: SecretBox, *, purpose: str, binding: str | None, token: object, max_age: int
) -> str | None:
    """The token's nonce when it is valid for this purpose and cookie, else None.

    ``token`` is whatever the form field held: a multipart field can be an uploaded file.
    """
    if not binding or not isinstance(token, str) or not token or len(token) > 200:
        return None
    parts = token.split(".")
    if len(parts) != 3:
        return None
    issued, nonce, signature = parts
    if not (issued.isascii() and issued.isdigit()) or not 0 <= time.time() - int(issued) <= max_age:
        return None
    if not box.verify(f"csrf:{purpose}:{binding}:{issued}:{nonce}", signature):
        return None
    return nonce


def cookie(name: str, value: str, *, path: str, secure: bool, max_age: int | None) -> Cookie:
    return Cookie(
        key=name,
        value=value,
        path=path,
        httponly=True,
        samesite="strict",
        secure=secure,
        max_age=max_age,
    )
