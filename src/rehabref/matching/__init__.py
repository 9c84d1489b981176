"""Physiotherapist registry and matching a referral to one of them."""
