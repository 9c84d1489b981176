"""Opaque, time-ordered, prefixed identifiers (rehabref.ids)."""

from __future__ import annotations

import re
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from rehabref import ids
from rehabref.ids import new_id, random_token

ID = re.compile(r"^ref_[0-9a-hjkmnp-tv-z]{26}$")


def test_ids_are_prefixed_crockford_base32():
    for _ in range(200):
        assert ID.match(new_id("ref"))


def test_ids_sort_by_creation_time():
    earlier = new_id("ref", now_ms=1_700_000_000_000)
    later = new_id("ref", now_ms=1_700_000_000_001)
    assert earlier < later
    sequence = [new_id("ref", now_ms=1_700_000_000_000 + step) for step in range(0, 5000, 7)]
    assert sequence == sorted(sequence)


def test_ids_made_in_the_same_millisecond_are_distinct():
    made = {new_id("ref", now_ms=1_700_000_000_000) for _ in range(5000)}
    assert len(made) == 5000


def test_the_time_part_is_the_leading_ten_characters():
    a = new_id("evt", now_ms=1_700_000_000_000)
    b = new_id("evt", now_ms=1_700_000_000_000)
    assert a[:14] == b[:14]  # "evt_" + 10 characters of 48-bit milliseconds
    assert a[14:] != b[14:]


def test_random_tokens_are_url_safe_and_long():
    token = random_token()
    assert re.fullmatch(r"[A-Za-z0-9_\-]{43}", token)
    assert len({random_token() for _ in range(1000)}) == 1000
    assert len(random_token(16)) == 22


def test_ids_of_one_process_strictly_increase_within_a_millisecond():
    # Events written in one transaction (the same millisecond) must keep their order.
    ids = [new_id("evt") for _ in range(100_000)]
    assert len({made[:14] for made in ids}) < len(ids)  # many share a millisecond
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_ids_made_after_ids_of_other_threads_sort_after_them():
    threads = 4
    barrier = threading.Barrier(threads)
    before: list[list[str]] = [[] for _ in range(threads)]
    after: list[list[str]] = [[] for _ in range(threads)]

    def make(n: int) -> None:
        before[n].extend(new_id("evt") for _ in range(5000))
        barrier.wait()  # every id of the first round is made before any of the second
        after[n].extend(new_id("evt") for _ in range(5000))

    workers = [threading.Thread(target=make, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for mine in before + after:
        assert mine == sorted(mine)
    first = [made for mine in before for made in mine]
    second = [made for mine in after for made in mine]
    assert max(first) < min(second)
    assert len(set(first + second)) == len(first + second)


@settings(max_examples=2000)
@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_the_fast_encoding_is_the_plain_base32_of_the_value(value):
    assert ids._encode(value) == ids._base32(value, 26)


def test_ids_made_across_milliseconds_carry_each_ones_time():
    # The time part is cached per millisecond: a new millisecond must not reuse it.
    a = new_id("ref", now_ms=1_700_000_000_000)
    b = new_id("ref", now_ms=1_700_000_000_001)
    c = new_id("ref", now_ms=1_700_000_000_000)
    assert a[:14] == c[:14] != b[:14]
    assert b[:14] == "ref_" + ids._base32(1_700_000_000_001, 10)


def test_a_forked_child_does_not_repeat_the_parents_next_id():
    import os

    new_id("ref")  # the parent's generator now has state the child inherits
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its first id, then leave at once
        os.write(write_end, new_id("ref").encode())
        os._exit(0)
    os.close(write_end)
    child = os.read(read_end, 64).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    parent = new_id("ref")
    # Counter and random bits: equal if the child drew the same random numbers as the parent.
    assert child[14:] != parent[14:]
