"""A local webhook receiver for the README walkthrough: checks every delivery's signature with
rehabref.webhooks.verify and prints one line per event.

    WHSEC=whsec_test_... .venv/bin/python examples/webhook_receiver.py

Listens on 127.0.0.1:4000 (RECEIVER_PORT to change it); register
http://127.0.0.1:4000/hooks/rehabref as the endpoint. Start the server with
REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS=true so it may deliver to loopback.
"""

import http.server
import os

from rehabref.webhooks import WebhookVerificationError, verify


class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        try:
            event = verify(raw, dict(self.headers), os.environ["WHSEC"])
        except WebhookVerificationError as exc:
            print("refused:", exc, flush=True)
            self.send_response(400)
        else:
            print("verified", event["type"], event["event_id"], flush=True)
            self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per event is enough


port = int(os.environ.get("RECEIVER_PORT", "4000"))
http.server.HTTPServer(("127.0.0.1", port), Hook).serve_forever()
