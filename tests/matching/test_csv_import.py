"""`rehabref physios import FILE.csv`: validation with line numbers, upsert by license."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from rehabref.db import sync_url
from tests.matching.conftest import REGISTRY_CSV, run_import
from tests.support.databases import fresh_database

HEADER = (
    "name,license_number,specializations,rating,phone,city,areas,modalities,weekly_capacity,"
    "active\n"
)
GOOD = (
    "Ngozi Eze,MRTB/PT/2019/0412,neurological;general,4.7,+2348031234567,Lagos,Ikeja;Yaba,"
    "home_visit;remote,8,true\n"
)


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    with fresh_database(tmp_path_factory.mktemp("csv")) as database_url:
        yield database_url


def rows(url: str, query: str, **params):
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            return conn.execute(text(query), params).all()
    finally:
        engine.dispose()


def test_the_realistic_registry_imports_completely(tmp_path):
    with fresh_database(tmp_path) as database_url:
        result = run_import(database_url, REGISTRY_CSV)
        assert result.returncode == 0, result.stderr
        assert "created 200, updated 0, rejected 0" in result.stdout
        assert "importing physiotherapists" in result.stderr  # the progress bar
        (count,) = rows(database_url, "SELECT count(*) FROM physiotherapists")[0]
        assert count == 200
        cities = rows(database_url, "SELECT DISTINCT city_key FROM physiotherapists")
        assert {city for (city,) in cities} == {"lagos", "abuja", "port harcourt", "ibadan"}


def test_bad_rows_are_reported_by_line_and_good_rows_are_imported(url, tmp_path: Path):
    path = tmp_path / "mixed.csv"
    path.write_text(
        HEADER
        + GOOD
        + "Bad Rating,LIC-0002,musculoskeletal,7.5,+2348031234568,Abuja,Garki,in_clinic,5,true\n"
        + "Bad Phone,LIC-0003,musculoskeletal,4.0,08031234567,Abuja,Garki,in_clinic,5,true\n"
        + "\n"
        + "Bad Spec,LIC-0004,astrology,4.0,+2348031234569,Abuja,,in_clinic,5,true\n"
        + "Bad Modality,LIC-0005,sports,4.0,+2348031234570,Abuja,,teleport,five,maybe\n"
        + "Dup License,MRTB/PT/2019/0412,sports,4.0,+2348031234571,Abuja,,remote,5,true\n"
        + 'Okon Bassey,LIC-0007,"sports; musculoskeletal",3.5,+2348031234572,PH,GRA,'
        + "in_clinic,0,no\n"
    )
    result = run_import(url, path)
    assert result.returncode == 1
    assert "created 2, updated 0, rejected 5" in result.stdout
    errors = result.stderr
    assert "line 3: rating:" in errors
    assert "line 4: phone: Use E.164" in errors
    assert "line 6: specializations.0:" in errors
    assert "line 7:" in errors and "modalities.0" in errors and "weekly_capacity" in errors
    assert "active" in errors
    assert "line 8: license_number: duplicate of line 2" in errors
    stored = rows(
        url,
        "SELECT license_number, city_key, active, weekly_capacity FROM physiotherapists"
        " ORDER BY license_number",
    )
    assert [tuple(row) for row in stored] == [
        ("LIC-0007", "port harcourt", False, 0),
        ("MRTB/PT/2019/0412", "lagos", True, 8),
    ]


def test_reimport_updates_by_license_number(url, tmp_path: Path):
    path = tmp_path / "update.csv"
    path.write_text(HEADER + GOOD.replace(",4.7,", ",4.9,").replace(",8,true", ",12,false"))
    result = run_import(url, path)
    assert result.returncode == 0, result.stderr
    assert "created 0, updated 1, rejected 0" in result.stdout
    (row,) = rows(
        url,
        "SELECT rating, weekly_capacity, active FROM physiotherapists WHERE license_number = :l",
        l="MRTB/PT/2019/0412",
    )
    assert tuple(row) == (4.9, 12, False)


def test_a_file_without_the_required_columns_is_refused(url, tmp_path: Path):
    path = tmp_path / "wrong.csv"
    path.write_text("name,phone\nA,+2348031234567\n")
    result = run_import(url, path)
    assert result.returncode == 2
    assert "missing columns" in result.stderr
    assert run_import(url, tmp_path / "absent.csv").returncode == 2
