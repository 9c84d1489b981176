"""Care delivery: therapy sessions, assessments, outcome reports and discharge PDFs."""
