"""The long-lived objects one process shares between requests, built at start-up (edge).

What varies by deployment or environment (coverage sources, physiotherapist rosters,
message providers, referral-created hooks) is chosen in ``wiring.py``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rehabref.api_request import ApiRequest
from rehabref.audit.read_group import ReadRecorder
from rehabref.billing.paystack import PaystackClient
from rehabref.channels.providers import ChannelProviders
from rehabref.channels.worker import MessageWorker
from rehabref.config import Settings
from rehabref.db import Database
from rehabref.eligibility.adapters import CoverageSources
from rehabref.idempotency.flow import IdempotentCreates
from rehabref.instance_secret import SecretBox
from rehabref.matching.roster import RosterSources
from rehabref.partners.auth import Authenticator
from rehabref.rate_limiting import RateLimiter
from rehabref.workflows.create_plan import CreatedHooks, ReferralCreated
from rehabref.workflows.create_store import CreateStore


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
    # The idempotent-create flow every POST that creates something goes through.
    idempotency: IdempotentCreates
    # Appends the audit records of API reads, many reads' records per commit.
    read_records: ReadRecorder
    # Who carries patient messages per environment and channel, and the sender that tries
    # a new referral's first message right after its create.
    channels: ChannelProviders
    messages: MessageWorker
    # Add their rows to every referral's create in their environment (the sandbox's
    # scenario jobs).
    referral_created: CreatedHooks = field(default_factory=CreatedHooks)

    def created_hooks(self, environment: str) -> Sequence[ReferralCreated]:
        return self.referral_created.of(environment)

    # Verifies live card payments (None without REHABREF_PAYSTACK_SECRET_KEY).
    paystack: PaystackClient | None = None


def services_of(request: ApiRequest) -> Services:
    services: Services = request.app.state.services
    return services
