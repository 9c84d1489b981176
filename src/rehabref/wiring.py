"""Everything chosen at start-up, in one read: coverage sources, physiotherapist rosters,
patient-message providers, referral-created hooks, the durable scheduler's job kinds, the
worker's periodic jobs and its delivery transport.

Nothing in the service registers behaviour by being imported; ``app.py`` and the worker
process build what they need from here.
"""

from __future__ import annotations

import logging
from functools import partial

from rehabref.billing import payer_invoice_store
from rehabref.billing.initializer import InitializerConfig, initialize_due
from rehabref.billing.paystack import PaystackClient
from rehabref.care.availability_store import FreeSlotFinder
from rehabref.channels.email import SmtpEmail
from rehabref.channels.failures import Fallback
from rehabref.channels.inbox import INBOUND_JOB
from rehabref.channels.outcome import Provider
from rehabref.channels.providers import ChannelProviders
from rehabref.channels.twilio import TwilioSms
from rehabref.channels.whatsapp import WhatsAppCloud
from rehabref.channels.worker import MessageWorker, MessageWorkerConfig
from rehabref.clock import utcnow
from rehabref.config import Settings
from rehabref.crypto import KeyRing
from rehabref.db import Database
from rehabref.eligibility.adapters import CoverageSources, RegistryAdapter
from rehabref.events.periodic import PeriodicJobs
from rehabref.events.transport import ByEnvironment, DeliveryTransport, HttpTransport
from rehabref.events.worker import WorkerConfig
from rehabref.instance_secret import SecretBox
from rehabref.jobs import Handlers, run_due
from rehabref.matching.roster import RegistryRoster, RosterSources
from rehabref.referrals.withdrawal_links import withdrawal_url
from rehabref.sandbox import scenarios
from rehabref.sandbox.coverage import SandboxCoverage
from rehabref.sandbox.messages import SandboxChannel
from rehabref.sandbox.replay_transport import PhoneFiveReplay
from rehabref.sandbox.roster import SandboxRoster
from rehabref.workflows import (
    appointment_messages,
    conversation,
    physio_messages,
    retention,
    slot_offers,
)
from rehabref.workflows.create_plan import CreatedHooks

log = logging.getLogger("rehabref.channels")

# How often the worker looks for due scheduled jobs (scenario steps, retries).
SCHEDULED_JOBS_POLL_SECONDS = 0.5
# Retention (idempotent replies, assistant sessions, closed referrals' personal data).
RETENTION_SECONDS = 3600
# Last month's payer invoices are drafted within the hour after the month ends.
PAYER_INVOICES_SECONDS = 3600
# How often the worker looks for patient messages to send, and for silent conversations.
MESSAGES_POLL_SECONDS = 0.1
NUDGE_POLL_SECONDS = 60
# A provider call that takes longer is abandoned and retried.
PROVIDER_TIMEOUT_SECONDS = 10.0
# How often the worker looks for live payment requests to initialize with Paystack.
PAYMENTS_POLL_SECONDS = 0.2


def paystack_client(settings: Settings) -> PaystackClient | None:
    """Live card payments: Paystack, when its secret key is set. Test keys never use it."""
    if not settings.paystack_secret_key:
        return None
    return PaystackClient(
        api_base=settings.paystack_api_base,
        secret_key=settings.paystack_secret_key,
        timeout=PROVIDER_TIMEOUT_SECONDS,
    )


def coverage_sources(ring: KeyRing) -> CoverageSources:
    """Live keys: the imported HMO registries (members' names and phones opened with
    ``ring``). Test keys: the sandbox's synthetic members."""
    return CoverageSources(live=RegistryAdapter(ring), test=SandboxCoverage())


def roster_sources() -> RosterSources:
    """Live keys: the physiotherapist registry. Test keys: the partner's sandbox roster,
    created on first use for each city a test referral names."""
    return RosterSources(live=RegistryRoster(), test=SandboxRoster(), availability=FreeSlotFinder())


def channel_providers(settings: Settings) -> ChannelProviders:
    """Live messages: each channel whose settings are all present. Test keys: the sandbox,
    which records every message and sends none."""
    live: dict[str, Provider] = {}
    if (
        settings.whatsapp_access_token
        and settings.whatsapp_phone_number_id
        and settings.whatsapp_app_secret
    ):
        live["whatsapp"] = WhatsAppCloud(
            api_base=settings.whatsapp_api_base,
            access_token=settings.whatsapp_access_token,
            phone_number_id=settings.whatsapp_phone_number_id,
            timeout=PROVIDER_TIMEOUT_SECONDS,
        )
    if settings.twilio_account_sid and settings.twilio_auth_token and settings.twilio_from:
        live["sms"] = TwilioSms(
            api_base=settings.twilio_api_base,
            account_sid=settings.twilio_account_sid,
            auth_token=settings.twilio_auth_token,
            from_number=settings.twilio_from,
            status_callback_url=f"{settings.base_url}/webhooks/twilio/status",
            timeout=PROVIDER_TIMEOUT_SECONDS,
        )
    if settings.smtp_url and settings.email_from:
        live["email"] = SmtpEmail(
            smtp_url=settings.smtp_url,
            from_address=settings.email_from,
            timeout=PROVIDER_TIMEOUT_SECONDS,
        )
    return ChannelProviders(
        live=live, test=SandboxChannel(announce=settings.messaging == "console")
    )


def warn_about_missing_channels(channels: ChannelProviders) -> None:
    """One start-up warning per live channel nobody can be messaged on."""
    for channel in channels.missing():
        log.warning(
            "no %s provider configured: live referrals preferring it get a coordinator task",
            channel,
            extra={"channel": channel},
        )


def message_worker(
    db: Database, settings: Settings, channels: ChannelProviders, box: SecretBox
) -> MessageWorker:
    """Sends patient messages, each with the patient's consent-withdrawal link; a message
    nobody can receive goes to a coordinator."""
    return MessageWorker(
        db,
        channels,
        Fallback(channels, conversation.message_undeliverable, box.ring),
        MessageWorkerConfig(
            retry_base_seconds=settings.message_retry_base_seconds,
            lease_seconds=settings.message_lease_seconds,
        ),
        withdrawal_link=partial(withdrawal_url, box, settings.base_url),
    )


def delivery_transport(db: Database, config: WorkerConfig, *, ring: KeyRing) -> DeliveryTransport:
    """Live deliveries: the real HTTP sender. Sandbox deliveries: the same sender, with the
    three copies of test phone 5 (replay / webhook failure) for that phone's referrals."""
    http = HttpTransport.create(
        allow_loopback=config.allow_loopback_targets, concurrency=config.concurrency
    )
    return ByEnvironment(live=http, test=PhoneFiveReplay(db, http, ring))


def referral_created_hooks() -> CreatedHooks:
    """Per environment: in the sandbox, test phones start their scenario (a no-op for other
    phones); a live create runs no sandbox code."""
    return CreatedHooks(test=(scenarios.begin,))


def job_handlers(coverage: CoverageSources, roster: RosterSources, ring: KeyRing) -> Handlers:
    """Every kind of scheduled job and the function that runs it."""
    return {
        **scenarios.handlers(coverage, roster, ring),
        INBOUND_JOB: partial(
            conversation.handle_inbound, roster=roster, ring=ring, coverage=coverage
        ),
        appointment_messages.REMINDER_JOB: partial(appointment_messages.send_reminder, ring=ring),
        physio_messages.REMINDER_JOB: partial(physio_messages.send_reminder, ring=ring),
        slot_offers.EXPIRE_JOB: slot_offers.expire_offer,
    }


async def nudge_silent_conversations(db: Database, *, ring: KeyRing) -> None:
    await conversation.nudge_silent(db, ring=ring)


async def enforce_retention(
    db: Database, *, periods: retention.Periods, ring: KeyRing
) -> dict[str, int]:
    """Removes what the documented retention periods say is due (idempotent replies when
    they expire included)."""
    async with db.write() as conn:
        return await retention.enforce(conn, periods, ring=ring, now=utcnow(), dry_run=False)


async def draft_payer_invoices(db: Database) -> list[str]:
    """Last month's HMO and employer invoices, drafted once its month has ended."""
    async with db.write() as conn:
        return await payer_invoice_store.draft_last_month(conn, now=utcnow())


def periodic_jobs(
    coverage: CoverageSources,
    roster: RosterSources,
    messages: MessageWorker,
    *,
    ring: KeyRing,
    settings: Settings,
    paystack: PaystackClient | None = None,
) -> PeriodicJobs:
    """What every delivery worker runs besides deliveries (jobs tolerate running in several
    workers at once). A scenario step that gives up is reported to the partner."""
    payments: PeriodicJobs = {}
    if paystack is not None:
        config = InitializerConfig(base_url=settings.base_url)
        payments = {
            "payments.initialize_due": (
                PAYMENTS_POLL_SECONDS,
                partial(initialize_due, client=paystack, config=config, ring=ring),
            )
        }
    return {
        **payments,
        "channels.send_due": (MESSAGES_POLL_SECONDS, messages.run_once),
        "intake.nudge_silent": (
            NUDGE_POLL_SECONDS,
            partial(nudge_silent_conversations, ring=ring),
        ),
        "billing.draft_payer_invoices": (PAYER_INVOICES_SECONDS, draft_payer_invoices),
        "rights.retention": (
            RETENTION_SECONDS,
            partial(enforce_retention, periods=retention.periods_of(settings), ring=ring),
        ),
        "scheduled_jobs.run_due": (
            SCHEDULED_JOBS_POLL_SECONDS,
            partial(
                run_due,
                handlers=job_handlers(coverage, roster, ring),
                gave_up=partial(scenarios.tell_partner, ring=ring),
            ),
        ),
    }
