"""result_rows: rows read by attribute, one type per set of columns."""

from __future__ import annotations

from rehabref.result_rows import Record, record_type


def test_record_types_read_columns_by_attribute_and_keep_dict_behaviour():
    make = record_type(["id", "items", "status"])
    record = make({"id": "ref_1", "items": 3, "status": "received"})
    assert (record.id, record.status) == ("ref_1", "received")
    # A column named like a dict method stays a key; the method is not shadowed.
    assert record["items"] == 3 and callable(record.items)
    assert sorted(record.items()) == [("id", "ref_1"), ("items", 3), ("status", "received")]
    assert record == {"id": "ref_1", "items": 3, "status": "received"}
    # Keys added later are still read through Record's own fallback; unknown names fail as
    # attributes do.
    record["added"] = True
    assert record.added is True
    assert not hasattr(record, "missing")
    assert getattr(record, "missing", None) is None
    # One type per set of columns.
    assert record_type(["id", "items", "status"]) is make
    assert record_type(["id"]) is not make


def test_a_plain_record_reads_any_key_by_attribute():
    record = Record({"id": "ref_1"})
    assert record.id == "ref_1"
    assert not hasattr(record, "missing")
