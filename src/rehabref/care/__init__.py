"""Domain: care delivery (therapy sessions, assessments, outcome reports, discharge PDFs).

May import the platform, the referral core, tables and the kernel; never another domain
(cross-domain sequences are in ``rehabref.workflows``)."""
