"""Referral core: statuses, the state machine (``transitions``), contact tasks, event data
and scoped lookups of the Referral aggregate, plus its request schemas, its answers
(``responses``: msgspec Structs) and the records built from rows.

May import tables and the kernel only: no platform (the outbox), no domain, no edge."""
