"""Read records committed in groups (``audit.read_group.ReadRecorder``), on both databases.

Each request's ``record`` returns once its record is committed and chained; concurrent reads
share a commit; a failed group fails every request in it; a request cancelled while waiting
still has its record written. Over HTTP, a retrieve is recorded once and a miss not at all.
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from rehabref.audit.chain import Entry
from rehabref.audit.read_group import ReadRecorder
from rehabref.audit.trail import entry
from rehabref.audit.verify import verify_chain
from rehabref.db import Database
from rehabref.ids import new_id
from tests.conftest import auth
from tests.support.payloads import v1_referral


class _CountingRecorder(ReadRecorder):
    """Notes the size of each group it appends."""

    def __init__(self, db: Database, group_limit: int = 256) -> None:
        super().__init__(db, group_limit=group_limit)
        self.groups: list[int] = []

    async def _append(self, items: list[Entry]) -> None:
        self.groups.append(len(items))
        await super()._append(items)


class _FailingRecorder(ReadRecorder):
    async def _append(self, items: list[Entry]) -> None:
        raise OSError("the database went away")


class _FailingOnceRecorder(_CountingRecorder):
    """Its first group fails; the ones after it are written."""

    async def _append(self, items: list[Entry]) -> None:
        if not self.groups:
            self.groups.append(0)
            raise OSError("the database went away")
        await super()._append(items)


def _run(database_url, work):
    async def run():
        db = Database(database_url, pool_size=2)
        try:
            return await work(db)
        finally:
            await db.dispose()

    return asyncio.run(run())


def _count(sql, request_id):
    with sql.connect() as conn:
        return conn.execute(
            text("SELECT count(*) FROM audit_events WHERE request_id = :r"), {"r": request_id}
        ).scalar()


def _item(request_id):
    return entry("partner:p_1:k_1", "referral.read", referral_id="ref_x", request_id=request_id)


def test_concurrent_reads_share_commits_and_each_record_is_chained(database_url, sql):
    tag = new_id("req")

    async def work(db):
        recorder = _CountingRecorder(db)
        await asyncio.gather(*(recorder.record(_item(f"{tag}-{n}")) for n in range(40)))
        async with db.read() as conn:
            return recorder.groups, await verify_chain(conn)

    groups, verdict = _run(database_url, work)
    assert sum(groups) == 40
    assert len(groups) < 40
    assert verdict.intact, verdict
    for n in range(40):
        assert _count(sql, f"{tag}-{n}") == 1


def test_a_record_is_committed_when_record_returns(database_url, sql):
    tag = new_id("req")

    async def work(db):
        await ReadRecorder(db).record(_item(tag))
        return _count(sql, tag)

    assert _run(database_url, work) == 1


def test_a_failed_group_fails_every_request_in_it(database_url):
    async def work(db):
        recorder = _FailingRecorder(db)
        return await asyncio.gather(
            *(recorder.record(_item(new_id("req"))) for _ in range(5)), return_exceptions=True
        )

    outcomes = _run(database_url, work)
    assert all(isinstance(outcome, OSError) for outcome in outcomes)


def test_after_a_failed_group_the_next_reads_are_recorded(database_url, sql):
    tag = new_id("req")

    async def work(db):
        recorder = _FailingOnceRecorder(db)
        with pytest.raises(OSError):
            await recorder.record(_item(tag + "-failed"))
        await asyncio.gather(*(recorder.record(_item(f"{tag}-{n}")) for n in range(3)))

    _run(database_url, work)
    assert _count(sql, tag + "-failed") == 0
    assert [_count(sql, f"{tag}-{n}") for n in range(3)] == [1, 1, 1]


class _StuckRecorder(ReadRecorder):
    """Its commit never comes back (a database that hangs)."""

    async def _append(self, items: list[Entry]) -> None:
        await asyncio.Event().wait()


def test_a_flusher_stopped_mid_commit_wakes_every_waiting_request(database_url):
    async def work(db):
        recorder = _StuckRecorder(db)
        in_group = asyncio.create_task(recorder.record(_item(new_id("req"))))
        await asyncio.sleep(0.01)
        queued = asyncio.create_task(recorder.record(_item(new_id("req"))))
        await asyncio.sleep(0.01)
        assert recorder._flusher is not None
        recorder._flusher.cancel()  # as at shutdown
        return await asyncio.gather(in_group, queued, return_exceptions=True)

    outcomes = _run(database_url, work)
    assert [type(outcome) for outcome in outcomes] == [RuntimeError, RuntimeError]


def test_a_burst_is_committed_in_bounded_groups(database_url, sql):
    tag = new_id("req")

    async def work(db):
        recorder = _CountingRecorder(db, group_limit=4)
        await asyncio.gather(*(recorder.record(_item(f"{tag}-{n}")) for n in range(10)))
        return recorder.groups

    groups = _run(database_url, work)
    assert sum(groups) == 10 and max(groups) <= 4
    assert [_count(sql, f"{tag}-{n}") for n in range(10)] == [1] * 10


def test_a_request_cancelled_while_waiting_is_still_recorded(database_url, sql):
    tag = new_id("req")

    async def work(db):
        recorder = ReadRecorder(db)
        first = asyncio.create_task(recorder.record(_item(tag + "-a")))
        waiting = asyncio.create_task(recorder.record(_item(tag + "-b")))
        await asyncio.sleep(0)
        waiting.cancel()
        await first
        with pytest.raises(asyncio.CancelledError):
            await waiting
        # Let a flush that is still running finish.
        while recorder._flusher is not None and not recorder._flusher.done():
            await asyncio.sleep(0.01)

    _run(database_url, work)
    assert _count(sql, tag + "-a") == 1
    assert _count(sql, tag + "-b") == 1


def _create(client, key):
    body = v1_referral(route="contact")
    response = client.post(
        "/api/v1/partners/referrals", json=body, headers=auth(key, body["external_ref"])
    )
    assert response.status_code == 201, response.text
    return response.json()["referral_id"]


def test_a_retrieve_is_recorded_once_and_a_miss_not_at_all(client, partner, make_partner, sql):
    key = partner["keys"]["sk_test"]
    referral_id = _create(client, key)
    read = client.get(f"/api/v1/partners/referrals/{referral_id}", headers=auth(key))
    assert read.status_code == 200
    assert _count(sql, read.headers["x-request-id"]) == 1
    foreign = _create(client, make_partner()["keys"]["sk_test"])
    for missing_id in (new_id("ref"), foreign):
        missing = client.get(f"/api/v1/partners/referrals/{missing_id}", headers=auth(key))
        assert missing.status_code == 404
        assert _count(sql, missing.headers["x-request-id"]) == 0
