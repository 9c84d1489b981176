"""Workflows: the cross-domain sequences, each readable in one place.

A workflow runs inside the caller's transaction and composes the referral core, the platform
(outbox, jobs) and the domains (intake, matching, care, eligibility); domains never call each
other. A referral create is planned as rows instead (``create_plan``) and written by the
create store (``create_store``). Only edges (API, pages, console, sandbox, CLI) import this
package.
"""
