"""The pure matching rules: keywords, care modes, city names."""

from __future__ import annotations

import pytest

from rehabref.matching.rules import acceptable_modalities, wanted_specialization
from rehabref.places import area_from_city_field, city_key


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Lower back pain after lifting", "musculoskeletal"),
        ("Chronic lumbar spine pain", "musculoskeletal"),
        ("Neck stiffness, cervical spondylosis", "musculoskeletal"),
        ("Left hemiplegia after stroke", "neurological"),
        ("Spinal cord injury T10, incomplete", "neurological"),
        ("Post-surgical rehab after total knee replacement", "orthopaedic"),
        ("Post-op ACL reconstruction", "orthopaedic"),
        ("Grade 2 ankle sprain playing football", "sports"),
        ("Cerebral palsy, 6 year old child", "paediatric"),
        ("Postpartum pelvic floor weakness", "womens_health"),
        ("COPD, breathing exercises", "cardiopulmonary"),
        ("Elderly patient with recurrent falls", "geriatric"),
        ("General deconditioning", None),
        (None, None),
        ("Abdominal discomfort", None),
    ],
)
def test_keywords_pick_the_specialization(text, expected):
    assert wanted_specialization(text) == expected


def test_care_modes_map_to_modalities():
    assert acceptable_modalities("remote") == {"remote"}
    assert acceptable_modalities("face_to_face") == {"home_visit", "in_clinic"}
    assert acceptable_modalities("home_visit") == {"home_visit"}
    assert acceptable_modalities("either") == {"home_visit", "in_clinic", "remote"}
    assert acceptable_modalities(None) == {"home_visit", "in_clinic", "remote"}


@pytest.mark.parametrize(
    ("city", "key"),
    [
        ("Lagos", "lagos"),
        (" lagos state ", "lagos"),
        ("PH", "port harcourt"),
        ("Port-Harcourt", "port harcourt"),
        ("Abuja FCT", "abuja"),
        ("FCT", "abuja"),
        ("Ikeja", "lagos"),
        ("Bodija", "ibadan"),
        ("Kano", "kano"),
        ("Timbuktu", "timbuktu"),
    ],
)
def test_city_names_normalise(city, key):
    assert city_key(city) == key


def test_an_area_in_the_city_field_is_used_as_the_area():
    assert area_from_city_field("Ikeja") == "ikeja"
    assert area_from_city_field("Lagos") is None
