"""The intake dialogue engine: every step and branch, typed and tapped, in both languages."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from rehabref.channels.content import plain_text
from rehabref.intake.dialogue import (
    MAX_MISUNDERSTOOD,
    NEXT_STEP,
    STEPS,
    TERMINAL,
    Answer,
    Context,
    State,
    context_for,
    first_contact,
    handover_notice,
    prompt,
    reminder,
    start,
    step,
)
from rehabref.intake.phrases import say
from rehabref.intake.service import AVAILABILITY_SLOTS

CTX = Context("Ada", "Lagos Clinic", city="Lagos")
ASKING = [s for s in STEPS if s not in TERMINAL]
FILLED = {"care_mode": "home_visit", "area": "Surulere", "availability": ("weekends",)}


def typed(text):
    return Answer(text=text)


def tapped(*ids):
    return Answer(choice_ids=ids)


def at(step_name, ctx=CTX, **fields):
    """A state in ``step_name`` with the answers earlier steps would have kept."""
    kept = {**FILLED, **fields} if step_name == "confirm" else fields
    return State(step=step_name, **kept)


def talk(ctx, answers, state=None):
    """Run a conversation; (step, outcome) after each answer, the last turn, the states."""
    state = state or start(ctx)
    trail, turn = [], None
    for answer in answers:
        turn = step(state, ctx, answer if isinstance(answer, Answer) else typed(answer))
        state = turn.state
        trail.append((state.step, turn.outcome))
    return trail, turn


# -- Business-initiated messages ---------------------------------------------------------


def test_first_contact_is_the_approved_template_with_the_link_last():
    message = first_contact(CTX, link="https://rehabref.example/a/tok")
    assert message.name == "rehabref_intake_start" and message.language == "en"
    # The link is the approved template's last variable, added by the renderer from ``link``.
    assert message.parameters == ("Ada", "Lagos Clinic")
    assert [(c.id, c.title) for c in message.quick_replies] == [
        ("lang:en", "English"),
        ("lang:pcm", "Pidgin"),
    ]
    assert message.text.startswith(
        "Hello Ada, Lagos Clinic referred you to rehabref for physiotherapy. "
    )
    assert message.text.endswith("Which language do you prefer?")
    assert message.link == "https://rehabref.example/a/tok"
    assert plain_text(message).endswith("[English]\n[Pidgin]\nhttps://rehabref.example/a/tok")


def test_first_contact_without_a_link_has_two_parameters():
    message = first_contact(CTX, link=None)
    assert message.parameters == ("Ada", "Lagos Clinic") and message.link is None


@pytest.mark.parametrize(
    ("language", "opening", "titles"),
    [
        ("en", "Hello Ada, your physiotherapy referral from Lagos Clinic", ["Continue", "Call me"]),
        ("pcm", "How you dey Ada? Your physiotherapy referral", ["Make we continue", "Call me"]),
    ],
)
def test_the_reminder_speaks_the_patients_language(language, opening, titles):
    message = reminder(CTX, at("area", language=language))
    assert message.name == "rehabref_intake_reminder" and message.language == "en"
    assert message.parameters == ("Ada", "Lagos Clinic")
    assert message.text.startswith(opening)
    assert [c.id for c in message.quick_replies] == ["resume", "handover"]
    assert [c.title for c in message.quick_replies] == titles


def test_handover_notice_in_both_languages():
    assert handover_notice(at("area")).text == (
        "Thank you. A rehabref coordinator will call you soon."
    )
    assert handover_notice(at("area", language="pcm")).text == (
        "Thank you. One rehabref coordinator go call you soon."
    )


# -- Context and state ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("care_mode", "modes"),
    [
        ("remote", ("remote",)),
        ("face_to_face", ("home_visit", "in_clinic")),
        ("either", ("home_visit", "in_clinic", "remote")),
        (None, ("home_visit", "in_clinic", "remote")),
    ],
)
def test_context_for_turns_the_referral_care_mode_into_choices(care_mode, modes):
    ctx = context_for(first_name="Ada", referrer_name="X", referral_care_mode=care_mode)
    assert ctx.allowed_modes == modes


@pytest.mark.parametrize("modes", [(), ("teleport",), ("remote", "house_call")])
def test_a_context_without_valid_modes_is_refused(modes):
    with pytest.raises(ValueError, match="allowed_modes"):
        Context("Ada", "X", modes)


def test_start_is_the_language_step_in_english():
    assert start(CTX) == State(step="language", language="en", reasks=0)


def test_state_round_trips_through_json():
    state = State("confirm", "pcm", "remote", "Yaba", ("weekday_mornings", "weekends"), 2)
    data = state.to_json()
    assert data == {
        "step": "confirm",
        "language": "pcm",
        "care_mode": "remote",
        "area": "Yaba",
        "availability": ["weekday_mornings", "weekends"],
        "reasks": 2,
    }
    assert State.from_json(data) == state


@pytest.mark.parametrize(
    "change",
    [
        {"step": "booked"},
        {"language": "fr"},
        {"care_mode": "face_to_face"},
        {"area": 7},
        {"availability": ["sundays"]},
        {"reasks": -1},
        {"reasks": MAX_MISUNDERSTOOD},
        {"reasks": "1"},
        {"reasks": True},
        {"availability": "weekends"},
        {"availability": [["weekends"]]},
        {"availability": ["weekends", "weekends"]},
        {"step": "area", "care_mode": None},
        {"step": "availability", "area": None},
        {"step": "confirm", "availability": []},
        {"step": "completed", "care_mode": None},
    ],
)
def test_from_json_refuses_what_the_engine_never_writes(change):
    whole = State("language", "en", "remote", "Yaba", ("weekends",)).to_json()
    assert State.from_json({**whole, "step": "completed"}).step == "completed"
    with pytest.raises(ValueError, match="not an intake dialogue state"):
        State.from_json({**whole, **change})


def test_the_steps_are_a_table():
    assert NEXT_STEP == {
        "language": "consent",
        "consent": "care_mode",
        "care_mode": "area",
        "area": "availability",
        "availability": "confirm",
        "confirm": "completed",
    }


# -- Language ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "language"),
    [
        (typed("1"), "en"),
        (typed("2"), "pcm"),
        (typed("English"), "en"),
        (typed("english please"), "en"),
        (typed("PIDGIN!"), "pcm"),
        (typed("pidgin english"), "pcm"),
        (typed("Broken English"), "pcm"),
        (typed("naija"), "pcm"),
        (tapped("lang:en"), "en"),
        (tapped("lang:pcm"), "pcm"),
        (tapped("resume"), "en"),  # the reminder's Continue, before any choice
    ],
)
def test_the_first_answer_picks_the_language_and_engages(answer, language):
    turn = step(start(CTX), CTX, answer)
    assert turn.outcome == "engaged"
    assert turn.state == State(step="consent", language=language)
    assert turn.replies == (prompt(turn.state, CTX),)
    assert turn.replies[0].text == say(language, "ask_consent")


def test_a_first_answer_not_understood_still_engages_but_only_once():
    first = step(start(CTX), CTX, typed("good morning"))
    assert first.outcome == "engaged" and first.state == State(step="language", reasks=1)
    assert first.replies[0].text == (
        "Sorry, I did not get that. Please tap a button or reply with its number.\n"
        "Which language do you prefer?"
    )
    assert [c.id for c in first.replies[0].choices] == ["lang:en", "lang:pcm"]
    second = step(first.state, CTX, typed("2"))
    assert second.outcome is None and second.state == State(step="consent", language="pcm")


@pytest.mark.parametrize("text", ["English or Pidgin?", "3", "yes", ""])
def test_ambiguous_or_unknown_language_answers_are_asked_again(text):
    turn = step(start(CTX), CTX, typed(text))
    assert turn.state.step == "language" and turn.state.reasks == 1


# -- Consent -------------------------------------------------------------------------------

YES = ["yes", "Yes!", "yeah", "ok", "Okay", "sure", "I agree", "yes o", "Na so", "no wahala"]
NO = ["no", "nope", "No o", "I no gree", "i don't agree", "No, thanks"]


@pytest.mark.parametrize(
    "answer",
    [typed(t) for t in [*YES, "1", "Yes, continue", "yes, I gree"]] + [tapped("consent:yes")],
)
def test_consent_given_moves_to_the_care_mode(answer):
    turn = step(at("consent"), CTX, answer)
    assert turn.outcome is None and turn.state == at("care_mode")
    assert [c.id for c in turn.replies[0].choices] == [
        "mode:home_visit",
        "mode:in_clinic",
        "mode:remote",
    ]
    assert [c.title for c in turn.replies[0].choices] == ["At home", "At a clinic", "Video call"]


@pytest.mark.parametrize("language", ["en", "pcm"])
@pytest.mark.parametrize("answer", [typed(t) for t in [*NO, "2"]] + [tapped("consent:no")])
def test_consent_refused_ends_respectfully(answer, language):
    turn = step(at("consent", language=language), CTX, answer)
    assert turn.outcome == "declined"
    assert turn.state == at("declined", language=language)
    assert turn.replies[0].text == say(language, "declined") and not turn.replies[0].choices


@pytest.mark.parametrize("text", ["yes and no", "maybe", "3"])
def test_consent_unclear_is_asked_again(text):
    turn = step(at("consent"), CTX, typed(text))
    assert turn.state == at("consent", reasks=1) and turn.outcome is None


# -- Care mode -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "mode"),
    [
        (typed("home"), "home_visit"),
        (typed("At my house please"), "home_visit"),
        (typed("for my house"), "home_visit"),
        (typed("clinic"), "in_clinic"),
        (typed("the hospital"), "in_clinic"),
        (typed("at a clinic"), "in_clinic"),
        (typed("video"), "remote"),
        (typed("Online"), "remote"),
        (typed("remote"), "remote"),
        (typed("1"), "home_visit"),
        (typed("2"), "in_clinic"),
        (typed("3"), "remote"),
        (tapped("mode:in_clinic"), "in_clinic"),
    ],
)
def test_the_care_mode_is_read_from_words_numbers_and_taps(answer, mode):
    turn = step(at("care_mode"), CTX, answer)
    assert turn.state == at("area", care_mode=mode)
    assert turn.replies[0].text == "Which area of Lagos do you live in? Please type the name."


FACE_TO_FACE = context_for(first_name="Ada", referrer_name="X", referral_care_mode="face_to_face")


@pytest.mark.parametrize("answer", [typed("video"), typed("3"), tapped("mode:remote")])
def test_a_mode_the_referral_does_not_allow_is_not_taken(answer):
    turn = step(at("care_mode"), FACE_TO_FACE, answer)
    assert turn.state == at("care_mode", reasks=1)
    assert [c.id for c in turn.replies[0].choices] == ["mode:home_visit", "mode:in_clinic"]


def test_in_person_is_not_a_request_for_a_person():
    turn = step(at("care_mode"), CTX, typed("in person"))
    assert turn.outcome is None and turn.state == at("care_mode", reasks=1)


def test_the_care_mode_is_skipped_when_only_one_is_allowed():
    remote = context_for(first_name="Ada", referrer_name="X", referral_care_mode="remote")
    turn = step(at("consent"), remote, typed("yes"))
    assert turn.state == at("area", care_mode="remote")
    assert turn.replies[0].text == "Which area do you live in? Please type the name."


# -- Area ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "area"),
    [
        ("Surulere", "Surulere"),
        ("  Lekki   Phase 1 ", "Lekki Phase 1"),
        ("12 Allen Ave, Ikeja", "12 Allen Ave, Ikeja"),
        ("Ọ̀jọ́ta", "Ọ̀jọ́ta"),
        ("GRA Phase 2 (near Rumuola)", "GRA Phase 2 (near Rumuola)"),
        ("x" * 100, "x" * 100),
    ],
)
def test_a_typed_area_is_kept_as_plain_text(text, area):
    turn = step(at("area"), CTX, typed(text))
    assert turn.state == at("availability", area=area)
    assert turn.replies[0].list_button == "Choose times"
    assert [c.id for c in turn.replies[0].choices] == [f"slot:{s}" for s in AVAILABILITY_SLOTS]


@pytest.mark.parametrize(
    "text",
    [None, "", "a", "12", "x" * 101, "=HYPERLINK(1)", "+234", "@home", "Yaba 🏠", "<b>Yaba</b>",
     "yes", "no", "https://evil.example"],
)  # fmt: skip
def test_what_is_not_a_place_name_is_asked_again_with_a_hint(text):
    turn = step(at("area"), CTX, typed(text))
    assert turn.state == at("area", reasks=1)
    assert turn.replies[0].text == (
        "Sorry, I did not get that. Please type the name of your area, like: Yaba\n"
        "Which area of Lagos do you live in? Please type the name."
    )


KNOWN = Context("Ada", "Lagos Clinic", known_area="Surulere", city="Lagos")


def test_a_known_area_is_offered_as_a_button():
    reply = prompt(at("area"), KNOWN)
    assert reply.text == "Do you still live in Surulere? Tap Yes, or type your area."
    assert [(c.id, c.title) for c in reply.choices] == [
        ("area:known", "Yes, Surulere"),
        ("area:other", "Another area"),
    ]


@pytest.mark.parametrize(
    "answer", [tapped("area:known"), typed("1"), typed("yes"), typed("Yes, Surulere"), typed("ok")]
)
def test_the_known_area_is_confirmed_in_one_answer(answer):
    assert step(at("area"), KNOWN, answer).state == at("availability", area="Surulere")


@pytest.mark.parametrize("answer", [tapped("area:other"), typed("2"), typed("no"), typed("No o")])
def test_another_area_asks_for_it_to_be_typed(answer):
    turn = step(at("area", language="pcm"), KNOWN, answer)
    assert turn.state == at("area", language="pcm") and turn.outcome is None
    assert turn.replies[0].text == "Oya, abeg type the name of your area."
    then = step(turn.state, KNOWN, typed("Yaba"))
    assert then.state == at("availability", language="pcm", area="Yaba")


def test_a_new_area_can_be_typed_straight_away():
    assert step(at("area"), KNOWN, typed("Yaba")).state == at("availability", area="Yaba")


# -- Availability --------------------------------------------------------------------------

MORNINGS, AFTERNOONS, EVENINGS, WEEKENDS = AVAILABILITY_SLOTS


@pytest.mark.parametrize(
    ("answer", "slots"),
    [
        (typed("1"), (MORNINGS,)),
        (typed("1 3"), (MORNINGS, EVENINGS)),
        (typed("1,3"), (MORNINGS, EVENINGS)),
        (typed("3 and 1"), (MORNINGS, EVENINGS)),
        (typed("4"), (WEEKENDS,)),
        (typed("weekend"), (WEEKENDS,)),
        (typed("Saturday"), (WEEKENDS,)),
        (typed("mornings and evenings"), (MORNINGS, EVENINGS)),
        (typed("Weekday afternoons"), (AFTERNOONS,)),
        (typed("weekdays"), (MORNINGS, AFTERNOONS, EVENINGS)),
        (typed("anytime"), AVAILABILITY_SLOTS),
        (typed("2, weekend"), (AFTERNOONS, WEEKENDS)),
        (tapped("slot:weekends"), (WEEKENDS,)),
        (tapped("slot:weekends", "slot:weekday_mornings"), (MORNINGS, WEEKENDS)),
        (tapped("slot:weekends", "slot:bogus"), (WEEKENDS,)),
    ],
)
def test_availability_takes_one_or_several_slots(answer, slots):
    turn = step(at("availability", **FILLED | {"availability": ()}), CTX, answer)
    assert turn.state.step == "confirm" and turn.state.availability == slots


@pytest.mark.parametrize("answer", [typed("5"), typed("whenever you like"), typed(""), tapped()])
def test_availability_not_understood(answer):
    turn = step(at("availability"), CTX, answer)
    assert turn.state == at("availability", reasks=1)
    assert turn.replies[0].text.startswith(
        "Sorry, I did not get that. Please reply with one or more numbers, like: 1 3\n"
    )


# -- Confirm -------------------------------------------------------------------------------


def test_the_summary_lists_the_answers():
    state = at("confirm", availability=(MORNINGS, WEEKENDS))
    reply = prompt(state, CTX)
    assert reply.text == (
        "Please check:\nSessions: At home\nArea: Surulere\n"
        "Free: Weekday mornings, Weekends\nIs this right?"
    )
    assert [(c.id, c.title) for c in reply.choices] == [
        ("confirm:yes", "Confirm"),
        ("confirm:change", "Change"),
    ]
    assert prompt(replace(state, language="pcm"), CTX).text == (
        "Abeg check am:\nSession: For my house\nArea: Surulere\n"
        "Free time: Weekday morning, Weekend\nE correct?"
    )


@pytest.mark.parametrize(
    "answer",
    [tapped("confirm:yes"), typed("1"), typed("Confirm"), typed("yes"), typed("E correct")],
)
def test_confirming_completes(answer):
    turn = step(at("confirm"), CTX, answer)
    assert turn.outcome == "completed" and turn.state == at("completed", **FILLED)
    assert turn.replies[0].text == (
        "Thank you, Ada! We have your answers. Your care team will contact you soon to book "
        "your first session."
    )


@pytest.mark.parametrize(
    "answer",
    [tapped("confirm:change"), typed("2"), typed("change"), typed("no"), typed("Change am")],
)
def test_change_goes_back_to_the_care_mode_keeping_language(answer):
    turn = step(at("confirm", language="pcm"), CTX, answer)
    assert turn.outcome is None
    assert turn.state == at("care_mode", language="pcm", **FILLED)
    assert turn.replies[0].text == "How you wan see your physiotherapist?"


def test_change_with_one_mode_goes_back_to_the_area_offering_the_last_one():
    remote = Context("Ada", "X", ("remote",))
    turn = step(at("confirm", care_mode="remote"), remote, typed("change"))
    assert turn.state.step == "area" and turn.state.care_mode == "remote"
    assert [c.title for c in turn.replies[0].choices] == ["Yes, Surulere", "Another area"]


# -- Anywhere: misunderstandings, asking for a person, language, resume --------------------


@pytest.mark.parametrize("step_name", ASKING)
def test_three_misunderstandings_in_a_row_hand_over(step_name):
    gibberish = typed("?!")
    trail, turn = talk(CTX, [gibberish] * MAX_MISUNDERSTOOD, at(step_name))
    assert [s for s, _ in trail] == [step_name, step_name, "handed_over"]
    assert trail[-1][1] == "handover"
    assert turn.replies[0].text == "Thank you. A rehabref coordinator will call you soon."


def test_the_second_miss_says_how_to_reach_a_person_and_an_answer_resets_the_count():
    second = step(at("consent", reasks=1), CTX, typed("hmm"))
    assert second.state.reasks == 2
    assert second.replies[0].text.startswith(
        "Sorry, I did not get that. Please tap a button or reply with its number. "
        "Reply HELP to talk to a person.\n"
    )
    assert step(second.state, CTX, typed("yes")).state == at("care_mode")


@pytest.mark.parametrize("step_name", ASKING)
@pytest.mark.parametrize(
    "answer",
    [typed(t) for t in ["help", "HELP!", "agent", "I want a human", "talk to a person",
                        "coordinator", "Abeg call me", "make person call me"]]
    + [tapped("handover")],
)  # fmt: skip
def test_asking_for_a_person_hands_over_at_every_step(step_name, answer):
    turn = step(at(step_name, language="pcm", reasks=1), CTX, answer)
    assert turn.outcome == "handover"
    assert turn.state == replace(at(step_name, language="pcm"), step="handed_over")
    assert turn.replies == (handover_notice(turn.state),)
    assert turn.replies[0].text == "Thank you. One rehabref coordinator go call you soon."


@pytest.mark.parametrize("step_name", [s for s in ASKING if s != "language"])
def test_naming_a_language_switches_and_asks_again(step_name):
    turn = step(at(step_name, reasks=1), CTX, typed("Pidgin abeg"))
    assert turn.outcome is None and turn.state == at(step_name, language="pcm")
    assert turn.replies[0].text == "Oya, we go yarn Pidgin.\n" + prompt(turn.state, CTX).text
    back = step(turn.state, CTX, tapped("lang:en"))
    assert back.state == at(step_name, language="en")
    assert back.replies[0].text.startswith("OK, English it is.\n")


@pytest.mark.parametrize("step_name", [s for s in ASKING if s != "language"])
def test_the_reminders_continue_asks_the_current_question_again(step_name):
    turn = step(at(step_name, reasks=2), CTX, tapped("resume"))
    assert turn.state == at(step_name) and turn.outcome is None
    assert turn.replies == (prompt(turn.state, CTX),)


@pytest.mark.parametrize("step_name", sorted(TERMINAL))
@pytest.mark.parametrize("answer", [typed("hello?"), typed("help"), tapped("confirm:yes")])
def test_answers_after_the_end_change_nothing(step_name, answer):
    state = at(step_name, language="pcm")
    turn = step(state, CTX, answer)
    assert turn.state == state and turn.outcome is None
    assert [r.text for r in turn.replies] == ["Thank you. Your care team go reach you soon."]


def test_a_very_long_message_is_read_quickly_and_refused_as_an_area():
    turn = step(at("area"), CTX, typed("Ikeja " * 50_000))
    assert turn.state == at("area", reasks=1)


# -- Whole conversations ------------------------------------------------------------------


def test_a_whole_conversation_in_english():
    trail, turn = talk(
        CTX,
        [
            tapped("lang:en"),
            "Yes",
            "hello",  # not understood
            "clinic",
            "Ikeja",
            "1 4",
            "change",
            "video",
            "Yaba",
            tapped("slot:weekday_evenings"),
            tapped("confirm:yes"),
            "thanks!",
        ],
    )
    assert trail == [
        ("consent", "engaged"),
        ("care_mode", None),
        ("care_mode", None),
        ("area", None),
        ("availability", None),
        ("confirm", None),
        ("care_mode", None),
        ("area", None),
        ("availability", None),
        ("confirm", None),
        ("completed", "completed"),
        ("completed", None),
    ]
    assert turn.state == State(
        step="completed", language="en", care_mode="remote", area="Yaba",
        availability=("weekday_evenings",),
    )  # fmt: skip
    assert turn.replies[0].text == "Thank you. Your care team will be in touch soon."


def test_a_whole_conversation_in_pidgin_by_sms():
    ctx = Context("Chidi", "Eko Hospital", known_area="Surulere", city="Lagos")
    state = start(ctx)
    said = []
    for text in ["2", "yes o", "for my house", "1", "weekend", "e correct"]:
        turn = step(state, ctx, typed(text))
        state = turn.state
        said.append((state.step, turn.outcome, plain_text(turn.replies[0])))
    assert said == [
        (
            "consent",
            "engaged",
            "Thank you! We go ask you small questions to arrange your physiotherapy. Na only "
            "your care team go see your answers. You gree?\n1. Yes, I gree\n2. No, I no gree",
        ),
        (
            "care_mode",
            None,
            "How you wan see your physiotherapist?\n1. For my house\n2. For clinic\n3. Video call",
        ),
        (
            "area",
            None,
            "You still dey stay for Surulere? Press Yes, or type your area.\n"
            "1. Yes, Surulere\n2. Another area",
        ),
        (
            "availability",
            None,
            "Wetin be the time wey you dey free? Pick one, or type all wey fit you, like: 1 3\n"
            "1. Weekday morning\n2. Weekday afternoon\n3. Weekday evening\n4. Weekend",
        ),
        (
            "confirm",
            None,
            "Abeg check am:\nSession: For my house\nArea: Surulere\nFree time: Weekend\n"
            "E correct?\n1. E correct\n2. Change am",
        ),
        (
            "completed",
            "completed",
            "Thank you, Chidi! We don get your answers. Your care team go call you soon to "
            "book your first session.",
        ),
    ]
    assert state == State("completed", "pcm", "home_visit", "Surulere", ("weekends",), 0)


def test_a_declined_conversation():
    trail, _ = talk(CTX, ["english", "no", "yes"])
    assert trail == [("consent", "engaged"), ("declined", "declined"), ("declined", None)]


# -- Whatever comes in ---------------------------------------------------------------------

KNOWN_IDS = [
    "lang:en", "lang:pcm", "consent:yes", "consent:no", "mode:home_visit", "mode:in_clinic",
    "mode:remote", "area:known", "area:other", "slot:weekday_mornings", "slot:weekends",
    "confirm:yes", "confirm:change", "resume", "handover",
]  # fmt: skip
answers_strategy = st.builds(
    Answer,
    text=st.none() | st.text(max_size=120) | st.sampled_from(["1", "2 4", "yes", "help", "pidgin"]),
    choice_ids=st.lists(st.sampled_from(KNOWN_IDS) | st.text(max_size=12), max_size=3).map(tuple),
)


def stored_faithfully(state):
    """Whether the engine could have written this state (its earlier answers are there)."""
    try:
        return State.from_json(state.to_json()) == state
    except ValueError:
        return False


states_strategy = st.builds(
    State,
    step=st.sampled_from(STEPS),
    language=st.sampled_from(["en", "pcm"]),
    care_mode=st.none() | st.sampled_from(["home_visit", "in_clinic", "remote"]),
    area=st.none() | st.sampled_from(["Yaba", "Ikeja GRA, off Allen Avenue"]),
    availability=st.lists(st.sampled_from(AVAILABILITY_SLOTS), unique=True).map(tuple),
    reasks=st.integers(0, MAX_MISUNDERSTOOD - 1),
).filter(stored_faithfully)
contexts_strategy = st.builds(
    Context,
    first_name=st.just("Ada"),
    referrer_name=st.just("Lagos Clinic"),
    allowed_modes=st.sampled_from(
        [("remote",), ("home_visit", "in_clinic"), ("home_visit", "in_clinic", "remote")]
    ),
    known_area=st.none() | st.just("Surulere"),
    city=st.none() | st.just("Lagos"),
)


@settings(max_examples=300, deadline=None)
@given(state=states_strategy, ctx=contexts_strategy, answers=st.lists(answers_strategy, max_size=6))
def test_any_answer_gives_a_valid_state_and_something_to_say(state, ctx, answers):
    for answer in answers:
        turn = step(state, ctx, answer)
        state = turn.state
        assert state.step in STEPS and 0 <= state.reasks < MAX_MISUNDERSTOOD
        assert State.from_json(state.to_json()) == state
        assert turn.replies and all(r.text for r in turn.replies)
        assert all(len(c.title) <= 24 for r in turn.replies for c in r.choices)
        assert turn.outcome in (None, "engaged", "completed", "handover", "declined")
        if state.care_mode is not None:
            assert state.care_mode in ("home_visit", "in_clinic", "remote")


# Answers that make sense at each step, mixed with noise, so that whole intakes happen.
SENSIBLE = {
    "language": [typed("1"), typed("pidgin"), tapped("lang:en")],
    "consent": [typed("yes o"), tapped("consent:yes"), typed("2")],
    "care_mode": [typed("1"), typed("video"), typed("clinic"), tapped("mode:home_visit")],
    "area": [typed("Yaba"), typed("1"), typed("no"), tapped("area:known")],
    "availability": [typed("1 3"), typed("weekend"), tapped("slot:weekends")],
    "confirm": [typed("yes"), typed("change"), tapped("confirm:yes")],
}


@settings(max_examples=300, deadline=None)
@given(ctx=contexts_strategy, data=st.data())
def test_from_the_start_an_intake_completes_only_whole_and_allowed(ctx, data):
    state, outcomes = start(ctx), []
    for _ in range(14):
        sensible = SENSIBLE.get(state.step, [typed("hello")])
        answer = data.draw(st.sampled_from(sensible) | answers_strategy)
        turn = step(state, ctx, answer)
        state = turn.state
        outcomes.append(turn.outcome)
    event(f"ended in {state.step}")
    if "completed" in outcomes:
        assert state.step == "completed" and state.care_mode in ctx.allowed_modes
        assert state.area and state.availability
    assert outcomes.count("engaged") <= 1
    assert len([o for o in outcomes if o in ("completed", "handover", "declined")]) <= 1


def test_asking_for_a_person_first_hands_over_without_engaging():
    turn = step(start(CTX), CTX, typed("I need help"))
    assert turn.outcome == "handover" and turn.state == State(step="handed_over")


def test_a_broken_arm_is_not_a_request_for_pidgin():
    turn = step(at("consent"), CTX, typed("my arm is broken"))
    assert turn.state == at("consent", reasks=1)
