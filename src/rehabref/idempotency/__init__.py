"""Platform: Idempotency-Key records and the idempotent-create flow.

May import the referral core, tables and the kernel; never a domain."""
