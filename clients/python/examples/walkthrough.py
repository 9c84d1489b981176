"""The README's partner walkthrough with the generated Python client.

    BASE=http://127.0.0.1:8000 SK=sk_test_... WHSEC=whsec_test_... python examples/walkthrough.py

Creates a referral (and retries it), retrieves and lists it, sees a validation error, then
starts a webhook receiver on 127.0.0.1, registers it, has the sandbox send it a signed event
and verifies the signature. The server must allow loopback webhook targets
(REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS=true), as in the README's step 7.
"""

from __future__ import annotations

import os
import queue
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from threading import Thread

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from rehabref_client import (  # noqa: E402
    ApiError,
    RehabrefClient,
    WebhookVerificationError,
    new_idempotency_key,
    verify_webhook,
)
from rehabref_client.models import ReferralCreateV1  # noqa: E402

client = RehabrefClient(os.environ["BASE"], os.environ["SK"])
secret = os.environ["WHSEC"]

# 1. Create a referral (assistant route), with an idempotency key.
referral: ReferralCreateV1 = {
    "external_ref": "CLINIC-2026-0001",
    "patient": {"first_name": "Amaka", "phone": "+2348031234567", "city": "Lagos"},
    "reason": "Lower back pain after lifting; physiotherapy recommended",
    "care_mode": "either",
    "preferred_contact": "messaging",
    "route": "assistant",
    "consent": {
        "accepted": True,
        "accepted_at": "2026-01-15T09:30:00Z",
        "version": "2026-01",
        "source": "clinic_form",
    },
    "metadata": {"campaign": "back-care-week"},
}
key = new_idempotency_key()
created = client.create_referral(referral, idempotency_key=key, request_id="walkthrough-1")
referral_id = created["referral_id"]
print("created", referral_id, created["status"])

# 2. Retry with the same key: the same referral, nothing new.
again = client.create_referral(referral, idempotency_key=key)
assert again["referral_id"] == referral_id, again
print("retried", again["referral_id"])

# 4. Retrieve it by id and by your own reference.
record = client.get_referral(referral_id)
page = client.list_referrals(external_ref="CLINIC-2026-0001")
assert page["data"] == [record], page
print("retrieved", record["referral_id"], record["status"])

# 5. List, page by page.
first = client.list_referrals(limit=1)
print("listed", len(first["data"]), "has_more", first["has_more"])

# 6. A validation error: every problem at once, with a stable code.
try:
    client.create_referral(
        {**referral, "external_ref": "CLINIC-2026-0201", "care_mode": "sometimes"},  # type: ignore[typeddict-item]
        idempotency_key=new_idempotency_key(),
        request_id="walkthrough-invalid",
    )
except ApiError as error:
    assert error.status == 422 and error.code == "validation_error", error
    assert error.request_id == "walkthrough-invalid"
    print("refused", error.status, error.code, sorted(error.fields))
else:
    raise SystemExit("the invalid referral was accepted")

# 7. Receive a signed webhook on this machine and verify it.
deliveries: queue.Queue[tuple[bytes, dict[str, str]]] = queue.Queue()


class Hook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        deliveries.put((raw, dict(self.headers)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return None


receiver = HTTPServer(("127.0.0.1", 0), Hook)
Thread(target=receiver.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{receiver.server_address[1]}/hooks/rehabref"
endpoint = client.create_webhook_endpoint({"url": url}, idempotency_key=new_idempotency_key())
print("registered", endpoint["endpoint_id"], endpoint["status"])
sent = client.trigger_sandbox_webhook({"event": "referral.created", "target_url": url})
raw, headers = deliveries.get(timeout=60)
event = verify_webhook(raw, headers, secret)
assert event["event_id"] == sent["event_id"] and event["type"] == "referral.created", event
print("verified", event["type"], event["event_id"])
try:
    verify_webhook(raw.replace(b"referral", b"REFERRAL", 1), headers, secret)
except WebhookVerificationError:
    print("tampered delivery refused")
else:
    raise SystemExit("a tampered delivery verified")
receiver.shutdown()
print("walkthrough ok")
