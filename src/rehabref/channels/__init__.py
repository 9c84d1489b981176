"""Platform: patient messages (the outbox, its worker and the providers that carry them).

Knows envelopes and tables, never the intake dialogue or any other domain.
"""
