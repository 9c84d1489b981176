"""Money from patients: card payments (self-pay) through Paystack (docs/payments.md).

Domain modules: ``policy`` (pure decisions), ``paystack`` (the HTTP client), ``signature``
(webhook proof), ``store`` (rows), ``initializer`` (the outbox worker that asks Paystack
for a checkout), ``schemas`` (the ops API body). Sequences that cross into referrals and
patient messages live in ``workflows/payments.py``.
"""
