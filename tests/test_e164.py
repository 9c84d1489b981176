"""E.164 checking (rehabref.e164): the short path gives exactly the full parse's answers."""

from __future__ import annotations

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rehabref import e164


def outcome(check, value: str) -> str:
    try:
        return "accepted" if check(value) == value else "changed"
    except ValueError as exc:
        return f"refused: {exc}"


def assert_same(value: str) -> None:
    assert outcome(e164.check, value) == outcome(e164._check_by_parsing, value), value


def example_numbers() -> list[str]:
    """Every region's and non-geographic entity's example number of every type, in E.164."""
    found = set()
    for region in phonenumbers.SUPPORTED_REGIONS:
        for kind in range(12):  # every PhoneNumberType with example numbers
            number = phonenumbers.example_number_for_type(region, kind)
            if number is not None:
                found.add(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))
    for code in phonenumbers.COUNTRY_CODES_FOR_NON_GEO_REGIONS:
        number = phonenumbers.example_number_for_non_geo_entity(code)
        if number is not None:
            found.add(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))
    return sorted(found)


EXAMPLES = example_numbers()


def variants(number: str) -> list[str]:
    """The number and near misses: a national prefix or zero after the calling code, a digit
    more or fewer, a digit changed."""
    parsed = phonenumbers.parse(number, None)
    code = str(parsed.country_code)
    national = number[1 + len(code) :]
    out = [number, number[:-1], number + "5", number[:-1] + str((int(number[-1]) + 1) % 10)]
    for inserted in ("0", "1", "8", "00", "01", "9", "15"):
        out.append(f"+{code}{inserted}{national}")
    out.append(f"+{code}{national[1:]}")
    return out


def test_there_are_example_numbers_for_most_calling_codes():
    codes = {phonenumbers.parse(number, None).country_code for number in EXAMPLES}
    assert len(EXAMPLES) > 1000 and len(codes) > 200


def test_every_example_number_and_its_near_misses_get_the_full_parse_answer():
    checked = 0
    for number in EXAMPLES:
        for value in variants(number):
            assert_same(value)
            checked += 1
    assert checked > 10_000


def test_the_short_path_serves_the_common_case():
    # Not taking the short path would still be correct, only slower: pin that it is taken.
    assert e164._build("2348031234567") is not None  # Nigeria, no national prefix in sight
    assert e164._build("14155552671") is not None
    assert e164._build("2340803123456") is None  # leading zero: full path
    assert e164._build("9991234567") is None  # no such calling code: full path


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("+2348031234567", "accepted"),
        ("+447911123456", "accepted"),
        ("+14155552671", "accepted"),
        ("+2348031234", "refused: " + e164.INVALID_MESSAGE),
        ("+999123456789", "refused: " + e164.FORMAT_MESSAGE),
        ("2348031234567", "refused: " + e164.FORMAT_MESSAGE),
        ("+234 803 123 4567", "refused: Use E.164 format without spaces or punctuation: +234..."),
    ],
)
def test_answers_and_messages(value, expected):
    assert outcome(e164.check, value) == expected


calling_codes = st.sampled_from(sorted(phonenumbers.COUNTRY_CODE_TO_REGION_CODE))


@settings(max_examples=3000, deadline=None)
@given(code=calling_codes, national=st.text(alphabet="0123456789", min_size=0, max_size=16))
def test_any_calling_code_and_digits_get_the_full_parse_answer(code, national):
    assert_same(f"+{code}{national}")


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="+0123456789 -()\n\u0661\uff11x#", max_size=20))
def test_any_text_gets_the_full_parse_answer(value):
    assert_same(value)
