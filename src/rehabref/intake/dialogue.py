"""The intake assistant's conversation, one engine for WhatsApp, SMS and the web page.

A patient is taken through: language -> consent -> care mode -> area -> availability ->
confirm -> completed. Where each answer leads, how it is read and how it is kept are
tables (``NEXT_STEP``, ``BRANCHES``, ``AUTO_ANSWER``, ``PARSERS``, ``STORE``); ``step``
applies one answer and returns the new ``State``, the ``Reply`` messages to send and an
outcome for the caller (``engaged``: record assistant.started; ``completed``;
``handover``: a coordinator calls; ``declined``). The engine speaks only in
``channels.content`` values, so it never knows the channel, and it is pure: no I/O, no
clock, nothing kept but what ``State.to_json`` returns.
The values live in ``intake.conversation``, what is shown in ``intake.prompts``, the words
in ``intake.phrases`` and the reading of typed text in ``intake.answers``. A patient who
cannot make themselves understood three times in a row, or who asks for a person, is
handed to a coordinator rather than left in a loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import cast

from rehabref.channels.content import Reply
from rehabref.intake import answers
from rehabref.intake.conversation import (
    MAX_MISUNDERSTOOD,
    STEPS,
    TERMINAL,
    Answer,
    Context,
    Outcome,
    State,
    Step,
    Turn,
    context_for,
)
from rehabref.intake.phrases import Language, say
from rehabref.intake.prompts import (
    CHOICES,
    first_contact,
    handover_notice,
    known_area,
    prompt,
    reminder,
    titles_for,
)

__all__ = [
    "MAX_MISUNDERSTOOD",
    "STEPS",
    "TERMINAL",
    "Answer",
    "Context",
    "Outcome",
    "State",
    "Step",
    "Turn",
    "context_for",
    "first_contact",
    "handover_notice",
    "prompt",
    "reminder",
    "start",
    "step",
]

Parsed = str | tuple[str, ...]

# Silence after which the one reminder goes out (``workflows/conversation.py`` acts on it).
REMINDER_AFTER = timedelta(hours=24)

# Where an understood answer leads, unless BRANCHES says otherwise.
NEXT_STEP: dict[Step, Step] = {
    "language": "consent",
    "consent": "care_mode",
    "care_mode": "area",
    "area": "availability",
    "availability": "confirm",
    "confirm": "completed",
}
# (step, answer) -> (next step, phrase said instead of the next step's question).
BRANCHES: dict[tuple[Step, str], tuple[Step, str | None]] = {
    ("consent", "consent:no"): ("declined", None),
    ("confirm", "confirm:change"): ("care_mode", None),
    ("area", "area:other"): ("area", "ask_area_typed"),
}
OUTCOME_ON_ENTRY: dict[Step, Outcome] = {
    "completed": "completed",
    "handed_over": "handover",
    "declined": "declined",
}
HINT: dict[Step, str] = {
    "language": "hint_choice",
    "consent": "hint_choice",
    "care_mode": "hint_choice",
    "area": "hint_area",
    "availability": "hint_availability",
    "confirm": "hint_choice",
}


def start(ctx: Context) -> State:
    return State()


def _yes_no(yes: str, no: str, **more: str) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {
        phrase: (yes if meaning == ("yes",) else no,) for phrase, meaning in answers.YES_NO.items()
    }
    return table | {phrase: (choice_id,) for phrase, choice_id in more.items()}


WORDS: dict[Step, dict[str, tuple[str, ...]]] = {
    "language": answers.LANGUAGE_WORDS,
    "consent": _yes_no("consent:yes", "consent:no"),
    "care_mode": answers.CARE_MODE_WORDS,
    "area": _yes_no("area:known", "area:other"),
    "availability": answers.SLOT_WORDS,
    "confirm": _yes_no(
        "confirm:yes", "confirm:change", change="confirm:change", edit="confirm:change"
    ),
}


def _read(state: State, ctx: Context, answer: Answer, *, exact: bool = False) -> str | None:
    return answers.read_one(
        text=answer.text,
        tapped=answer.choice_ids,
        choice_ids=CHOICES[state.step](state, ctx),
        titles=titles_for(state, ctx),
        words_table=WORDS[state.step],
        exact=exact,
    )


def _read_language(answer: Answer, state: State, ctx: Context) -> Parsed | None:
    if "resume" in answer.choice_ids:  # the reminder's "Continue": go on as we are
        return f"lang:{state.language}"
    return _read(state, ctx, answer)


def _read_area(answer: Answer, state: State, ctx: Context) -> Parsed | None:
    picked = _read(state, ctx, answer, exact=True) if known_area(state, ctx) else None
    if picked == "area:known":
        return known_area(state, ctx)
    if picked is not None:
        return picked
    typed = answers.area_text(answer.text)
    # A bare "yes" or "no" is not a place name.
    return None if answers.is_only(answer.text, answers.YES_NO) else typed


def _read_availability(answer: Answer, state: State, ctx: Context) -> Parsed | None:
    shown = CHOICES["availability"](state, ctx)
    picked = answers.read_choices(
        text=answer.text,
        tapped=answer.choice_ids,
        choice_ids=shown,
        titles=titles_for(state, ctx),
        words_table=WORDS["availability"],
    )
    return tuple(i for i in shown if i in picked) or None  # kept in the slots' order


PARSERS: dict[Step, Callable[[Answer, State, Context], Parsed | None]] = {
    "language": _read_language,
    "consent": lambda a, s, c: _read(s, c, a),
    "care_mode": lambda a, s, c: _read(s, c, a),
    "area": _read_area,
    "availability": _read_availability,
    "confirm": lambda a, s, c: _read(s, c, a),
}


def _suffix(choice_id: Parsed) -> str:
    return str(choice_id).split(":", 1)[1]


# How an understood answer is kept.
STORE: dict[Step, Callable[[State, Parsed], State]] = {
    "language": lambda s, v: replace(s, language=cast(Language, _suffix(v))),
    "consent": lambda s, v: s,
    "care_mode": lambda s, v: replace(s, care_mode=_suffix(v)),
    "area": lambda s, v: s if v == "area:other" else replace(s, area=str(v)),
    "availability": lambda s, v: replace(s, availability=tuple(map(_suffix, v))),
    "confirm": lambda s, v: s,
}
# Steps answered for the patient when there is nothing to choose.
AUTO_ANSWER: dict[Step, Callable[[State, Context], State | None]] = {
    "care_mode": lambda s, c: (
        replace(s, care_mode=c.allowed_modes[0]) if len(c.allowed_modes) == 1 else None
    ),
}


def _enter(
    state: State,
    ctx: Context,
    target: Step,
    phrase: str | None = None,
    outcome: Outcome | None = None,
) -> Turn:
    while target in AUTO_ANSWER and (answered := AUTO_ANSWER[target](state, ctx)) is not None:
        state, target = answered, NEXT_STEP[target]
    entered = replace(state, step=target)
    reply = Reply(say(entered.language, phrase)) if phrase else prompt(entered, ctx)
    return Turn(entered, (reply,), OUTCOME_ON_ENTRY.get(target, outcome))


def _with_intro(intro: str, reply: Reply) -> Reply:
    return replace(reply, text=f"{intro}\n{reply.text}")


def _not_understood(state: State, ctx: Context, outcome: Outcome | None) -> Turn:
    misses = state.reasks + 1
    if misses >= MAX_MISUNDERSTOOD:
        return _enter(replace(state, reasks=0), ctx, "handed_over")
    again = replace(state, reasks=misses)
    hints = [say(state.language, "not_understood"), say(state.language, HINT[state.step])]
    if misses == MAX_MISUNDERSTOOD - 1:  # the last try: say how to reach a person
        hints.append(say(state.language, "hint_help"))
    return Turn(again, (_with_intro(" ".join(hints), prompt(again, ctx)),), outcome)


def step(state: State, ctx: Context, answer: Answer) -> Turn:
    """Apply one answer: the new state, what to send, and what the caller should record."""
    if state.step in TERMINAL:
        return Turn(state, (Reply(say(state.language, "closed")),))
    # The first answer of all; every answer in the language step moves on, counts as a
    # miss or ends the dialogue, so "no miss yet" means "no answer yet".
    engaged: Outcome | None = "engaged" if state.step == "language" and not state.reasks else None
    if answers.asks_for_person(answer.text, answer.choice_ids):
        return _enter(replace(state, reasks=0), ctx, "handed_over")
    language = answers.language_asked(answer.text, answer.choice_ids)
    if language is not None and state.step != "language":
        switched = replace(state, language=cast(Language, language), reasks=0)
        return Turn(
            switched, (_with_intro(say(switched.language, "switched"), prompt(switched, ctx)),)
        )
    if "resume" in answer.choice_ids and state.step != "language":
        return Turn(replace(state, reasks=0), (prompt(state, ctx),))
    parsed = PARSERS[state.step](answer, state, ctx)
    if parsed is None:
        return _not_understood(state, ctx, engaged)
    kept = STORE[state.step](replace(state, reasks=0), parsed)
    branch = BRANCHES.get((state.step, parsed)) if isinstance(parsed, str) else None
    target, phrase = branch or (NEXT_STEP[state.step], None)
    return _enter(kept, ctx, target, phrase, engaged)
