"""What the intake assistant shows at each step: the question, its choices, the summary,
and the messages the business starts (the greeting template, the reminder).

Choices carry stable ids (``consent:yes``, ``mode:home_visit``, ``slot:weekends``...) that
come back when tapped; ``intake.dialogue`` reads typed answers against the same choices, so
"2" means the second choice shown here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Literal

from rehabref.channels.content import Choice, Reply, Template
from rehabref.intake.conversation import Context, State, Step
from rehabref.intake.phrases import TITLES, Language, description, fit_title, say, title
from rehabref.intake.service import AVAILABILITY_SLOTS

WHATSAPP_MAX_BUTTONS = 3


def known_area(state: State, ctx: Context) -> str | None:
    # After "Change" the area given before is offered back; else the referral's.
    return state.area or ctx.known_area


CHOICES: dict[Step, Callable[[State, Context], tuple[str, ...]]] = {
    "language": lambda s, c: ("lang:en", "lang:pcm"),
    "consent": lambda s, c: ("consent:yes", "consent:no"),
    "care_mode": lambda s, c: tuple(f"mode:{mode}" for mode in c.allowed_modes),
    "area": lambda s, c: ("area:known", "area:other") if known_area(s, c) else (),
    "availability": lambda s, c: tuple(f"slot:{slot}" for slot in AVAILABILITY_SLOTS),
    "confirm": lambda s, c: ("confirm:yes", "confirm:change"),
}


def titles_for(state: State, ctx: Context) -> dict[str, str]:
    titles = dict(TITLES[state.language])
    known = known_area(state, ctx)
    if known:
        titles["area:known"] = fit_title(say(state.language, "known_area_title", area=known))
    return titles


def _summary(state: State, ctx: Context) -> str:
    titles = titles_for(state, ctx)
    times = say(state.language, "list_separator").join(
        titles[f"slot:{slot}"] for slot in state.availability
    )
    return say(
        state.language,
        "ask_confirm",
        care_mode=titles.get(f"mode:{state.care_mode}", "-"),
        area=state.area or "-",
        availability=times or "-",
    )


def _area_question(state: State, ctx: Context) -> str:
    known = known_area(state, ctx)
    if known:
        return say(state.language, "ask_known_area", area=known)
    if ctx.city:
        return say(state.language, "ask_area_in_city", city=ctx.city)
    return say(state.language, "ask_area")


QUESTION: dict[Step, Callable[[State, Context], str]] = {
    "language": lambda s, c: say(s.language, "ask_language"),
    "consent": lambda s, c: say(s.language, "ask_consent"),
    "care_mode": lambda s, c: say(s.language, "ask_care_mode"),
    "area": _area_question,
    "availability": lambda s, c: say(s.language, "ask_availability"),
    "confirm": _summary,
    "completed": lambda s, c: say(s.language, "completed", first_name=c.first_name),
    "handed_over": lambda s, c: say(s.language, "handover"),
    "declined": lambda s, c: say(s.language, "declined"),
}


def prompt(state: State, ctx: Context) -> Reply:
    """The current step's question with its choices (or, once over, the closing words)."""
    titles = titles_for(state, ctx)
    choice_ids = CHOICES[state.step](state, ctx) if state.step in CHOICES else ()
    choices = tuple(Choice(i, titles[i], description(state.language, i)) for i in choice_ids)
    reply = Reply(text=QUESTION[state.step](state, ctx), choices=choices)
    if len(choices) > WHATSAPP_MAX_BUTTONS:  # shown as a list, opened by this button
        reply = replace(reply, list_button=say(state.language, "list_button"))
    return reply


def first_contact(ctx: Context, *, link: str | None) -> Template:
    """The business-initiated greeting (an approved English WhatsApp template)."""
    fields = {"first_name": ctx.first_name, "referrer_name": ctx.referrer_name}
    return Template(
        name="rehabref_intake_start",
        language="en",
        # The link is the last body variable: the renderer adds it from ``link``.
        parameters=(ctx.first_name, ctx.referrer_name),
        text=say("en", "greeting", **fields),
        quick_replies=(
            Choice("lang:en", title("en", "lang:en")),
            Choice("lang:pcm", title("en", "lang:pcm")),
        ),
        link=link,
    )


def reminder(ctx: Context, state: State) -> Template:
    """The one nudge after ``REMINDER_AFTER`` of silence. WhatsApp has no Pidgin template
    language, so the template is the English one; ``text`` (the SMS body) and the button
    titles follow the patient's language."""
    fields = {"first_name": ctx.first_name, "referrer_name": ctx.referrer_name}
    return Template(
        name="rehabref_intake_reminder",
        language="en",
        parameters=(ctx.first_name, ctx.referrer_name),
        text=say(state.language, "reminder", **fields),
        quick_replies=tuple(Choice(i, title(state.language, i)) for i in ("resume", "handover")),
    )


def handover_notice(state: State) -> Reply:
    return Reply(say(state.language, "handover"))


def slot_offer(
    language: Language,
    *,
    times: Sequence[str],
    physio_name: str,
    first_name: str,
    again: bool = False,
) -> Reply:
    """The free slots offered after the intake (1 to 3 times, as the patient reads them),
    numbered 1..n, answered by number or 0 for other times. Written out as text, the same on
    WhatsApp and SMS, so the numbers read are the numbers shown."""
    if not 1 <= len(times) <= 3:
        raise ValueError("an offer shows one to three times")
    opening = (
        say(language, "offer_slots_again", physio_name=physio_name)
        if again
        else say(language, "offer_slots", physio_name=physio_name, first_name=first_name)
    )
    lines = [f"{number}. {when}" for number, when in enumerate(times, start=1)]
    return Reply("\n".join([opening, *lines, say(language, f"offer_reply_{len(times)}")]))


BookingHandover = Literal["offer_none", "offer_declined", "offer_unclear", "offer_expired"]


def booking_handover(language: Language, why: BookingHandover, *, first_name: str) -> Reply:
    """A coordinator will call to book: no free slot fits, the patient wants other times,
    the answer was not understood, or the offer expired."""
    return Reply(say(language, why, first_name=first_name))
