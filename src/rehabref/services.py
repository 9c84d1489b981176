"""The long-lived objects one process shares between requests, built at start-up (edge).

What varies by deployment or environment (coverage sources, physiotherapist rosters,
referral-created hooks) is chosen in ``wiring.py``."""

from __future__ import annotations

from dataclasses import dataclass, field

from rehabref.api_request import ApiRequest
from rehabref.config import Settings
from rehabref.db import Database
from rehabref.eligibility.adapters import CoverageSources
from rehabref.instance_secret import SecretBox
from rehabref.intake.messaging import MessagingAdapter, SandboxMessaging
from rehabref.matching.roster import RosterSources
from rehabref.partners.auth import Authenticator
from rehabref.rate_limiting import RateLimiter
from rehabref.workflows.create_store import CreateStore
from rehabref.workflows.referral_created import ReferralCreated


@dataclass
class Services:
    settings: Settings
    db: Database
    box: SecretBox
    auth: Authenticator
    # Per-key and per-IP counters, in one storage (memory, or Redis when configured).
    rate_limiter: RateLimiter
    # Where each environment's HMO coverage facts come from.
    coverage: CoverageSources
    # Where each environment's referrals find their physiotherapists.
    roster: RosterSources
    # Writes every referral create (one statement on PostgreSQL, one transaction elsewhere).
    create_store: CreateStore
    # Add their rows to every referral's create (the sandbox's scenario jobs).
    referral_created: tuple[ReferralCreated, ...] = ()
    # Outbound patient messages; app start-up picks it from REHABREF_MESSAGING.
    messaging: MessagingAdapter = field(default_factory=SandboxMessaging)


def services_of(request: ApiRequest) -> Services:
    services: Services = request.app.state.services
    return services
