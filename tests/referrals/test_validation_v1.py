"""Field rules of the Shape V1 create request (spec 2.1): every refusal is a 422 whose
``error.fields`` names the offending field by its dotted path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.api import create, error_of
from tests.support.payloads import v1_referral


def body_with(path: str, value: Any) -> dict[str, Any]:
    """The default valid body with one field (dotted path) replaced, or removed for ``...``."""
    body = v1_referral()
    *parents, last = path.split(".")
    target = body
    for name in parents:
        target = target[name]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return body


def refused(client, key: str, body: dict[str, Any]) -> dict[str, str]:
    error = error_of(create(client, key, body), 422, "validation_error")
    return error["fields"]


@pytest.mark.parametrize(
    ("phone", "message"),
    [
        ("08031234567", "E.164"),  # national format
        ("+234 803 123 4567", "without spaces"),  # spaces
        ("+234-803-123-4567", "E.164"),  # punctuation
        ("2348031234567", "E.164"),  # no plus sign
        ("+2341", "E.164"),  # too short to be a number
        ("+2348031234567890", "E.164"),  # too long
        ("+999123456789", "E.164"),  # no such country code
        ("+234803123456a", "E.164"),  # a letter
        ("+" + "1" * 30, "at most 20"),  # absurdly long string
    ],
)
def test_phone_must_be_valid_e164(client, partner, phone, message):
    fields = refused(client, partner["keys"]["sk_test"], body_with("patient.phone", phone))
    assert list(fields) == ["patient.phone"]
    assert message in fields["patient.phone"]


def test_phone_must_be_a_string(client, partner):
    fields = refused(client, partner["keys"]["sk_test"], body_with("patient.phone", 2348031234567))
    assert fields == {"patient.phone": "Must be a string."}


@pytest.mark.parametrize("phone", ["+2348031234567", "+447911123456", "+14155552671"])
def test_valid_e164_numbers_are_accepted(client, partner, phone):
    response = create(client, partner["keys"]["sk_test"], body_with("patient.phone", phone))
    assert response.status_code == 201, response.text


def test_at_least_one_contact_method_is_required(client, partner):
    body = v1_referral(preferred_contact="email")
    del body["patient"]["phone"]
    fields = refused(client, partner["keys"]["sk_test"], body)
    assert list(fields) == ["patient"]
    assert "phone" in fields["patient"] and "email" in fields["patient"]


def test_email_alone_is_a_contact_method(client, partner):
    body = v1_referral(preferred_contact="email")
    body["patient"] = {"first_name": "Tolu", "email": "tolu@example.com", "city": "Ibadan"}
    assert create(client, partner["keys"]["sk_test"], body).status_code == 201


@pytest.mark.parametrize("email", ["not-an-email", "a@b", "a b@example.com", "@example.com"])
def test_email_must_be_an_address(client, partner, email):
    fields = refused(client, partner["keys"]["sk_test"], body_with("patient.email", email))
    assert fields == {"patient.email": "Not a valid e-mail address."}


@pytest.mark.parametrize(
    ("preferred", "missing"), [("email", "patient.email"), ("sms", "patient.phone")]
)
def test_preferred_channel_needs_its_contact_detail(client, partner, preferred, missing):
    body = v1_referral(preferred_contact=preferred)
    body["patient"] = {"first_name": "Tolu", "city": "Ibadan"}
    body["patient"]["email" if missing == "patient.phone" else "phone"] = (
        "tolu@example.com" if missing == "patient.phone" else "+2348031234567"
    )
    fields = refused(client, partner["keys"]["sk_test"], body)
    assert list(fields) == [missing]
    assert preferred in fields[missing]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("care_mode", "home_visit"),
        ("care_mode", "REMOTE"),
        ("care_mode", True),
        ("preferred_contact", "fax"),
        ("route", "phone"),
    ],
)
def test_enums_refuse_other_values(client, partner, field, value):
    fields = refused(client, partner["keys"]["sk_test"], body_with(field, value))
    assert list(fields) == [field]
    assert "Input should be" in fields[field]


@pytest.mark.parametrize(
    ("care_mode", "preferred", "route"),
    [("remote", "sms", "contact"), ("face_to_face", "messaging", "assistant")],
)
def test_every_enum_value_is_accepted(client, partner, care_mode, preferred, route):
    body = v1_referral(care_mode=care_mode, preferred_contact=preferred, route=route)
    response = create(client, partner["keys"]["sk_test"], body)
    assert response.status_code == 201, response.text
    assert response.json()["care_mode"] == care_mode


def test_consent_must_be_accepted(client, partner):
    fields = refused(client, partner["keys"]["sk_test"], body_with("consent.accepted", False))
    assert list(fields) == ["consent.accepted"]
    assert "accepted" in fields["consent.accepted"]


@pytest.mark.parametrize("value", ["true", 1, None])
def test_consent_accepted_must_be_a_boolean(client, partner, value):
    fields = refused(client, partner["keys"]["sk_test"], body_with("consent.accepted", value))
    assert fields == {"consent.accepted": "Must be true or false."}


@pytest.mark.parametrize(
    ("accepted_at", "message"),
    [
        ("2026-11-20T10:30:00+01:00", "UTC"),  # an offset other than UTC
        ("2026-11-20T10:30:00", "UTC"),  # no offset at all
        ("2026-11-20", "UTC"),  # a date
        ("yesterday", "ISO 8601"),
        ("20/11/2026 09:30", "ISO 8601"),
        ("2099-01-01T00:00:00Z", "future"),
    ],
)
def test_consent_time_is_iso8601_utc_and_not_in_the_future(client, partner, accepted_at, message):
    fields = refused(
        client, partner["keys"]["sk_test"], body_with("consent.accepted_at", accepted_at)
    )
    assert list(fields) == ["consent.accepted_at"]
    assert message in fields["consent.accepted_at"]


@pytest.mark.parametrize("accepted_at", ["2026-01-31T09:30:00Z", "2026-01-31T09:30:00.123+00:00"])
def test_consent_time_in_utc_is_accepted_and_stored(client, partner, accepted_at):
    key = partner["keys"]["sk_test"]
    response = create(client, key, body_with("consent.accepted_at", accepted_at))
    assert response.status_code == 201, response.text
    record = client.get(
        f"/api/v1/partners/referrals/{response.json()['referral_id']}",
        headers={"Authorization": f"Bearer {key}"},
    ).json()
    stored = datetime.fromisoformat(record["consent"]["accepted_at"])
    assert stored == datetime.fromisoformat(accepted_at)


def test_consent_a_minute_ago_is_accepted(client, partner):
    recent = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    response = create(client, partner["keys"]["sk_test"], body_with("consent.accepted_at", recent))
    assert response.status_code == 201, response.text


def test_consent_must_be_an_object_with_all_fields(client, partner):
    key = partner["keys"]["sk_test"]
    assert refused(client, key, body_with("consent", "yes")) == {
        "consent": "Must be a JSON object."
    }
    assert refused(client, key, body_with("consent.version", ...)) == {
        "consent.version": "This field is required."
    }
    assert refused(client, key, body_with("consent.source", ...)) == {
        "consent.source": "This field is required."
    }


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"a": {"b": {"c": {"d": 1}}}}, "nest at most 3"),
        ({"tags": [[["deep"]]]}, "nest at most 3"),
        ({f"k{i}": "x" * 400 for i in range(12)}, "larger than 4096 bytes"),
        ({f"k{i}": i for i in range(51)}, "at most 50 keys"),
        ({"k" * 41: 1}, "1 to 40 characters"),
        ({"": 1}, "1 to 40 characters"),
        ({"campaign": "x" * 501}, "at most 500 characters"),
        ({"diagnosis": "lumbar strain"}, "health data"),
        ({"Clinical_Notes": "x"}, "health data"),
        ({"campaign": {"medication": "x"}}, "health data"),
        ([1, 2], "JSON object"),
        ("tag", "JSON object"),
    ],
)
def test_metadata_is_bounded_and_holds_no_health_data(client, partner, metadata, message):
    fields = refused(client, partner["keys"]["sk_test"], body_with("metadata", metadata))
    assert list(fields) == ["metadata"]
    assert message in fields["metadata"]


@pytest.mark.parametrize(
    "metadata",
    [
        None,
        {},
        {"campaign": "back-care-week", "cohort": 3, "flags": [True, None, 1.5]},
        {"a": {"b": {"c": 1}}},  # three levels is the limit
        {f"k{i}": i for i in range(50)},
    ],
)
def test_metadata_within_bounds_is_stored_as_sent(client, partner, metadata):
    key = partner["keys"]["sk_test"]
    response = create(client, key, body_with("metadata", metadata))
    assert response.status_code == 201, response.text
    record = client.get(
        f"/api/v1/partners/referrals/{response.json()['referral_id']}",
        headers={"Authorization": f"Bearer {key}"},
    ).json()
    assert record["metadata"] == metadata


@pytest.mark.parametrize(
    ("path", "value"),
    [("surname", "Okafor"), ("patient.last_name", "Okafor"), ("consent.ip", "10.0.0.1")],
)
def test_unknown_fields_are_refused(client, partner, path, value):
    fields = refused(client, partner["keys"]["sk_test"], body_with(path, value))
    assert fields == {path: "Unknown field."}


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("external_ref", 123, "Must be a string."),
        ("reason", ["pain"], "Must be a string."),
        ("patient", None, "Must be a JSON object."),
        ("patient", "Amaka", "Must be a JSON object."),
        ("patient.first_name", None, "Must be a string."),
        ("consent.accepted_at", 1700000000, "Must be a string."),
    ],
)
def test_wrong_types_are_refused(client, partner, path, value, message):
    fields = refused(client, partner["keys"]["sk_test"], body_with(path, value))
    assert fields == {path: message}


@pytest.mark.parametrize(
    ("path", "limit"),
    [
        ("external_ref", 255),
        ("reason", 500),
        ("patient.first_name", 100),
        ("patient.city", 100),
        ("consent.version", 64),
        ("consent.source", 64),
    ],
)
def test_strings_have_maximum_lengths(client, partner, path, limit):
    key = partner["keys"]["sk_test"]
    fields = refused(client, key, body_with(path, "x" * (limit + 1)))
    assert list(fields) == [path]
    assert f"at most {limit}" in fields[path]
    at_limit = body_with(path, "y" * limit)
    assert create(client, key, at_limit).status_code == 201


@pytest.mark.parametrize("path", ["external_ref", "reason", "patient.first_name", "patient.city"])
@pytest.mark.parametrize("value", ["", "   "])
def test_required_strings_may_not_be_blank(client, partner, path, value):
    fields = refused(client, partner["keys"]["sk_test"], body_with(path, value))
    assert list(fields) == [path]


@pytest.mark.parametrize("path", ["external_ref", "reason", "patient.first_name", "consent.source"])
@pytest.mark.parametrize("char", ["\x00", "\n", "\x1b", "\x7f"])
def test_control_characters_are_refused(client, partner, path, char):
    fields = refused(client, partner["keys"]["sk_test"], body_with(path, f"abc{char}def"))
    assert fields == {path: "Control characters are not allowed."}


@pytest.mark.parametrize("char", ["\u200b", "\u202e", "\u2066", "\ufeff"])
def test_invisible_characters_are_refused_in_external_ref(client, partner, char):
    fields = refused(client, partner["keys"]["sk_test"], body_with("external_ref", f"A{char}B"))
    assert fields == {"external_ref": "Invisible or direction-changing characters are not allowed."}


def test_every_missing_field_is_reported_at_once(client, partner):
    fields = refused(client, partner["keys"]["sk_test"], {})
    assert fields == {
        name: "This field is required."
        for name in (
            "external_ref",
            "patient",
            "reason",
            "care_mode",
            "preferred_contact",
            "route",
            "consent",
        )
    }


def test_several_invalid_fields_are_reported_together(client, partner):
    body = v1_referral(care_mode="home")
    body["patient"]["phone"] = "0803 123 4567"
    body["consent"]["accepted_at"] = "2026-11-20T10:30:00+01:00"
    fields = refused(client, partner["keys"]["sk_test"], body)
    assert set(fields) == {"care_mode", "patient.phone", "consent.accepted_at"}


def test_mixing_shape_v1_and_shape_g_fields_is_refused(client, partner):
    body = v1_referral(clinical_notes={"diagnosis": "lumbar strain"})
    fields = refused(client, partner["keys"]["sk_test"], body)
    assert fields == {"clinical_notes": "Belongs to another request shape."}


def test_refused_requests_store_nothing(client, partner, sql):
    from tests.conftest import count

    body = v1_referral(care_mode="home")
    refused(client, partner["keys"]["sk_test"], body)
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE external_ref = :e", e=body["external_ref"])
        == 0
    )
