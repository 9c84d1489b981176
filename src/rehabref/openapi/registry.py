"""Every documented operation and schema, gathered from the domains' ``api_docs`` modules.

Add one import line per domain; the OpenAPI document, /docs and docs/api.md read from here.
"""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.care import api_docs as care_docs
from rehabref.eligibility import api_docs as eligibility_docs
from rehabref.errors_schema import ErrorBody
from rehabref.events import api_docs as events_docs
from rehabref.links import api_docs as links_docs
from rehabref.matching import api_docs as matching_docs
from rehabref.openapi.operations import Operation
from rehabref.ops import api_docs as ops_docs
from rehabref.referrals import api_docs as referrals_docs

OPERATIONS: tuple[Operation, ...] = (
    *referrals_docs.OPERATIONS,
    *links_docs.OPERATIONS,
    *ops_docs.OPERATIONS,
    *events_docs.OPERATIONS,
    *eligibility_docs.OPERATIONS,
    *matching_docs.OPERATIONS,
    *care_docs.OPERATIONS,
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    ErrorBody,
    *referrals_docs.SCHEMA_MODELS,
    *links_docs.SCHEMA_MODELS,
    *ops_docs.SCHEMA_MODELS,
    *events_docs.SCHEMA_MODELS,
    *eligibility_docs.SCHEMA_MODELS,
    *matching_docs.SCHEMA_MODELS,
    *care_docs.SCHEMA_MODELS,
)
