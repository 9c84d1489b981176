"""The long-lived objects one process shares between requests, built at start-up."""

from __future__ import annotations

from dataclasses import dataclass

from litestar import Request

from rehabref.config import Settings
from rehabref.db import Database
from rehabref.instance_secret import SecretBox
from rehabref.partners.auth import Authenticator


@dataclass
class Services:
    settings: Settings
    db: Database
    box: SecretBox
    auth: Authenticator


def services_of(request: Request) -> Services:  # type: ignore[type-arg]
    services: Services = request.app.state.services
    return services
