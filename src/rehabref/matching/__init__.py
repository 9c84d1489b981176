"""Domain: the physiotherapist registry and matching a referral to one of them.

May import the platform, the referral core, tables and the kernel; never another domain."""
