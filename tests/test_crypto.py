"""The key ring, sealing and blind indexes (rehabref.crypto), and where the ring comes from
(rehabref.instance_secret, rehabref.config)."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rehabref.config import ConfigError, default_key_file, load_settings
from rehabref.crypto import (
    KeyRing,
    KeyRingError,
    SealedValueError,
    blind_index,
    blind_indexes,
    new_key,
    open_sealed,
    parse_key_ring,
    seal,
)
from rehabref.instance_secret import SecretBox, adopt_legacy_secret, load_key_ring

OLD, NEW = new_key(), new_key()


def ring(*keys: tuple[str, str]) -> KeyRing:
    return parse_key_ring(",".join(f"{key_id}:{key}" for key_id, key in keys))


@given(plaintext=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=500))
def test_sealed_text_opens_to_itself_and_does_not_contain_it(plaintext):
    keys = ring(("k1", OLD))
    sealed = seal(keys, "referral.patient", plaintext)
    assert open_sealed(keys, "referral.patient", sealed) == plaintext
    assert sealed.startswith("s1.k1.")
    if len(plaintext) >= 4:
        assert plaintext not in sealed


def test_the_same_text_seals_differently_each_time():
    keys = ring(("k1", OLD))
    assert seal(keys, "p", "+2348031234567") != seal(keys, "p", "+2348031234567")


def test_a_value_sealed_for_one_purpose_does_not_open_as_another():
    keys = ring(("k1", OLD))
    with pytest.raises(SealedValueError):
        open_sealed(keys, "session.notes", seal(keys, "referral.patient", "Amaka"))


@pytest.mark.parametrize("damage", ["flip", "truncate", "unknown key", "plain"])
def test_altered_or_foreign_values_do_not_open(damage):
    keys = ring(("k1", OLD))
    sealed = seal(keys, "p", "Lower back pain")
    if damage == "flip":
        body = base64.urlsafe_b64decode(sealed[6:] + "==")
        altered = bytes([body[0]]) + bytes([body[1] ^ 1]) + body[2:]
        sealed = "s1.k1." + base64.urlsafe_b64encode(altered).decode().rstrip("=")
    elif damage == "truncate":
        sealed = sealed[:-4]
    elif damage == "unknown key":
        sealed = sealed.replace("s1.k1.", "s1.k9.")
    else:
        sealed = "Lower back pain"
    with pytest.raises(SealedValueError):
        open_sealed(keys, "p", sealed)


def test_after_a_rotation_the_new_key_seals_and_the_old_values_still_open():
    before = ring(("k1", OLD))
    sealed_before = seal(before, "p", "Amaka")
    after = ring(("k1", OLD), ("k2", NEW))
    assert open_sealed(after, "p", sealed_before) == "Amaka"
    sealed_after = seal(after, "p", "Amaka")
    assert sealed_after.startswith("s1.k2.")
    with pytest.raises(SealedValueError):
        open_sealed(before, "p", sealed_after)


def test_blind_indexes_are_keyed_normalised_and_listed_under_every_key():
    keys = ring(("k1", OLD))
    assert blind_index(keys, "email", " Amaka@Example.com ") == blind_index(
        keys, "email", "amaka@example.com"
    )
    assert blind_index(keys, "email", "amaka@example.com") != blind_index(
        ring(("k1", NEW)), "email", "amaka@example.com"
    )
    assert blind_index(keys, "phone", "+2348031234567") != blind_index(
        keys, "email", "+2348031234567"
    )
    rotated = ring(("k1", OLD), ("k2", NEW))
    assert blind_indexes(rotated, "phone", "+2348031234567") == [
        blind_index(keys, "phone", "+2348031234567"),
        blind_index(ring(("k2", NEW)), "phone", "+2348031234567"),
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "no key"),
        ("k1:short", "shorter than"),
        (f"k1:{OLD},k1:{NEW}", "twice"),
        (f"bad id!:{OLD}", "id:key"),
        (f"k1:{OLD},{NEW}", "id:key"),
    ],
    ids=["empty", "short", "twice", "bad-id", "missing-id"],  # the keys are random per run
)
def test_unusable_rings_are_refused_without_echoing_the_key(text, problem):
    with pytest.raises(KeyRingError, match=problem) as refused:
        parse_key_ring(text)
    assert OLD not in str(refused.value)


def test_a_ring_text_lists_keys_oldest_first_with_comments_and_new_lines():
    keys = parse_key_ring(f"# rotated 2026-11\nk1:{OLD}\n\nk2:{NEW}\n")
    assert [key_id for key_id, _ in keys.keys] == ["k1", "k2"]
    assert keys.current_id == "k2"


def test_one_bare_secret_is_a_ring_of_one_key_with_its_exact_bytes():
    keys = parse_key_ring("test-secret-key-not-for-production")
    assert keys.keys == (("k0", b"test-secret-key-not-for-production"),)
    box = SecretBox(keys)
    assert box.sign("m") == SecretBox("test-secret-key-not-for-production").sign("m")


def test_a_bad_environment_ring_stops_start_up_naming_the_variable():
    with pytest.raises(ConfigError, match="REHABREF_SECRET_KEY: key 'k1' is shorter"):
        load_settings({"REHABREF_SECRET_KEY": "k1:short"})


def test_the_key_file_defaults_to_beside_a_sqlite_database():
    assert default_key_file("sqlite:////var/lib/rehabref/rehabref.db") == (
        "/var/lib/rehabref/rehabref.key"
    )
    assert default_key_file("postgresql://db/rehabref") == "rehabref.key"
    settings = load_settings({"REHABREF_SECRET_KEY_FILE": "/etc/rehabref/keys"})
    assert settings.secret_key_file == "/etc/rehabref/keys"


def test_the_key_file_is_created_once_private_and_then_reused(tmp_path: Path):
    key_file = tmp_path / "state" / "rehabref.key"
    first = load_key_ring(None, key_file)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    again = load_key_ring(None, key_file)
    assert again.keys == first.keys
    # The environment wins over the file.
    assert load_key_ring(f"k7:{NEW}", key_file).current_id == "k7"


def test_signatures_from_every_key_verify_and_the_newest_signs():
    old_box = SecretBox(ring(("k1", OLD)))
    new_box = SecretBox(ring(("k2", NEW)))
    rotated = SecretBox(ring(("k1", OLD), ("k2", NEW)))
    assert rotated.sign("m") == new_box.sign("m")
    assert rotated.verify("m", old_box.sign("m"))
    assert rotated.verify("m", new_box.sign("m"))
    assert not old_box.verify("m", rotated.sign("m"))
    assert not rotated.verify("m", SecretBox(ring(("k3", new_key()))).sign("m"))
    assert rotated.unseal(old_box.seal("whsec_abc")) == "whsec_abc"


def test_a_secret_from_the_database_moves_into_the_key_file_as_its_oldest_key(tmp_path: Path):
    legacy = "L" * 64
    fresh = tmp_path / "fresh.key"
    adopt_legacy_secret(fresh, legacy)
    adopted = load_key_ring(None, fresh).keys
    assert adopted[0] == ("k0", legacy.encode())
    # A new key signs: every database copy from before the upgrade holds the old one.
    assert [key_id for key_id, _ in adopted] == ["k0", "k1"]
    assert adopted[1][1] != legacy.encode()

    existing = tmp_path / "existing.key"
    existing.write_text(f"k1:{NEW}\n")
    adopt_legacy_secret(existing, legacy)
    keys = load_key_ring(None, existing)
    assert keys.keys == (("k0", legacy.encode()), ("k1", NEW.encode()))
    assert stat.S_IMODE(existing.stat().st_mode) == 0o600
    adopt_legacy_secret(existing, legacy)  # twice changes nothing
    assert load_key_ring(None, existing).keys == keys.keys
    # What the database's secret signed still verifies.
    assert SecretBox(keys).verify("m", SecretBox(legacy).sign("m"))


def test_processes_creating_the_key_file_at_once_all_get_the_same_key(tmp_path: Path):
    from concurrent.futures import ThreadPoolExecutor

    key_file = tmp_path / "race.key"
    with ThreadPoolExecutor(max_workers=16) as pool:
        rings = list(pool.map(lambda _: load_key_ring(None, key_file).keys, range(32)))
    assert len(set(rings)) == 1
    assert [path.name for path in tmp_path.iterdir()] == ["race.key"]


@pytest.mark.parametrize("content", ["", "k1:short\n", "\xff"])
def test_an_unusable_key_file_is_refused_naming_the_file(tmp_path: Path, content: str):
    key_file = tmp_path / "bad.key"
    key_file.write_bytes(content.encode("latin-1"))
    with pytest.raises(KeyRingError, match=r"REHABREF_SECRET_KEY_FILE: .*bad\.key"):
        load_key_ring(None, key_file)
