"""Every documented operation and schema, gathered from the domains' ``api_docs`` modules.

Add one import line per domain; the OpenAPI document, /docs and docs/api.md read from here.
"""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.errors_schema import ErrorBody
from rehabref.openapi.operations import Operation
from rehabref.referrals import api_docs as referrals_docs

OPERATIONS: tuple[Operation, ...] = (*referrals_docs.OPERATIONS,)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (ErrorBody, *referrals_docs.SCHEMA_MODELS)
