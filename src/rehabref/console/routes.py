"""Every console route, for the application's route list."""

from __future__ import annotations

from rehabref.console import (
    audit_page,
    care_forms,
    commission,
    pages,
    payments,
    queues,
    referral,
)

ROUTES = [
    *pages.ROUTES,
    *referral.ROUTES,
    *queues.ROUTES,
    *care_forms.ROUTES,
    *audit_page.ROUTES,
    *payments.ROUTES,
    *commission.ROUTES,
]
