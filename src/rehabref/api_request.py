"""What shared request helpers read from a request, met by Litestar's ``Request`` (HTML pages)
and ``PlainRequest`` (every JSON route)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class ApiRequest(Protocol):
    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def query_params(self) -> Mapping[str, Any]: ...

    @property
    def scope(self) -> Any: ...

    @property
    def app(self) -> Any: ...

    @property
    def client(self) -> Any: ...

    async def body(self) -> bytes: ...
