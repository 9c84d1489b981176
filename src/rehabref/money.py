"""The one way money is written for people: ``NGN 20,000.00``.

Money is integer minor units (kobo) everywhere; every console page and PDF that shows an
amount formats it here, so a screen never mixes naira, kobo and "minor units".
"""

from __future__ import annotations


def format_money(minor: int, currency: str = "NGN") -> str:
    """``NGN 20,000.00`` for 2000000 kobo (integer arithmetic, no float)."""
    sign = "-" if minor < 0 else ""
    whole, kobo = divmod(abs(minor), 100)
    return f"{currency} {sign}{whole:,}.{kobo:02d}"
