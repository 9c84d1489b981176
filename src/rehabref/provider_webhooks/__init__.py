"""Edge: what WhatsApp and Twilio post to us (patients' messages, delivery statuses).

Each request is authenticated by the provider's signature over the exact bytes received,
checked in constant time before anything is parsed; then its contents are stored and the
request is answered. The work on a message happens after that answer, in the worker
(``workflows/conversation.py``), so a provider never waits on the dialogue or on matching.
"""
