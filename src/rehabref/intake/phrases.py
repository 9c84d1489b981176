"""Every sentence the intake assistant says, in English ("en") and Nigerian Pidgin ("pcm").

Words live here as data so that a translator can review one file and the dialogue engine
(``intake.dialogue``) holds no prose. Patients read these on cheap phones, often by SMS:
every string stays inside the GSM 7-bit alphabet (one non-GSM character, such as a curly
quote or a dash, turns an SMS into UCS-2 and halves its 160-character segment), prompts are
short, and choice titles fit WhatsApp's limits (20 characters for a reply button, 24 for a
list row). ``tests/intake/test_phrases.py`` checks all three.
"""

from __future__ import annotations

from typing import Literal

Language = Literal["en", "pcm"]
LANGUAGES: tuple[Language, ...] = ("en", "pcm")

BUTTON_TITLE_MAX = 20
LIST_ROW_TITLE_MAX = 24

# Sentences, keyed by name; ``{first_name}``-style fields are filled by ``say``.
PHRASES: dict[Language, dict[str, str]] = {
    "en": {
        "greeting": (
            "Hello {first_name}, {referrer_name} referred you to rehabref for physiotherapy. "
            "I am the rehabref assistant: a few quick questions will help us arrange your "
            "care. Which language do you prefer?"
        ),
        "reminder": (
            "Hello {first_name}, your physiotherapy referral from {referrer_name} is waiting "
            "for a few answers. Reply to continue, or ask us to call you."
        ),
        "ask_language": "Which language do you prefer?",
        "ask_consent": (
            "Thank you! We will ask a few quick questions to arrange your physiotherapy. "
            "Only your care team will see your answers. Is that OK?"
        ),
        "ask_care_mode": "How would you like to see your physiotherapist?",
        "ask_area": "Which area do you live in? Please type the name.",
        "ask_area_in_city": "Which area of {city} do you live in? Please type the name.",
        "ask_known_area": "Do you still live in {area}? Tap Yes, or type your area.",
        "known_area_title": "Yes, {area}",
        "ask_area_typed": "OK. Please type the name of your area.",
        "ask_availability": (
            "When are you usually free? Pick one, or type all that fit, like: 1 3"
        ),
        "ask_confirm": (
            "Please check:\nSessions: {care_mode}\nArea: {area}\nFree: {availability}\n"
            "Is this right?"
        ),
        "list_separator": ", ",
        "switched": "OK, English it is.",
        "not_understood": "Sorry, I did not get that.",
        "hint_choice": "Please tap a button or reply with its number.",
        "hint_area": "Please type the name of your area, like: Yaba",
        "hint_availability": "Please reply with one or more numbers, like: 1 3",
        "hint_help": "Reply HELP to talk to a person.",
        "completed": (
            "Thank you, {first_name}! We have your answers. Your care team will contact you "
            "soon to book your first session."
        ),
        "handover": "Thank you. A rehabref coordinator will call you soon.",
        "declined": (
            "No problem, we will not ask you anything more. A rehabref coordinator may call "
            "you to answer any questions."
        ),
        "closed": "Thank you. Your care team will be in touch soon.",
        "list_button": "Choose times",
        # Free slots offered after the intake (``workflows.slot_offers``); one time a line.
        "offer_slots": (
            "Thank you, {first_name}! We have your answers. {physio_name} can see you at:"
        ),
        "offer_slots_again": "Sorry, that time has just been taken. {physio_name} can see you at:",
        "offer_reply_1": "Reply 1, or 0 for other times.",
        "offer_reply_2": "Reply 1 or 2, or 0 for other times.",
        "offer_reply_3": "Reply 1, 2 or 3, or 0 for other times.",
        "offer_none": (
            "Thank you, {first_name}! We have your answers. A rehabref coordinator will call "
            "you soon to book your first visit."
        ),
        "offer_declined": (
            "Thank you. A rehabref coordinator will call you soon to book your visit."
        ),
        "offer_unclear": (
            "Sorry, I did not get that. A rehabref coordinator will call you soon to book "
            "your visit."
        ),
        "offer_expired": (
            "Sorry, those times are no longer held for you. A rehabref coordinator will call "
            "you soon to book your visit."
        ),
        # The web page (intake.dialogue's questions, with what a page needs around them).
        "web_title": "Your physiotherapy questions",
        "web_hello": (
            "Hello {first_name}, {referrer_name} referred you to rehabref for physiotherapy. "
            "A few quick questions will help us arrange your care."
        ),
        "web_ask_availability": "When are you usually free?",
        "web_pick_all": "Choose all that fit.",
        "web_other_area": "Or type another area",
        "web_send": "Next",
        "web_person": "Talk to a person",
        "web_switch": "Read in Pidgin",
        "web_hint_choice": "Please choose one answer.",
        "web_hint_times": "Please choose at least one time.",
        "web_hint_help": 'Or tap "Talk to a person" below.',
        "web_link_used": (
            "You can close this page. This link no longer works, to keep your information private."
        ),
    },
    "pcm": {
        "greeting": (
            "How you dey {first_name}? {referrer_name} send you come rehabref for "
            "physiotherapy. Na me be rehabref assistant: answer small questions make we "
            "arrange your care. Which language you want?"
        ),
        "reminder": (
            "How you dey {first_name}? Your physiotherapy referral from {referrer_name} still "
            "dey wait for your answers. Reply make we continue, or tell us make we call you."
        ),
        "ask_language": "Which language you want?",
        "ask_consent": (
            "Thank you! We go ask you small questions to arrange your physiotherapy. Na only "
            "your care team go see your answers. You gree?"
        ),
        "ask_care_mode": "How you wan see your physiotherapist?",
        "ask_area": "Which area you dey stay? Abeg type the name.",
        "ask_area_in_city": "Which area you dey stay for {city}? Abeg type the name.",
        "ask_known_area": "You still dey stay for {area}? Press Yes, or type your area.",
        "known_area_title": "Yes, {area}",
        "ask_area_typed": "Oya, abeg type the name of your area.",
        "ask_availability": (
            "Wetin be the time wey you dey free? Pick one, or type all wey fit you, like: 1 3"
        ),
        "ask_confirm": (
            "Abeg check am:\nSession: {care_mode}\nArea: {area}\nFree time: {availability}\n"
            "E correct?"
        ),
        "list_separator": ", ",
        "switched": "Oya, we go yarn Pidgin.",
        "not_understood": "Sorry, I no understand.",
        "hint_choice": "Abeg press one button or reply the number.",
        "hint_area": "Abeg type the name of your area, like: Yaba",
        "hint_availability": "Abeg reply one or more numbers, like: 1 3",
        "hint_help": "Reply HELP make person call you.",
        "completed": (
            "Thank you, {first_name}! We don get your answers. Your care team go call you "
            "soon to book your first session."
        ),
        "handover": "Thank you. One rehabref coordinator go call you soon.",
        "declined": (
            "No wahala, we no go ask you anything again. One rehabref coordinator fit call "
            "you to answer any question wey you get."
        ),
        "closed": "Thank you. Your care team go reach you soon.",
        "list_button": "Pick time",
        "offer_slots": (
            "Thank you, {first_name}! We don get your answers. {physio_name} fit see you for:"
        ),
        "offer_slots_again": (
            "Sorry, person don take that time already. {physio_name} fit see you for:"
        ),
        "offer_reply_1": "Reply 1. If e no fit you, reply 0.",
        "offer_reply_2": "Reply 1 or 2. If none fit you, reply 0.",
        "offer_reply_3": "Reply 1, 2 or 3. If none fit you, reply 0.",
        "offer_none": (
            "Thank you, {first_name}! We don get your answers. One rehabref coordinator go "
            "call you soon to book your first visit."
        ),
        "offer_declined": (
            "Thank you. One rehabref coordinator go call you soon to book your visit."
        ),
        "offer_unclear": (
            "Sorry, I no understand. One rehabref coordinator go call you soon to book your visit."
        ),
        "offer_expired": (
            "Sorry, we no fit hold those times for you again. One rehabref coordinator go "
            "call you soon to book your visit."
        ),
        "web_title": "Questions for your physiotherapy",
        "web_hello": (
            "How you dey {first_name}? {referrer_name} send you come rehabref for "
            "physiotherapy. Answer small questions make we arrange your care."
        ),
        "web_ask_availability": "Wetin be the time wey you dey free?",
        "web_pick_all": "Pick all wey fit you.",
        "web_other_area": "Or type the area wey you dey now",
        "web_send": "Go next",
        "web_person": "I wan talk to person",
        "web_switch": "Read am for English",
        "web_hint_choice": "Abeg pick one answer.",
        "web_hint_times": "Abeg pick at least one time.",
        "web_hint_help": 'Or press "I wan talk to person" for down.',
        "web_link_used": (
            "You fit close this page. This link no go work again, to keep your information private."
        ),
    },
}

# What a choice shows, keyed by its id (the id comes back when the patient taps it).
TITLES: dict[Language, dict[str, str]] = {
    "en": {
        "lang:en": "English",
        "lang:pcm": "Pidgin",
        "consent:yes": "Yes, continue",
        "consent:no": "No, thanks",
        "mode:home_visit": "At home",
        "mode:in_clinic": "At a clinic",
        "mode:remote": "Video call",
        "area:other": "Another area",
        "slot:weekday_mornings": "Weekday mornings",
        "slot:weekday_afternoons": "Weekday afternoons",
        "slot:weekday_evenings": "Weekday evenings",
        "slot:weekends": "Weekends",
        "confirm:yes": "Confirm",
        "confirm:change": "Change",
        "resume": "Continue",
        "handover": "Call me",
    },
    "pcm": {
        "lang:en": "English",
        "lang:pcm": "Pidgin",
        "consent:yes": "Yes, I gree",
        "consent:no": "No, I no gree",
        "mode:home_visit": "For my house",
        "mode:in_clinic": "For clinic",
        "mode:remote": "Video call",
        "area:other": "Another area",
        "slot:weekday_mornings": "Weekday morning",
        "slot:weekday_afternoons": "Weekday afternoon",
        "slot:weekday_evenings": "Weekday evening",
        "slot:weekends": "Weekend",
        "confirm:yes": "E correct",
        "confirm:change": "Change am",
        "resume": "Make we continue",
        "handover": "Call me",
    },
}

# Shown under a list row (WhatsApp) only.
DESCRIPTIONS: dict[Language, dict[str, str]] = {
    "en": {
        "slot:weekday_mornings": "Mon-Fri, 8am-12pm",
        "slot:weekday_afternoons": "Mon-Fri, 12pm-4pm",
        "slot:weekday_evenings": "Mon-Fri, 4pm-8pm",
        "slot:weekends": "Saturday and Sunday",
    },
    "pcm": {
        "slot:weekday_mornings": "Monday-Friday, 8am-12pm",
        "slot:weekday_afternoons": "Monday-Friday, 12pm-4pm",
        "slot:weekday_evenings": "Monday-Friday, 4pm-8pm",
        "slot:weekends": "Saturday and Sunday",
    },
}


def say(language: Language, name: str, **fields: str) -> str:
    """The phrase ``name`` in ``language`` with its fields filled in."""
    return PHRASES[language][name].format(**fields)


def title(language: Language, choice_id: str) -> str:
    return TITLES[language][choice_id]


def description(language: Language, choice_id: str) -> str:
    return DESCRIPTIONS[language].get(choice_id, "")


def fit_title(text: str, limit: int = BUTTON_TITLE_MAX) -> str:
    """``text`` cut to ``limit`` characters (".." marks the cut; GSM-safe, unlike an ellipsis)."""
    return text if len(text) <= limit else text[: limit - 2].rstrip() + ".."
