"""Every documented operation and schema, gathered from the domains' ``api_docs`` modules.

Add one import line per domain; the OpenAPI document, /docs and docs/api.md read from here.
"""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.errors_schema import ErrorBody
from rehabref.openapi import audit as audit_docs
from rehabref.openapi import care as care_docs
from rehabref.openapi import commission as commission_docs
from rehabref.openapi import eligibility as eligibility_docs
from rehabref.openapi import events as events_docs
from rehabref.openapi import links as links_docs
from rehabref.openapi import matching as matching_docs
from rehabref.openapi import ops as ops_docs
from rehabref.openapi import payer_invoices as payer_invoice_docs
from rehabref.openapi import payments as payments_docs
from rehabref.openapi import referrals as referrals_docs
from rehabref.openapi import rights as rights_docs
from rehabref.openapi import scheduling as scheduling_docs
from rehabref.openapi.answers import AnswerType
from rehabref.openapi.operations import Operation

OPERATIONS: tuple[Operation, ...] = (
    *referrals_docs.OPERATIONS,
    *links_docs.OPERATIONS,
    *ops_docs.OPERATIONS,
    *rights_docs.OPERATIONS,
    *payments_docs.OPERATIONS,
    *commission_docs.OPERATIONS,
    *payer_invoice_docs.OPERATIONS,
    *events_docs.OPERATIONS,
    *eligibility_docs.OPERATIONS,
    *matching_docs.OPERATIONS,
    *care_docs.OPERATIONS,
    *scheduling_docs.OPERATIONS,
    *scheduling_docs.FEED_OPERATIONS,
    *audit_docs.OPERATIONS,
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    ErrorBody,
    *referrals_docs.SCHEMA_MODELS,
    *links_docs.SCHEMA_MODELS,
    *ops_docs.SCHEMA_MODELS,
    *rights_docs.SCHEMA_MODELS,
    *payments_docs.SCHEMA_MODELS,
    *commission_docs.SCHEMA_MODELS,
    *payer_invoice_docs.SCHEMA_MODELS,
    *events_docs.SCHEMA_MODELS,
    *eligibility_docs.SCHEMA_MODELS,
    *matching_docs.SCHEMA_MODELS,
    *care_docs.SCHEMA_MODELS,
    *scheduling_docs.SCHEMA_MODELS,
    *audit_docs.SCHEMA_MODELS,
)

# The typed answers (msgspec Structs): their schemas come from the types the API encodes.
ANSWER_TYPES: tuple[AnswerType, ...] = (
    *referrals_docs.ANSWER_TYPES,
    *links_docs.ANSWER_TYPES,
    *events_docs.ANSWER_TYPES,
    *care_docs.ANSWER_TYPES,
    *commission_docs.ANSWER_TYPES,
    *eligibility_docs.ANSWER_TYPES,
)
