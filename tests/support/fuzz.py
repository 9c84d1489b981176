"""Values the fuzz tests mix into queries and forms."""

# Values that broke parsers before: far dates, huge and non-ASCII digits, odd offsets.
TRICKY_VALUES = (
    "9999-12-31",
    "0001-01-01",
    "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00+00:00",
    "2026-02-30",
    "-1",
    "9" * 5000,
    "\u00b2",
    "\u0661\u0662",
    "nan",
    "1e309",
    "%00",
    "\u202e",
)
