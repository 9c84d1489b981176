"""The intake-completed workflow called directly (as the sandbox scenarios and future
channels do)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from rehabref.db import Database
from rehabref.errors import ApiError
from rehabref.wiring import roster_sources
from rehabref.workflows.intake import intake_completed
from tests.support.api import created
from tests.support.operators import moved
from tests.support.partners import TEST_RING


def _complete(database_url, referral_id):
    async def work():
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                return await intake_completed(
                    conn,
                    roster=roster_sources(),
                    ring=TEST_RING,
                    referral_id=referral_id,
                    availability="weekday_evenings",
                    care_mode="remote",
                    area="Surulere",
                    actor="test:channel",
                )
        finally:
            await db.dispose()

    return asyncio.run(work())


def _types(sql, referral_id):
    with sql.connect() as conn:
        return [
            r[0]
            for r in conn.execute(
                text("SELECT type FROM events WHERE referral_id = :r ORDER BY occurred_at"),
                {"r": referral_id},
            )
        ]


def test_answers_without_a_page_open_start_the_assistant_first(client, partner, database_url, sql):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    _complete(database_url, referral_id)
    types = _types(sql, referral_id)
    assert types[:3] == ["referral.created", "assistant.started", "patient.intake_completed"]
    with sql.connect() as conn:
        status, area = conn.execute(
            text("SELECT status, patient_area FROM referrals WHERE id = :r"), {"r": referral_id}
        ).one()
        actor = conn.execute(
            text(
                "SELECT actor FROM referral_transitions WHERE referral_id = :r "
                "AND to_status = 'assistant_started'"
            ),
            {"r": referral_id},
        ).scalar_one()
    assert (status, area, actor) == ("assistant_started", "Surulere", "test:channel")
    with pytest.raises(ApiError) as again:
        _complete(database_url, referral_id)
    assert again.value.status == 409
    assert _types(sql, referral_id).count("patient.intake_completed") == 1


def test_a_cancelled_referral_takes_no_intake(client, partner, operator_token, database_url, sql):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    moved(client, operator_token, referral_id, "cancelled")
    with pytest.raises(ApiError) as refused:
        _complete(database_url, referral_id)
    assert refused.value.status == 409
    assert _types(sql, referral_id) == ["referral.created", "referral.closed"]
