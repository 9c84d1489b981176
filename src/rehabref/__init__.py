"""rehabref: partner referral and rehabilitation coordination service."""

__version__ = "0.1.0"
