"""Referral core: statuses, the state machine (``transitions``), contact tasks, event data
and scoped lookups of the Referral aggregate, plus its request schemas and records.

May import tables and the kernel only: no platform (the outbox), no domain, no edge."""
