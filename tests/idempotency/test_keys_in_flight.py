"""A key is held by one request of its owner at a time, in one process."""

from __future__ import annotations

import pytest

from rehabref.errors import ApiError
from rehabref.idempotency.in_flight import KeysInFlight
from rehabref.idempotency.service import KeyOwner

PARTNER = KeyOwner("ptn_1", "test")


def test_a_second_claim_of_a_held_key_is_409_in_flight() -> None:
    keys = KeysInFlight()
    with keys.claim(PARTNER, "k1"), pytest.raises(ApiError) as refused, keys.claim(PARTNER, "k1"):
        pass
    assert (refused.value.status, refused.value.code) == (409, "idempotency_in_flight")


def test_keys_are_held_per_owner_and_environment_and_released_after_the_block() -> None:
    keys = KeysInFlight()
    with keys.claim(PARTNER, "k1"):
        with (
            keys.claim(KeyOwner("ptn_1", "live"), "k1"),
            keys.claim(KeyOwner("ptn_2", "test"), "k1"),
        ):
            pass
        with keys.claim(KeyOwner.operator("opr_1"), "k1"):
            pass
    with keys.claim(PARTNER, "k1"):
        pass


def test_two_flows_do_not_share_their_keys() -> None:
    first, second = KeysInFlight(), KeysInFlight()
    with first.claim(PARTNER, "k1"), second.claim(PARTNER, "k1"):
        pass
