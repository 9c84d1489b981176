"""Domain: hosted referral links (spec 2.8): codes, counts, resolution.

May import the platform, the referral core, tables and the kernel; never another domain.
The public form itself is an edge (``rehabref.pages``)."""
