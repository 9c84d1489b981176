"""iCalendar text rules (RFC 5545): escaping and folding long lines."""

from __future__ import annotations

from rehabref.care.ical_text import escape, fold


def test_text_is_escaped():
    assert escape("a,b;c\\d\ne") == "a\\,b\\;c\\\\d\\ne"


def test_long_lines_fold_at_75_octets_without_splitting_characters():
    line = "SUMMARY:" + "Ọlá " * 40
    folded = fold(line)
    parts = folded.split("\r\n ")
    assert all(len(part.encode()) <= 75 for part in parts)
    assert "".join(parts) == line
    assert fold("SHORT:line") == "SHORT:line"
