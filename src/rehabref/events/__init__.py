"""Platform: the event outbox, signing, subscriptions and the delivery worker.

Knows envelopes and tables, never domains; may import the referral core, tables and the
kernel."""
