"""Domain: HMO eligibility (member coverage, pre-authorisation tokens, allowance use).

May import the platform, the referral core, tables and the kernel; never another domain."""
