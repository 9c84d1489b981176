"""HMO and employer invoices: the ops API's bodies and the documented answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class PayerInvoiceDraftIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={
            "examples": [{"payer_kind": "hmo", "payer_id": "AXA_MANSARD", "period": "2026-10"}]
        },
    )

    payer_kind: Literal["hmo", "employer"]
    payer_id: str = Field(
        min_length=1,
        max_length=40,
        description="The HMO code, or the sponsoring employer's partner id.",
    )
    period: str = Field(
        pattern=r"^\d{4}-(0[1-9]|1[0-2])$",
        description="The month, YYYY-MM (UTC); it must have ended.",
    )
    environment: Literal["live", "test"] = Field("live")


class PayerInvoiceMoveIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={"examples": [{"to": "paid", "remittance_reference": "AXA-RMT-0042"}]},
    )

    to: Literal["issued", "paid"]
    remittance_reference: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_./-]*$",
        description="With `to: paid`: the payer's payment reference, if any.",
    )


class PayerInvoiceRecord(BaseModel):
    """An invoice's header: the month's totals in integer minor units."""

    id: str = Field(examples=["pin_01jd3k8e5v0m2c7h4q9w1x6y3z"])
    number: str = Field(examples=["HMO-202610-AXA_MANSARD"])
    payer_kind: Literal["hmo", "employer"]
    payer_id: str
    payer_name: str
    environment: Literal["live", "test"]
    period: str = Field(examples=["2026-10"])
    currency: str = Field(examples=["NGN"])
    status: Literal["draft", "issued", "paid"]
    line_count: int
    amount_total_minor: int = Field(description="Sum of the lines' amounts.")
    co_pay_total_minor: int = Field(description="Sum of the lines' co-pays (paid by members).")
    payable_total_minor: int = Field(description="amount_total_minor - co_pay_total_minor.")
    created_at: str
    issued_at: str | None
    paid_at: str | None
    remittance_reference: str | None


class PayerInvoiceLine(BaseModel):
    """One completed session; no patient names or clinical text."""

    line_number: int
    invoice_reference: str = Field(
        examples=["HMO-202610-AXA_MANSARD-0007"],
        description="The `invoice_reference` of the session's `session.completed` event.",
    )
    referral_id: str
    session_id: str
    member_id: str | None = Field(description="The HMO member's policy number.")
    policy: str | None = Field(description="The member's plan tier.")
    pre_auth_token: str | None
    procedure_code: str
    session_date: str = Field(examples=["2026-10-14"])
    currency: str
    amount_minor: int
    co_pay_minor: int
    payable_minor: int


class PayerInvoiceDetail(PayerInvoiceRecord):
    lines: list[PayerInvoiceLine]


class PayerInvoiceList(BaseModel):
    data: list[PayerInvoiceRecord]
    has_more: bool
    next_cursor: str | None


class RemittanceResult(BaseModel):
    paid: list[PayerInvoiceRecord] = Field(description="The invoices the file marked paid.")
