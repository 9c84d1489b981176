"""Hosted referral links: partner management API and the public referral form (spec 2.8)."""
