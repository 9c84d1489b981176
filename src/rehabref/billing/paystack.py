"""The Paystack API client: initialize a transaction, verify one.

Production code, tested against a loopback stand-in that speaks Paystack's documented JSON.
``initialize`` is called only by the initialization worker (``billing/initializer.py``),
``verify`` by the webhook handling before anything is recorded. Neither raises anything but
``PaystackError`` for Paystack's or the network's failures; reasons never carry the secret
key or the patient's e-mail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from rehabref.billing.policy import Charge

DEFAULT_API_BASE = "https://api.paystack.co"


class PaystackError(Exception):
    """Paystack did not answer usefully; ``retryable`` when trying again may help."""

    def __init__(self, reason: str, *, retryable: bool) -> None:
        super().__init__(reason)
        self.reason = reason[:200]
        self.retryable = retryable


@dataclass(frozen=True)
class Initialized:
    authorization_url: str
    access_code: str
    reference: str


class PaystackGateway(Protocol):
    """What the payment flows need of Paystack (the live client, or the sandbox checkout)."""

    async def verify(self, reference: str) -> Charge: ...


class PaystackClient:
    def __init__(self, *, api_base: str, secret_key: str, timeout: float) -> None:
        self._http = httpx.AsyncClient(
            base_url=api_base.rstrip("/"),
            headers={"Authorization": f"Bearer {secret_key}"},
            timeout=httpx.Timeout(timeout),
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        try:
            response = await self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise PaystackError(f"network: {type(exc).__name__}", retryable=True) from None
        if response.status_code == 429 or response.status_code >= 500:
            raise PaystackError(f"HTTP {response.status_code}", retryable=True)
        try:
            answer = response.json()
        except ValueError:
            raise PaystackError(f"HTTP {response.status_code}: not JSON", retryable=True) from None
        if not isinstance(answer, dict):
            raise PaystackError(f"HTTP {response.status_code}: not an object", retryable=True)
        if response.status_code >= 400 or answer.get("status") is not True:
            message = str(answer.get("message") or "refused")[:120]
            raise PaystackError(f"HTTP {response.status_code}: {message}", retryable=False)
        data = answer.get("data")
        if not isinstance(data, dict):
            raise PaystackError("the answer has no data object", retryable=True)
        return data

    async def initialize(
        self,
        *,
        email: str,
        amount_minor: int,
        currency: str,
        reference: str,
        callback_url: str,
        metadata: dict[str, str],
    ) -> Initialized:
        data = await self._call(
            "POST",
            "/transaction/initialize",
            {
                "email": email,
                "amount": amount_minor,
                "currency": currency,
                "reference": reference,
                "callback_url": callback_url,
                "metadata": metadata,
            },
        )
        url, code = data.get("authorization_url"), data.get("access_code")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise PaystackError("initialize returned no authorization_url", retryable=True)
        return Initialized(
            authorization_url=url,
            access_code=str(code or ""),
            reference=str(data.get("reference") or reference),
        )

    async def verify(self, reference: str) -> Charge:
        data = await self._call("GET", f"/transaction/verify/{quote(reference, safe='')}", None)
        return charge_of(data, reference)


def charge_of(data: dict[str, Any], reference: str) -> Charge:
    """A verify answer's ``data`` as a ``Charge``; anything malformed is not a success."""
    amount = data.get("amount")
    currency = data.get("currency")
    if (
        data.get("reference") != reference
        or not isinstance(amount, int)
        or isinstance(amount, bool)
        or not isinstance(currency, str)
    ):
        raise PaystackError("verify returned an unusable transaction", retryable=False)
    return Charge(
        reference=reference,
        status=str(data.get("status") or ""),
        amount_minor=amount,
        currency=currency.upper(),
    )
