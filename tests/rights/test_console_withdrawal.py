"""A coordinator records a consent withdrawal taken by phone in the console."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import count
from tests.console.operators import csrf, make_operator, sign_in
from tests.rights.test_data_subject import new_phone
from tests.support.api import created


@pytest.fixture
def console(server, database_url):
    operator = make_operator(database_url)
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, operator["token"]).status_code == 303
        yield http


def test_console_records_a_phone_withdrawal_with_a_note(console, client, partner, sql):
    rid = created(
        client,
        partner["keys"]["sk_test"],
        patient={"first_name": "Uche", "phone": new_phone(), "city": "Owerri"},
        route="contact",
    )["referral_id"]
    path = f"/console/referrals/{rid}/consent-withdrawal"
    page = console.get(f"/console/referrals/{rid}")
    assert "Record consent withdrawal" in page.text
    # Without the form token nothing happens.
    refused = console.post(path, data={"note": "x"}, follow_redirects=False)
    assert refused.status_code == 403
    empty = console.post(path, data={"note": "  ", "csrf_token": csrf(page)})
    assert empty.status_code == 422 and "Write what the patient said" in empty.text
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE id = :r AND status = 'cancelled'", r=rid)
        == 0
    )

    done = console.post(
        path,
        data={"note": "Patient called: moving abroad", "csrf_token": csrf(page)},
        follow_redirects=False,
    )
    assert done.status_code == 303
    after = console.get(done.headers["location"]).text
    assert "Consent withdrawal recorded" in after and "withdrew consent on" in after
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE id = :r AND status = 'cancelled'", r=rid)
        == 1
    )
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'referral.closed'",
            r=rid,
        )
        == 1
    )
    # The referral's contact task closed with it.
    assert (
        count(
            sql,
            "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND status != 'done'",
            r=rid,
        )
        == 0
    )
