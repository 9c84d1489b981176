"""The intake dialogue's values: its steps, what it knows, what it keeps, what comes in
and what goes out (``intake.dialogue`` is the engine that moves between them).

``State`` is all the dialogue remembers between messages; it is stored as JSON
(``to_json``) and read back with ``from_json``, which refuses anything this engine would
not have written, so a tampered or stale row cannot put the dialogue in an impossible step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rehabref.channels.content import Reply
from rehabref.intake.phrases import LANGUAGES, Language
from rehabref.intake.service import AVAILABILITY_SLOTS, CARE_MODES_FOR, INTAKE_CARE_MODES

Step = Literal[
    "language", "consent", "care_mode", "area", "availability", "confirm",
    "completed", "handed_over", "declined",
]  # fmt: skip
STEPS: tuple[Step, ...] = (
    "language", "consent", "care_mode", "area", "availability", "confirm",
    "completed", "handed_over", "declined",
)  # fmt: skip
TERMINAL: frozenset[Step] = frozenset({"completed", "handed_over", "declined"})
Outcome = Literal["engaged", "completed", "handover", "declined"]

# A third answer in a row that is not understood hands the patient to a coordinator.
MAX_MISUNDERSTOOD = 3
# What has been answered by the time the dialogue is in a step: a completed intake always
# carries a care mode, an area and at least one time.
ANSWERED_BEFORE: dict[Step, tuple[str, ...]] = {
    "area": ("care_mode",),
    "availability": ("care_mode", "area"),
    "confirm": ("care_mode", "area", "availability"),
    "completed": ("care_mode", "area", "availability"),
}


@dataclass(frozen=True)
class Context:
    """What the engine knows about the referral (read by the caller, never stored here)."""

    first_name: str
    referrer_name: str
    allowed_modes: tuple[str, ...] = INTAKE_CARE_MODES
    known_area: str | None = None
    city: str | None = None

    def __post_init__(self) -> None:
        if not self.allowed_modes or not set(self.allowed_modes) <= set(INTAKE_CARE_MODES):
            raise ValueError("allowed_modes must be a non-empty subset of INTAKE_CARE_MODES")


def context_for(
    *,
    first_name: str,
    referrer_name: str,
    referral_care_mode: str | None,
    known_area: str | None = None,
    city: str | None = None,
) -> Context:
    """The context of a referral, its care_mode turned into the modes the patient may pick."""
    modes = CARE_MODES_FOR.get(referral_care_mode, INTAKE_CARE_MODES)
    return Context(first_name, referrer_name, modes, known_area, city)


@dataclass(frozen=True)
class State:
    step: Step = "language"
    language: Language = "en"
    care_mode: str | None = None
    area: str | None = None
    availability: tuple[str, ...] = ()
    reasks: int = 0  # answers not understood in a row

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "language": self.language,
            "care_mode": self.care_mode,
            "area": self.area,
            "availability": list(self.availability),
            "reasks": self.reasks,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> State:
        """Raises ValueError on anything this engine would not have written."""
        availability, reasks = data.get("availability", []), data.get("reasks", 0)
        if (
            data.get("step") not in STEPS
            or data.get("language", "en") not in LANGUAGES
            or data.get("care_mode") not in (None, *INTAKE_CARE_MODES)
            or not isinstance(data.get("area"), str | None)
            or not isinstance(availability, list)
            or not all(slot in AVAILABILITY_SLOTS for slot in availability)
            or len(set(availability)) != len(availability)
            or type(reasks) is not int
            or not 0 <= reasks < MAX_MISUNDERSTOOD
            or not all(data.get(field) for field in ANSWERED_BEFORE.get(data["step"], ()))
        ):
            raise ValueError("not an intake dialogue state")
        return cls(
            step=data["step"],
            language=data.get("language", "en"),
            care_mode=data.get("care_mode"),
            area=data.get("area"),
            availability=tuple(availability),
            reasks=reasks,
        )


@dataclass(frozen=True)
class Answer:
    """What the patient sent: typed text and/or the ids of tapped choices."""

    text: str | None = None
    choice_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Turn:
    state: State
    replies: tuple[Reply, ...]
    outcome: Outcome | None = None
