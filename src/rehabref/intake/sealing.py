"""The assistant conversation's state, sealed at rest.

Threat: a database copy or backup must not reveal a patient's answers (the area they typed,
when they are free, their language). ``intake_conversations.state`` is stored as the JSON of
``intake.dialogue.State.to_json()``, sealed; ``conversation_store`` seals it when writing
and opens it when reading, so the workflows see the plain JSON as before. A state written
before migration 0029 (plain JSON text) is read as it is.
"""

from __future__ import annotations

import json
from typing import Any

from rehabref.crypto import KeyRing, open_stored, seal

STATE = "intake.conversation_state"


def sealed_state(ring: KeyRing, state: dict[str, Any]) -> str:
    return seal(ring, STATE, json.dumps(state, separators=(",", ":")))


def opened_state(ring: KeyRing, stored: str) -> dict[str, Any]:
    """The state's JSON; a row from before 0029 holds the JSON text itself."""
    decoded: dict[str, Any] = json.loads(open_stored(ring, STATE, stored))
    return decoded
