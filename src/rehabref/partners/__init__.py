"""Platform: partners, API keys, authentication and onboarding.

May import the referral core, tables and the kernel; never a domain."""
