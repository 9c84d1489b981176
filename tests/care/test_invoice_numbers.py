"""Self-pay invoice numbers name the whole partner: two partners whose ids end alike never
share an invoice (the references are unique, so a shared number failed the completion)."""

from __future__ import annotations

from datetime import UTC, datetime

from rehabref.care.invoices import invoice_number

NOVEMBER = datetime(2026, 11, 24, 9, 30, tzinfo=UTC)


def test_partners_whose_ids_end_alike_get_different_invoices():
    first = "ptn_01m87f79veedev9q6x7pmfweth"
    second = "ptn_01m87g00aaaaaaaaaaaapmfweth"
    assert first[-6:] == second[-6:]
    assert invoice_number(first, NOVEMBER) != invoice_number(second, NOVEMBER)


def test_the_number_is_the_month_and_the_partner_id_without_its_prefix():
    number = invoice_number("ptn_01m87f79veedev9q6x7pmfweth", NOVEMBER)
    assert number == "INV-202611-01M87F79VEEDEV9Q6X7PMFWETH"


def test_the_month_is_taken_in_utc():
    late_evening_lagos = datetime.fromisoformat("2026-12-01T00:30:00+01:00")
    assert invoice_number("ptn_x", late_evening_lagos).startswith("INV-202611-")
