"""A Paystack API stand-in on a real loopback HTTP server (stdlib only), written from
Paystack's documentation (not rehabref's code): ``POST /transaction/initialize`` and
``GET /transaction/verify/:reference`` with their documented JSON, Bearer secret-key auth,
and signed webhook bodies (``x-paystack-signature``: hex HMAC-SHA512 of the raw body with
the secret key).

A transaction is ``abandoned`` until the test charges it (``charge``), as a patient paying on
Paystack's checkout would; ``verify`` then reports what was charged, which may differ from
what was initialized (a tampered amount).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.support.provider_stand_in import RecordedRequest, RecordingServer, Response
from tests.support.server import free_port


def paystack_signature(secret: str, raw: bytes) -> str:
    return hmac.new(secret.encode(), raw, hashlib.sha512).hexdigest()


@dataclass
class PaystackApi:
    secret_key: str = "sk_test_paystack_standin_" + "0" * 16
    port: int = field(default_factory=free_port)
    requests: list[RecordedRequest] = field(default_factory=list)
    transactions: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Answer every call with this HTTP status instead (an outage), when set.
    outage: int | None = None

    def __post_init__(self) -> None:
        self._server: RecordingServer | None = None
        self._lock = threading.Lock()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _answer(self, status: int, body: dict[str, Any]) -> Response:
        return Response(status, json.dumps(body).encode(), {})

    def respond(self, request: RecordedRequest, index: int) -> Response:
        if self.outage is not None:
            return self._answer(self.outage, {"status": False, "message": "Server error"})
        if request.authorization != f"Bearer {self.secret_key}":
            return self._answer(401, {"status": False, "message": "Invalid key"})
        if request.method == "POST" and request.path == "/transaction/initialize":
            return self._initialize(request)
        prefix = "/transaction/verify/"
        if request.method == "GET" and request.path.startswith(prefix):
            return self._verify(request.path[len(prefix) :])
        return self._answer(404, {"status": False, "message": "Not found"})

    def _initialize(self, request: RecordedRequest) -> Response:
        body = request.json()
        email, amount, reference = body.get("email"), body.get("amount"), body.get("reference")
        if not isinstance(email, str) or "@" not in email or not isinstance(amount, int):
            return self._answer(400, {"status": False, "message": "Invalid Email Address"})
        with self._lock:
            if reference in self.transactions:
                return self._answer(
                    400, {"status": False, "message": "Duplicate Transaction Reference"}
                )
            access_code = secrets.token_hex(8)
            self.transactions[reference] = {
                "status": "abandoned",
                "amount": amount,
                "currency": body.get("currency", "NGN"),
                "email": email,
                "metadata": body.get("metadata"),
                "callback_url": body.get("callback_url"),
                "paid_at": None,
                "id": 4_000_000 + len(self.transactions),
            }
        return self._answer(
            200,
            {
                "status": True,
                "message": "Authorization URL created",
                "data": {
                    "authorization_url": f"https://checkout.paystack.com/{access_code}",
                    "access_code": access_code,
                    "reference": reference,
                },
            },
        )

    def _verify(self, reference: str) -> Response:
        transaction = self.transactions.get(reference)
        if transaction is None:
            return self._answer(
                400, {"status": False, "message": "Transaction reference not found"}
            )
        return self._answer(
            200,
            {
                "status": True,
                "message": "Verification successful",
                "data": {
                    "id": transaction["id"],
                    "domain": "test",
                    "status": transaction["status"],
                    "reference": reference,
                    "amount": transaction["amount"],
                    "currency": transaction["currency"],
                    "paid_at": transaction["paid_at"],
                    "gateway_response": "Successful",
                    "channel": "card",
                    "metadata": transaction["metadata"],
                    "customer": {"email": transaction["email"]},
                },
            },
        )

    def charge(self, reference: str, *, amount: int | None = None) -> bytes:
        """The patient pays (``amount`` overrides what was initialized); the raw body of the
        ``charge.success`` webhook Paystack then sends."""
        transaction = self.transactions[reference]
        transaction["status"] = "success"
        transaction["paid_at"] = "2026-11-24T10:00:00.000Z"
        if amount is not None:
            transaction["amount"] = amount
        return json.dumps(
            {
                "event": "charge.success",
                "data": {
                    "id": transaction["id"],
                    "domain": "test",
                    "status": "success",
                    "reference": reference,
                    "amount": transaction["amount"],
                    "currency": transaction["currency"],
                    "paid_at": transaction["paid_at"],
                    "metadata": transaction["metadata"],
                    "customer": {"email": transaction["email"]},
                },
            }
        ).encode()

    def refund_event(self, reference: str, *, refund_id: int, amount: int) -> bytes:
        transaction = self.transactions[reference]
        return json.dumps(
            {
                "event": "refund.processed",
                "data": {
                    "status": "processed",
                    "transaction_reference": reference,
                    "refund_reference": f"RF-{refund_id}",
                    "amount": amount,
                    "currency": transaction["currency"],
                    "processor": "card",
                    "customer": {"email": transaction["email"]},
                    "integration": 463433,
                    "domain": "test",
                    "id": refund_id,
                },
            }
        ).encode()

    def signed(self, raw: bytes) -> dict[str, str]:
        return {
            "x-paystack-signature": paystack_signature(self.secret_key, raw),
            "content-type": "application/json",
        }

    def start(self) -> PaystackApi:
        self._server = RecordingServer(self.port, self.requests, self.respond)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
