"""The assistant's words: both languages complete, SMS-safe, and choice titles within
WhatsApp's limits."""

from __future__ import annotations

import string

import pytest

from rehabref.channels.content import plain_text
from rehabref.intake.dialogue import STEPS, Context, State, prompt
from rehabref.intake.phrases import (
    BUTTON_TITLE_MAX,
    DESCRIPTIONS,
    LANGUAGES,
    LIST_ROW_TITLE_MAX,
    PHRASES,
    TITLES,
    fit_title,
    say,
)

# The GSM 03.38 basic character set (what a 160-character SMS segment can carry).
GSM_7 = set(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
FIELDS = {
    "first_name": "Oluwaseun",
    "referrer_name": "Lagos University Teaching Hospital",
    "city": "Port Harcourt",
    "area": "Victoria Island",
    "care_mode": "At a clinic",
    "availability": "Weekday mornings, Weekday afternoons, Weekday evenings, Weekends",
    "physio_name": "Oluwakemi Adebayo-Williams",
}


def all_strings():
    for language in LANGUAGES:
        for name in PHRASES[language]:
            yield f"{language}:{name}", say(language, name, **FIELDS)
        for table_name, table in (("title", TITLES), ("description", DESCRIPTIONS)):
            for choice_id, text in table[language].items():
                yield f"{language}:{table_name}:{choice_id}", text


def test_both_languages_say_the_same_things():
    assert PHRASES["en"].keys() == PHRASES["pcm"].keys()
    assert TITLES["en"].keys() == TITLES["pcm"].keys()
    assert DESCRIPTIONS["en"].keys() == DESCRIPTIONS["pcm"].keys()


def test_pidgin_is_written_in_pidgin_not_copied_from_english():
    same = {name for name in PHRASES["en"] if PHRASES["en"][name] == PHRASES["pcm"][name]}
    assert same <= {"known_area_title", "list_separator"}
    assert PHRASES["pcm"]["greeting"].startswith("How you dey {first_name}?")
    assert "Which area you dey stay" in PHRASES["pcm"]["ask_area"]
    assert "Abeg" in PHRASES["pcm"]["hint_choice"]
    assert PHRASES["pcm"]["ask_availability"].startswith("Wetin be the time")


def test_every_string_stays_in_the_gsm_alphabet():
    outside = {where: sorted(set(text) - GSM_7) for where, text in all_strings()}
    assert {where: chars for where, chars in outside.items() if chars} == {}
    assert len(outside) == sum(
        len(t[lang]) for t in (PHRASES, TITLES, DESCRIPTIONS) for lang in LANGUAGES
    )
    # What the check is for: typographic quotes, dashes and ellipses are not GSM.
    assert not {"\u2019", "\u2013", "\u2026"} & GSM_7


@pytest.mark.parametrize("language", LANGUAGES)
def test_button_titles_fit_20_and_list_rows_24_characters(language):
    for choice_id, text in TITLES[language].items():
        limit = LIST_ROW_TITLE_MAX if choice_id.startswith("slot:") else BUTTON_TITLE_MAX
        assert 0 < len(text) <= limit, (choice_id, text)
    for text in DESCRIPTIONS[language].values():
        assert len(text) <= 72  # WhatsApp list row description
    assert len(PHRASES[language]["list_button"]) <= BUTTON_TITLE_MAX


def test_a_long_area_is_cut_to_fit_a_button():
    long = say("en", "known_area_title", area="Ikeja Government Reserved Area")
    assert fit_title(long) == "Yes, Ikeja Governm.."
    assert len(fit_title(long)) == BUTTON_TITLE_MAX
    assert fit_title("Yes, Surulere") == "Yes, Surulere"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_phrase_fills_its_fields(language):
    for name in PHRASES[language]:
        text = say(language, name, **FIELDS)
        assert "{" not in text and "}" not in text, name


@pytest.mark.parametrize("language", LANGUAGES)
def test_questions_fit_one_sms_and_whole_prompts_two(language):
    ctx = Context("Oluwaseun", "Lagos University Teaching Hospital", city="Port Harcourt")
    state = State(
        language=language,
        care_mode="in_clinic",
        area="Victoria Island",
        availability=("weekday_mornings", "weekday_evenings", "weekends"),
    )
    for step in STEPS:
        reply = prompt(State(**{**state.__dict__, "step": step}), ctx)
        if step != "confirm":  # the summary repeats the answers back
            assert len(reply.text) <= 160, (step, len(reply.text))
        assert len(plain_text(reply)) <= 306, (step, len(plain_text(reply)))


def test_titles_are_letters_not_markup():
    allowed = set(string.ascii_letters + string.digits + " ,-&")
    for language in LANGUAGES:
        for text in TITLES[language].values():
            assert set(text) <= allowed, text
