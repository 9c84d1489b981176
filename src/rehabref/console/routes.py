"""Every console route, for the application's route list."""

from __future__ import annotations

from rehabref.console import (
    assign,
    audit_page,
    care_forms,
    commission,
    pages,
    payer_invoices,
    payments,
    queues,
    referral,
    slots,
    workqueues,
)

ROUTES = [
    *pages.ROUTES,
    *referral.ROUTES,
    *assign.ROUTES,
    *queues.ROUTES,
    *workqueues.ROUTES,
    *care_forms.ROUTES,
    *slots.ROUTES,
    *audit_page.ROUTES,
    *payments.ROUTES,
    *commission.ROUTES,
    *payer_invoices.ROUTES,
]
