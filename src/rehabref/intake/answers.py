"""What a patient's answer means: choice ids, typed numbers, titles and common words.

Patients answer by tapping (a WhatsApp button or list row, a web form: choice ids come
back) or by typing (SMS, or WhatsApp users who ignore the buttons). Typed answers are read
generously in English and Nigerian Pidgin: the number of a choice, its title, or a word
from the tables below ("yes o", "na so", "hospital", "weekend"). An answer that could mean
two different things is not guessed at: the caller asks again. Free text kept for a person
to read (the patient's area) is reduced to plain text, so that nothing in it can act as
markup or a spreadsheet formula where a coordinator later sees it.

Pure functions, no state: ``intake.dialogue`` decides what to do with a meaning.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

# Phrases (lower case, words separated by one space) -> the choice ids they mean. Longer
# phrases are matched first and consume their words, so "no wahala" means yes, not no.
YES_NO: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        (
            "yes",
            "yeah",
            "yea",
            "yep",
            "yup",
            "y",
            "ok",
            "okay",
            "k",
            "sure",
            "agree",
            "i agree",
            "yes o",
            "yes please",
            "na so",
            "e correct",
            "correct",
            "i gree",
            "gree",
            "oya",
            "no wahala",
            "no problem",
            "alright",
            "fine",
            "go ahead",
            "continue",
            "ehen",
            "confirm",
            "right",
            "that's right",
            "true",
        ),
        ("yes",),
    ),
    **dict.fromkeys(
        (
            "no",
            "nope",
            "nah",
            "n",
            "no o",
            "i no gree",
            "no be so",
            "i no agree",
            "i don't agree",
            "i dont agree",
            "i do not agree",
            "disagree",
            "no thanks",
            "no thank you",
            "i refuse",
            "refuse",
            "not ok",
            "not okay",
            "mba",
            "rara",
        ),
        ("no",),
    ),
}

CARE_MODE_WORDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("home", "house", "my house", "at home", "for house", "for my house", "home visit"),
        ("mode:home_visit",),
    ),
    **dict.fromkeys(
        ("clinic", "hospital", "centre", "center", "facility", "for clinic", "at clinic"),
        ("mode:in_clinic",),
    ),
    **dict.fromkeys(
        ("video", "video call", "online", "remote", "virtual", "zoom", "phone", "whatsapp call"),
        ("mode:remote",),
    ),
}

_WEEKDAYS = ("slot:weekday_mornings", "slot:weekday_afternoons", "slot:weekday_evenings")
_ALL_SLOTS = (*_WEEKDAYS, "slot:weekends")
SLOT_WORDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("morning", "mornings", "mornin"), ("slot:weekday_mornings",)),
    **dict.fromkeys(("afternoon", "afternoons", "afternoon time"), ("slot:weekday_afternoons",)),
    **dict.fromkeys(
        ("evening", "evenings", "night", "after work", "evening time"), ("slot:weekday_evenings",)
    ),
    **dict.fromkeys(
        ("weekend", "weekends", "saturday", "saturdays", "sunday", "sundays", "sat", "sun"),
        ("slot:weekends",),
    ),
    **dict.fromkeys(("weekday", "weekdays", "work days", "monday to friday"), _WEEKDAYS),
    **dict.fromkeys(
        ("any time", "anytime", "any day", "all", "all of them", "everytime"), _ALL_SLOTS
    ),
}

# Asking for a person, at any step. "in person" is a way of being seen, not a request.
HANDOVER_WORDS: frozenset[str] = frozenset(
    {
        "agent",
        "help",
        "human",
        "person",
        "coordinator",
        "call me",
        "speak to someone",
        "talk to someone",
        "abeg call me",
        "make person call me",
        "i wan talk to person",
        "helep",
        "operator",
        "customer care",
    }
)
NOT_HANDOVER: tuple[str, ...] = ("in person",)

LANGUAGE_WORDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("english", "eng", "oyinbo"), ("lang:en",)),
    # Longer phrases are read first, so "pidgin english" and "broken english" mean Pidgin.
    **dict.fromkeys(
        ("pidgin", "pidgin english", "broken english", "pijin", "naija"),
        ("lang:pcm",),
    ),
}

AREA_MIN, AREA_MAX = 2, 100
# Letters (any script, with their accents: Yoruba tone marks are combining characters),
# digits, spaces and the punctuation addresses use. It must start with a letter or digit:
# "=", "+", "-" or "@" first would make a spreadsheet formula.
_AREA_PUNCTUATION = frozenset(" ,.'/&()#-")
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


# Only the start of a long message is read: an answer is a few words, and a message of
# many kilobytes must not cost many table scans.
READ_AT_MOST = 500


def words(text: str | None) -> tuple[str, ...]:
    """The text's words, lower case, without punctuation ("Yes o!!" -> ("yes", "o"))."""
    return tuple(_TOKEN.findall((text or "")[:READ_AT_MOST].casefold()))


def _phrase(text: str) -> tuple[str, ...]:
    return words(text)


def _scan(
    tokens: Iterable[str], table: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ids the words mean (in order of first mention, without repeats) and the words
    left unread. Longest phrase first; a word read by one phrase is not read again."""
    remaining: list[str | None] = list(tokens)
    found: list[tuple[int, str]] = []
    for phrase in sorted(table, key=lambda p: -len(_phrase(p))):
        needle = _phrase(phrase)
        for start in range(len(remaining) - len(needle) + 1) if needle else ():
            if tuple(remaining[start : start + len(needle)]) == needle:
                found += [(start, meaning) for meaning in table[phrase]]
                remaining[start : start + len(needle)] = [None] * len(needle)
    ordered = [meaning for _, meaning in sorted(found, key=lambda item: item[0])]
    return tuple(dict.fromkeys(ordered)), tuple(t for t in remaining if t is not None)


def meanings(tokens: Iterable[str], table: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    return _scan(tokens, table)[0]


def is_only(text: str | None, table: Mapping[str, tuple[str, ...]]) -> bool:
    """Whether the text means something in ``table`` and says nothing else ("yes o", but
    not "yes Surulere")."""
    found, left = _scan(words(text), table)
    return bool(found) and not left


def choice_table(
    choice_ids: tuple[str, ...],
    titles: Mapping[str, str],
    words_table: Mapping[str, tuple[str, ...]],
) -> dict[str, tuple[str, ...]]:
    """What may be typed for the choices shown: their numbers (1-based), titles and words
    (words meaning an id that is not shown are dropped, so a hidden option is not chosen)."""
    shown = set(choice_ids)
    table = {
        phrase: kept
        for phrase, ids in words_table.items()
        if (kept := tuple(i for i in ids if i in shown))
    }
    for number, choice_id in enumerate(choice_ids, start=1):
        table[str(number)] = (choice_id,)
        table[" ".join(_phrase(titles[choice_id]))] = (choice_id,)
    return table


def read_choices(
    *,
    text: str | None,
    tapped: tuple[str, ...],
    choice_ids: tuple[str, ...],
    titles: Mapping[str, str],
    words_table: Mapping[str, tuple[str, ...]],
) -> tuple[str, ...]:
    """The shown choices an answer picks: tapped ids when any are shown, else typed ones."""
    picked = tuple(dict.fromkeys(i for i in tapped if i in choice_ids))
    if picked:
        return picked
    return meanings(words(text), choice_table(choice_ids, titles, words_table))


def read_one(
    *,
    text: str | None,
    tapped: tuple[str, ...],
    choice_ids: tuple[str, ...],
    titles: Mapping[str, str],
    words_table: Mapping[str, tuple[str, ...]],
    exact: bool = False,
) -> str | None:
    """The one choice an answer picks; None when it picks none or several, or (``exact``)
    when the typed text also says something else."""
    picked = tuple(dict.fromkeys(i for i in tapped if i in choice_ids))
    if not picked:
        picked, left = _scan(words(text), choice_table(choice_ids, titles, words_table))
        if exact and left:
            return None
    return picked[0] if len(picked) == 1 else None


def _in_place_name(ch: str) -> bool:
    return ch.isalnum() or ch in _AREA_PUNCTUATION or unicodedata.category(ch) == "Mn"


def area_text(text: str | None) -> str | None:
    """The patient's area as plain text (spaces collapsed), or None when it is not a place
    name: too short or long, no letters, or characters no address needs."""
    cleaned = unicodedata.normalize("NFC", " ".join((text or "").split()))
    if not (AREA_MIN <= len(cleaned) <= AREA_MAX) or not cleaned[0].isalnum():
        return None
    if not all(_in_place_name(ch) for ch in cleaned):
        return None
    if sum(ch.isalpha() for ch in cleaned) < AREA_MIN:
        return None
    return cleaned


def asks_for_person(text: str | None, tapped: tuple[str, ...]) -> bool:
    if "handover" in tapped:
        return True
    cleaned = " ".join(words(text))
    for phrase in NOT_HANDOVER:
        cleaned = re.sub(rf"\b{re.escape(phrase)}\b", " ", cleaned)
    return bool(meanings(cleaned.split(), dict.fromkeys(HANDOVER_WORDS, ("handover",))))


def language_asked(text: str | None, tapped: tuple[str, ...]) -> str | None:
    """The language an answer names ("en" or "pcm": a tapped language button or the word),
    or None."""
    for choice_id in tapped:
        if choice_id in ("lang:en", "lang:pcm"):
            return choice_id.split(":", 1)[1]
    named = meanings(words(text), LANGUAGE_WORDS)
    if len(named) != 1:
        # "pidgin english" names one language (its longer phrase wins); two separate names
        # ("english or pidgin?") name none.
        return None
    return named[0].split(":", 1)[1]


# A reply to the slots offered after the intake: the number of a time, or 0 (none fits).
# Longer phrases are read first, so "no one fit" means 0, not 1.
OFFER_WORDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("1", "one", "first", "first one", "1st", "number 1", "option 1"), ("1",)),
    **dict.fromkeys(("2", "two", "second", "second one", "2nd", "number 2", "option 2"), ("2",)),
    **dict.fromkeys(("3", "three", "third", "third one", "3rd", "number 3", "option 3"), ("3",)),
    **dict.fromkeys(
        (
            "0",
            "zero",
            "none",
            "none of them",
            "no one fit",
            "none fit",
            "e no fit",
            "other",
            "other times",
            "other time",
            "another time",
            "another day",
            "different time",
            "no",
            "neither",
        ),
        ("0",),
    ),
}


def offered_number(text: str | None, offered: int) -> int | None:
    """Which of ``offered`` numbered times a reply picks (1..offered), 0 for "none of these",
    or None when it names no number, several, or one that was not shown."""
    found, left = _scan(words(text), OFFER_WORDS)
    if len(found) != 1 or any(token.isdigit() for token in left):
        return None
    number = int(found[0])
    return number if number <= offered else None
