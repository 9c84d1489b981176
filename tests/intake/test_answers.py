"""Reading typed answers: phrases, numbers, titles, place names, requests for a person."""

from __future__ import annotations

import pytest

from rehabref.intake.answers import (
    SLOT_WORDS,
    YES_NO,
    area_text,
    asks_for_person,
    is_only,
    language_asked,
    meanings,
    read_choices,
    read_one,
    words,
)


def test_words_are_lower_case_without_punctuation():
    assert words("Yes o!! I don't KNOW...") == ("yes", "o", "i", "don't", "know")
    assert words(None) == () and words("  ") == ()


@pytest.mark.parametrize(
    ("text", "meaning"),
    [
        ("no wahala", ("yes",)),  # the longer phrase reads "no" first
        ("I no gree", ("no",)),  # ... and "i no gree" is not "gree"
        ("i don't agree", ("no",)),
        ("yes o", ("yes",)),
        ("yes no", ("yes", "no")),
        ("maybe", ()),
    ],
)
def test_longer_phrases_are_read_first(text, meaning):
    assert meanings(words(text), YES_NO) == meaning


def test_is_only_refuses_extra_words():
    assert is_only("Yes o", YES_NO) and is_only("na so", YES_NO)
    assert not is_only("yes Surulere", YES_NO) and not is_only("", YES_NO)


SLOTS = ("slot:a", "slot:b", "slot:c")
TITLES = {"slot:a": "Mornings", "slot:b": "Afternoons", "slot:c": "Weekends"}


def test_numbers_titles_and_words_read_against_the_choices_shown():
    table = {"weekend": ("slot:c",), "night": ("slot:hidden",)}
    read = {"titles": TITLES, "words_table": table, "tapped": (), "choice_ids": SLOTS}
    assert read_choices(text="3 1", **read) == ("slot:c", "slot:a")
    assert read_choices(text="afternoons, weekend", **read) == ("slot:b", "slot:c")
    assert read_choices(text="night", **read) == ()  # not shown, not chosen
    assert read_choices(text="7", **read) == ()
    assert read_one(text="2", **read) == "slot:b"
    assert read_one(text="1 2", **read) is None
    assert read_one(text="2 please", **read) == "slot:b"
    assert read_one(text="2 please", exact=True, **read) is None


def test_taps_win_over_text_and_unknown_taps_are_ignored():
    read = {"titles": TITLES, "words_table": SLOT_WORDS, "choice_ids": SLOTS}
    assert read_choices(text="1", tapped=("slot:c", "slot:x"), **read) == ("slot:c",)
    assert read_choices(text="1", tapped=("slot:x",), **read) == ("slot:a",)


@pytest.mark.parametrize(
    ("text", "area"),
    [
        ("Yaba", "Yaba"),
        (" Lekki\tPhase  1 ", "Lekki Phase 1"),
        ("Mile 12 / Ketu", "Mile 12 / Ketu"),
        ("Ọ̀jọ́ta", "Ọ̀jọ́ta"),
        ("Yaba\n", "Yaba"),
        ("a", None),
        ("99", None),
        ("-Yaba", None),
        ("=SUM(A1)", None),
        ("Yaba <script>", None),
        ("Yaba; DROP", None),
        ("y" * 101, None),
        ("Yaba 😀", None),
        (None, None),
    ],
)
def test_area_text(text, area):
    assert area_text(text) == area


@pytest.mark.parametrize(
    ("text", "tapped", "asks"),
    [
        ("help", (), True),
        ("Please can a person call me", (), True),
        ("Abeg call me", (), True),
        ("in person", (), False),
        ("in person please, at the clinic", (), False),
        ("helpful", (), False),
        (None, ("handover",), True),
        (None, ("resume",), False),
    ],
)
def test_asks_for_person(text, tapped, asks):
    assert asks_for_person(text, tapped) is asks


@pytest.mark.parametrize(
    ("text", "tapped", "language"),
    [
        ("English", (), "en"),
        ("pidgin english", (), "pcm"),
        ("Broken English abeg", (), "pcm"),
        ("English or pidgin?", (), None),
        ("my arm is broken", (), None),
        ("Englishman", (), None),
        (None, ("lang:pcm",), "pcm"),
    ],
)
def test_language_asked(text, tapped, language):
    assert language_asked(text, tapped) == language
