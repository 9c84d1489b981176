"""Everything chosen at start-up, in one read: coverage sources, physiotherapist rosters,
referral-created hooks, the durable scheduler's job kinds, the worker's periodic jobs and
its delivery transport.

Nothing in the service registers behaviour by being imported; ``app.py`` and the worker
process build what they need from here.
"""

from __future__ import annotations

from functools import partial

from rehabref.db import Database
from rehabref.eligibility.adapters import CoverageSources, RegistryAdapter
from rehabref.events.periodic import PeriodicJobs
from rehabref.events.transport import ByEnvironment, DeliveryTransport, HttpTransport
from rehabref.events.worker import WorkerConfig
from rehabref.idempotency.service import purge_expired
from rehabref.jobs import Handlers, run_due
from rehabref.matching.roster import RegistryRoster, RosterSources
from rehabref.sandbox import scenarios
from rehabref.sandbox.coverage import SandboxCoverage
from rehabref.sandbox.replay_transport import PhoneFiveReplay
from rehabref.sandbox.roster import SandboxRoster
from rehabref.workflows.referral_created import ReferralCreated

# How often the worker looks for due scheduled jobs (scenario steps, retries).
SCHEDULED_JOBS_POLL_SECONDS = 0.5
IDEMPOTENCY_PURGE_SECONDS = 3600


def coverage_sources() -> CoverageSources:
    """Live keys: the imported HMO registries. Test keys: the sandbox's synthetic members."""
    return CoverageSources(live=RegistryAdapter(), test=SandboxCoverage())


def roster_sources() -> RosterSources:
    """Live keys: the physiotherapist registry. Test keys: the partner's sandbox roster,
    created on first use for each city a test referral names."""
    return RosterSources(live=RegistryRoster(), test=SandboxRoster())


def delivery_transport(db: Database, config: WorkerConfig) -> DeliveryTransport:
    """Live deliveries: the real HTTP sender. Sandbox deliveries: the same sender, with the
    three copies of test phone 5 (replay / webhook failure) for that phone's referrals."""
    http = HttpTransport.create(
        allow_private=config.allow_private_targets, concurrency=config.concurrency
    )
    return ByEnvironment(live=http, test=PhoneFiveReplay(db, http))


def referral_created_hooks() -> tuple[ReferralCreated, ...]:
    """Test phones start their sandbox scenario (a no-op for live keys and other phones)."""
    return (scenarios.begin,)


def job_handlers(coverage: CoverageSources, roster: RosterSources) -> Handlers:
    """Every kind of scheduled job and the function that runs it."""
    return scenarios.handlers(coverage, roster)


async def purge_idempotency_records(db: Database) -> None:
    async with db.write() as conn:
        await purge_expired(conn)


def periodic_jobs(coverage: CoverageSources, roster: RosterSources) -> PeriodicJobs:
    """What every delivery worker runs besides deliveries (jobs tolerate running in several
    workers at once). A scenario step that gives up is reported to the partner."""
    return {
        "idempotency.purge_expired": (IDEMPOTENCY_PURGE_SECONDS, purge_idempotency_records),
        "scheduled_jobs.run_due": (
            SCHEDULED_JOBS_POLL_SECONDS,
            partial(
                run_due,
                handlers=job_handlers(coverage, roster),
                gave_up=scenarios.tell_partner,
            ),
        ),
    }
