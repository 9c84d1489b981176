"""Domain: the patient's intake (assistant sessions, their tokens and answers, messaging).

May import the platform, the referral core, tables and the kernel; never another domain."""
