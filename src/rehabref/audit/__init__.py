"""Audit controls: an append-only, hash-chained record of who read or changed patient data."""
