"""Reading a posted HTML form (the patient pages and the console).

Threat: Litestar decodes each multipart field as UTF-8 and lets the ``UnicodeDecodeError`` of a
part that is not escape a 500 (which also says "retry"). Any bytes a client sends are a 4xx.
"""

from __future__ import annotations

from typing import Any

from litestar import Request

from rehabref.errors import ApiError


async def posted_form(request: Request[Any, Any, Any]) -> Any:
    """The form fields; a 400 ``malformed_request`` when a field is not valid UTF-8."""
    try:
        return await request.form()
    except UnicodeDecodeError:
        raise ApiError(400, "malformed_request", "The form is not valid UTF-8.") from None
